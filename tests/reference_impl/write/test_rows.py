"""Checkpoint rows (``reference_impl/write/rows.py``): an empty state is typed as the state it stands for.

The incremental writer compares the sidecar schema of :func:`empty_rows` with the base checkpoint's
``sidecarFileSchema`` to decide whether base sidecars can be listed again, and a compatibility
checkpoint's top-level file takes its ``add``/``remove`` types from it: both need the types the
state's own rows have, although :func:`empty_rows` takes them without planning the replay.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from reference_impl.read.snapshot import read_snapshot
from reference_impl.write.options import CheckpointOptions, resolve_plan
from reference_impl.write.rows import empty_rows, state_rows
from tests.reference_impl.write.test_content import build_column_mapped_table


@pytest.mark.spark
@pytest.mark.requirement("CKPT-SIDE-015")
@pytest.mark.parametrize("stats", ["json", "struct", "both"])
def test_empty_rows_have_the_column_types_of_the_state_s_rows(
    spark: SparkSession, tmp_path: Path, stats: str
) -> None:
    """Column mapping, a partition column, statistics as JSON, struct or both: the rows of
    :func:`empty_rows` and of :func:`state_rows` (and their file rows, a sidecar's columns) have one schema.

    Spec: CKPT-SIDE-015
    > All sidecar files that one checkpoint references SHOULD have the same Parquet schema, equal to
    > `checkpointMetadata.tags.sidecarFileSchema` when the writer records it.
    """
    table = build_column_mapped_table(tmp_path / "table")
    snap = read_snapshot(spark, table)
    plan = resolve_plan(CheckpointOptions(spec="v1", stats=stats), snap)
    empty = empty_rows(spark, snap, plan)
    state = state_rows(spark, snap, plan, count=False)
    assert empty.rows.schema == state.rows.schema, (
        f"{table} ({stats}): empty rows {empty.rows.schema.simpleString()}, "
        f"state rows {state.rows.schema.simpleString()}"
    )
    assert empty.file_rows().schema == state.file_rows().schema, f"{table} ({stats}): file rows differ"
