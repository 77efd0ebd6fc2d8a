"""Fixtures of the reader-vs-oracle tests: tables built once per session by the real writers.

``tables.get(shape)`` builds a shape (see :mod:`conformance.tables.real_writers`) the first time a test asks for
it and returns the same :class:`~conformance.tables.real_writers.BuiltTable` afterwards; tests never modify it —
they copy it with :func:`copy_table` into their own ``tmp_path`` first. Running a subset of the
tests therefore only builds the shapes that subset needs.

Tests that use delta-spark request the ``delta_spark`` fixture (which skips loudly, or fails under
``CI=true``, when the jars are missing) before they call ``tables.get``; deltalake-built shapes need
the ``deltalake`` fixture too.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.tables.real_writers import BuiltTable, TableCache, shared_cache

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> TableCache:
    """The session's table cache (building needs delta-spark: request ``delta_spark`` first)."""
    return shared_cache(spark, lambda: tmp_path_factory.mktemp("built-tables"))


def copy_table(built: BuiltTable, tmp_path: Path, name: str = "table") -> Path:
    """A private copy of a built table that the test may mutate."""
    target = tmp_path / name
    shutil.copytree(built.path, target)
    return target


@pytest.fixture
def copy_of(tables: TableCache, tmp_path: Path) -> Callable[[str], tuple[BuiltTable, Path]]:
    """``copy_of(shape)`` → ``(built table, path of a private copy)``."""

    def make(shape: str) -> tuple[BuiltTable, Path]:
        built = tables.get(shape)
        return built, copy_table(built, tmp_path, shape)

    return make
