"""Fixtures of the writer tests: shapes built once per session, and their state before any checkpoint.

``shapes.get(name, variant)`` builds a shape (see :mod:`tests.writer.builders`) the first time a
test asks for it and returns the same :class:`~tests.writer.builders.Shape` afterwards, with
delta-spark's ``TableState`` of it (``shapes.state_before``) and its row count through
``spark.read.format("delta")`` (``shapes.rows_before``). Tests never modify a built shape: they
copy it with ``shapes.copy(...)`` into their own ``tmp_path`` first.

Requirement markers of the tests in this directory are checked at collection: an ID that is not
in ``spec/requirements.json`` stops the run.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.oracles.delta_spark import delta_spark_state
from conformance.oracles.session import has_delta_classes
from spec.table_state import TableState
from tests.writer.builders import SPARK_BUILDERS, Shape, build_files_10k, enable_v2

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE.parent.parent / "spec" / "requirements.json"


def known_requirement_ids() -> set[str]:
    return {entry["id"] for entry in json.loads(REQUIREMENTS.read_text())["requirements"]}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = known_requirement_ids()
    for item in items:
        if HERE not in Path(str(item.fspath)).resolve().parents:
            continue
        for marker in item.iter_markers("requirement"):
            unknown = [r for r in marker.args if r not in known]
            if unknown:
                raise pytest.UsageError(
                    f"{item.nodeid}: requirement ID(s) {unknown} are not in {REQUIREMENTS}"
                )


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
        message = "delta-spark is unavailable: the session has no delta-spark classes"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{message} (CI=true: a missing oracle is a failure, not a skip)", pytrace=False)
        pytest.skip(f"SKIPPED LOUDLY — {message}")
    return spark


@pytest.fixture(scope="session")
def shapes(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> ShapeCache:
    """The session's shape cache (building needs delta-spark: request ``delta_spark`` first)."""
    return ShapeCache(spark, tmp_path_factory.mktemp("writer-shapes"))
