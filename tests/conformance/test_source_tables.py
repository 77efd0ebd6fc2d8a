"""A writer's source table is a copy of the one its process built first (``source_table`` in
``conformance/suite/conftest.py``), so that a shape's log is generated once per variant and not once per
writer profile. The copy must be the table a build at its own path gives: the same files, bytes and
modification times (:func:`conformance.decode.files.digest`) and the same expected state, for every shape
and variant — else a writer would be judged on another table than the one the suite knows.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conformance.decode.files import digest
from conformance.suite.conftest import source_table
from conformance.tables.shapes import BUILDERS, Variant, build_shape


@pytest.mark.parametrize("variant", ["classic", "v2"])
@pytest.mark.parametrize("shape", sorted(BUILDERS))
def test_a_copied_source_table_is_the_table_a_build_gives(
    shape: str, variant: Variant, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Two copies (the first builds the process's table, the second reuses it) against a build at a third
    path: same digest, and the same shape once the path is set aside."""
    built = build_shape(shape, variant, tmp_path / "built" / "table")
    for name in ("first", "second"):
        copy = source_table(shape, variant, tmp_path / name / "table", tmp_path_factory)
        assert copy.path == tmp_path / name / "table", f"{shape}/{variant}: returned {copy.path}"
        assert digest(copy.path) == digest(built.path), (
            f"{shape}/{variant}: {copy.path} does not hold the files of a build, {built.path}"
        )
        assert dataclasses.replace(copy, path=built.path) == built, (
            f"{shape}/{variant}: {copy.path} is described as another table than {built.path}"
        )


def test_a_copied_source_tables_expected_state_is_its_own(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The expected state a copy carries is not shared with the process's template or other copies: a test
    that changed one writer's ``written.shape.state`` would otherwise change what every later writer of the
    shape is judged against."""
    first = source_table("tombstones", "classic", tmp_path / "first" / "table", tmp_path_factory)
    seen = first.state.files[0]["path"]
    first.state.files[0]["path"] = "changed-by-a-test.parquet"
    first.state.tombstones.clear()
    second = source_table("tombstones", "classic", tmp_path / "second" / "table", tmp_path_factory)
    assert second.state.files[0]["path"] == seen and second.state.tombstones, (
        f"{second.path}: a change to the state of {first.path} reached it: "
        f"first file {second.state.files[0]['path']}, {len(second.state.tombstones)} tombstone(s)"
    )
