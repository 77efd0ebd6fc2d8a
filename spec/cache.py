"""Where the project keeps what it builds or downloads once: one location for every package.

Not a rule of the specification: the one neutral home both ``reference_impl`` (the driver JVM's
class archive, :mod:`reference_impl.storage.class_archive`) and ``conformance`` (delta-spark's
jars, :mod:`conformance.oracles.delta_jars`; the Java programs, :mod:`conformance.java_build`)
may import, as neither may import the other (``tests/test_boundaries.py``).

The cache is ``$DELTA_CKPT_CACHE``, else ``<project>/.cache`` in a source checkout (the directory
holding ``pyproject.toml`` above this package), else ``~/.cache/delta-checkpoint-conformance``.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_CACHE = "DELTA_CKPT_CACHE"


def project_root() -> Path | None:
    """The source checkout this package lives in, if it is one."""
    candidate = Path(__file__).resolve().parents[1]
    return candidate if (candidate / "pyproject.toml").is_file() else None


def cache_dir() -> Path:
    """``$DELTA_CKPT_CACHE``, else ``<project>/.cache`` in a source checkout, else the user's cache."""
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env)
    root = project_root()
    if root is not None:
        return root / ".cache"
    return Path.home() / ".cache" / "delta-checkpoint-conformance"
