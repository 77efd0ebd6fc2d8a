"""Fixtures of the writer tests: shapes built once per session, and their state before any checkpoint.

``shapes.get(name, variant)`` builds a shape (see :mod:`conformance.tables.real_writers`) the first time a
test asks for it and returns the same :class:`~conformance.tables.real_writers.Shape` afterwards, with
delta-spark's ``TableState`` of it (``shapes.state_before``) and its row count through
``spark.read.format("delta")`` (``shapes.rows_before``). Tests never modify a built shape: they
copy it with ``shapes.copy(...)`` into their own ``tmp_path`` first.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.oracles.delta_spark import delta_spark_state
from conformance.oracles.session import has_delta_classes
from conformance.plugin import unavailable
from conformance.tables.real_writers import WRITER_SHAPE_BUILDERS as SPARK_BUILDERS
from conformance.tables.real_writers import Shape, build_files_10k, enable_v2
from spec.requirements import load_requirements
from spec.table_state import TableState

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def known_requirement_ids() -> set[str]:
    return set(load_requirements())


class ShapeCache:
    """Session-wide, lazily built shapes (never modified by tests) and their before-state."""

    def __init__(self, spark: SparkSession, root: Path) -> None:
        self._spark = spark
        self._root = root
        self._built: dict[tuple[str, str], Shape] = {}
        self._states: dict[tuple[str, str], TableState] = {}
        self._rows: dict[tuple[str, str], int] = {}

    def get(self, name: str, variant: str = "classic") -> Shape:
        key = (name, variant)
        if key in self._built:
            return self._built[key]
        path = self._root / f"{name}-{variant}"
        if name == "files_10k":
            built = build_files_10k(path, v2=variant == "v2")
        elif variant == "classic":
            built = SPARK_BUILDERS[name](self._spark, path)
        else:
            built = enable_v2(self._spark, self.get(name, "classic"), path)
        self._built[key] = built
        return built

    def state_before(self, shape: Shape) -> TableState:
        """delta-spark's state of the built (unmodified) shape."""
        key = (shape.name, shape.variant)
        if key not in self._states:
            self._states[key] = delta_spark_state(self._spark, str(shape.path))
        return self._states[key]

    def rows_before(self, shape: Shape) -> int:
        """Rows delta-spark's data source reads from the built shape (deletion vectors applied)."""
        key = (shape.name, shape.variant)
        if key not in self._rows:
            self._rows[key] = self._spark.read.format("delta").load(str(shape.path)).count()
        return self._rows[key]

    @staticmethod
    def copy(shape: Shape, target: Path) -> Path:
        shutil.copytree(shape.path, target)
        return target


@pytest.fixture(scope="session")
def delta_spark_session(spark: SparkSession) -> SparkSession:
    """``delta_spark`` for fixtures wider than a function: skips loudly (fails under ``CI=true``) without the jars."""
    if not has_delta_classes(spark):
        unavailable("delta-spark", "the session has no delta-spark classes")
    return spark


@pytest.fixture(scope="session")
def shapes(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> ShapeCache:
    """The session's shape cache (building needs delta-spark: request ``delta_spark`` first)."""
    return ShapeCache(spark, tmp_path_factory.mktemp("writer-shapes"))


@pytest.fixture
def s3_spark(delta_spark: SparkSession) -> SparkSession:
    """The session, which must have Hadoop's S3A connector (skipped loudly without it; a failure under CI=true)."""
    jvm = delta_spark.sparkContext._jvm
    assert jvm is not None
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(
            "s3a", delta_spark.sparkContext._jsc.hadoopConfiguration()
        )
    except Exception as exc:
        unavailable("Hadoop's S3A connector", f"not on the test session's classpath ({type(exc).__name__})")
    return delta_spark
