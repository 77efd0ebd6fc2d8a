"""Every property test draws the same examples on every run: hypothesis is derandomized and keeps no
example database (the ``deterministic`` profile of ``tests/conftest.py``), so a CI run cannot fail on an
example no earlier run drew, nor replay one a local run saved."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from hypothesis.internal.detection import is_hypothesis_test

from tests.support import REPO_ROOT

PROPERTY_MODULES = sorted(
    p.relative_to(REPO_ROOT).as_posix()
    for p in (REPO_ROOT / "tests").rglob("test_*.py")
    if re.search(r"^from hypothesis import", p.read_text(encoding="utf-8"), re.MULTILINE)
)


def test_property_modules_are_found() -> None:
    """The scan sees the property tests it guards (a rename would otherwise make the check vacuous)."""
    assert "tests/reference_impl/read/test_reconcile_property.py" in PROPERTY_MODULES, PROPERTY_MODULES


@pytest.mark.parametrize("relative", PROPERTY_MODULES)
def test_property_tests_are_derandomized(relative: str) -> None:
    """Each hypothesis test of ``relative`` runs derandomized and without an example database."""
    module = importlib.import_module(Path(relative).with_suffix("").as_posix().replace("/", "."))
    tests = [value for value in vars(module).values() if callable(value) and is_hypothesis_test(value)]
    assert tests, f"{relative}: imports hypothesis but has no hypothesis test"
    for test in tests:
        chosen = test._hypothesis_internal_use_settings
        assert chosen.derandomize and chosen.database is None, (
            f"{relative}::{test.__name__}: derandomize={chosen.derandomize}, database={chosen.database!r}"
        )
