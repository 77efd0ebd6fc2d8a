"""When a writer that commits checkpoints on its own (spec §17.1 When to checkpoint).

Our writer makes no commits, so CKPT-WRITE-002 is checked where it applies: on delta-spark, the
auto-checkpointing writer we have, with the interval our :class:`TableProperties` reads from the
table's metadata (10 when the property is unset). If delta-spark and the rule ever disagree, this
test names the versions each expects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from conformance.tables.real_writers import checkpoint_versions, commit_versions
from reference_impl.log.naming import DELTA_LOG
from reference_impl.log.table_properties import TableProperties
from reference_impl.read.snapshot import read_snapshot

LATEST = 11  # one version past 10, so the default interval has exactly one multiple


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-WRITE-002")
@pytest.mark.parametrize("interval", [None, "3"], ids=["unset", "3"])
def test_delta_spark_checkpoints_every_multiple_of_the_interval(
    interval: str | None, delta_spark: SparkSession, tmp_path: Path
) -> None:
    """Versions 0..11 committed one by one by delta-spark: the checkpointed versions are exactly the
    multiples of the interval above 0 (10 with the property unset: only version 10).

    Spec: CKPT-WRITE-002
    "A writer that checkpoints automatically after its own commits SHOULD checkpoint every committed
    version `v > 0` that is a multiple of `delta.checkpointInterval`, using 10 when the property is
    unset."
    """
    table = tmp_path / "table"
    properties = "" if interval is None else f"TBLPROPERTIES ('delta.checkpointInterval' = '{interval}')"
    delta_spark.sql(f"CREATE TABLE delta.`{table}` (id BIGINT) USING delta {properties}")
    for version in range(1, LATEST + 1):
        delta_spark.range(version, version + 1, 1, 1).write.format("delta").mode("append").save(str(table))
    log = table / DELTA_LOG
    assert commit_versions(log) == list(range(LATEST + 1)), f"{log}: commits {commit_versions(log)}"
    configuration = read_snapshot(delta_spark, table).table_state().metadata.get("configuration") or {}
    every = TableProperties(configuration).checkpoint_interval
    assert every == (10 if interval is None else int(interval)), f"{log}: configuration {configuration}"
    expected = [v for v in range(1, LATEST + 1) if v % every == 0]
    assert checkpoint_versions(log) == expected, (
        f"{log}: delta-spark checkpointed versions {checkpoint_versions(log)}, the rule expects {expected} "
        f"(interval {every})"
    )
