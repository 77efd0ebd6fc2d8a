"""A script of the repository (``benchmarks/…``, not a package) loaded as a module, for the tests of its functions."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType


@contextmanager
def loaded_script(path: Path) -> Iterator[ModuleType]:
    """``path`` as a module named after its file, registered in ``sys.modules`` while in use (its dataclasses
    look their module up) and unregistered after."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, f"{path}: not a Python module"
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]
