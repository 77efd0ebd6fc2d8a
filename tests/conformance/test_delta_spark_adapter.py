"""delta-spark as an implementation under test (``conformance/adapters/delta_spark.py``): the rows a read reports.

The row count comes from delta-spark's own scan of the snapshot whose state the read reports
(:func:`conformance.oracles.delta_spark.snapshot_row_count`), not from a second load of the table.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fixtures import FIXTURES_DIR

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: (fixture, version): an old version of a table that grew afterwards (2 rows at version 1, 9 at 9), and a
#: table with deletion vectors.
CASES = (("valid/time_travel_checkpoints", 1), ("valid/deletion_vectors_same_path", 4))


@pytest.mark.spark
@pytest.mark.delta_spark
def test_a_read_counts_the_rows_of_the_version_it_reads(delta_spark: SparkSession, tmp_path: Path) -> None:
    """Each read reports the state and the visible rows of the version asked for, as the fixture expects
    (not the latest version's rows; without the rows the deletion vectors delete)."""
    from conformance.adapters.delta_spark import DeltaSparkImplementation

    impl = DeltaSparkImplementation()
    for path, version in CASES:
        fixture = FIXTURES_DIR / path
        expected = next(
            e
            for e in json.loads((fixture / "fixture.json").read_text())["expectations"]
            if e["version"] == version
        )
        table = tmp_path / path.replace("/", "_") / "table"
        shutil.copytree(fixture / "table", table)
        result = impl.read(table, version=version)
        rows = result.visible_rows()
        assert (result.state.version, rows) == (version, expected["rows"]), (
            f"{table} read at version {version}: version {result.state.version}, {rows} rows; "
            f"fixture.json expects {expected['rows']} rows"
        )
