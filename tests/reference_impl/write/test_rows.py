"""Checkpoint rows (``reference_impl/write/rows.py``): an empty state is typed as the state it stands for.

The incremental writer compares the sidecar schema of :func:`empty_rows` with the base checkpoint's
``sidecarFileSchema`` to decide whether base sidecars can be listed again, and a compatibility
checkpoint's top-level file takes its ``add``/``remove`` types from it: both need the types the
state's own rows have, although :func:`empty_rows` takes them without planning the replay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from reference_impl.log.actions import V1_CHECKPOINT_COLUMNS
from reference_impl.read.snapshot import read_snapshot
from reference_impl.spark.columns import as_nullable, nullable_df
from reference_impl.spark.schemas import single_action_schema
from reference_impl.write.options import CheckpointOptions, resolve_plan
from reference_impl.write.rows import actions_df, empty_rows, state_rows
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


@pytest.mark.spark
@pytest.mark.requirement("CKPT-SCHEMA-003")
def test_nullable_df_casts_only_what_is_not_nullable(spark: SparkSession) -> None:
    """:func:`nullable_df` makes a struct field that is not nullable (a literal's) nullable, and returns an
    all-nullable DataFrame itself: no ``select`` more for Spark to analyse (issue #12: the checkpoint
    rows are shaped nullable already).

    Spec: CKPT-SCHEMA-003
    > A writer SHOULD declare every field of a checkpoint file, at every nesting level, as optional
    > (nullable), except map keys, which Parquet requires to be required.
    """
    from pyspark.sql import functions as F

    required = spark.range(1).select(F.struct(F.lit(1).alias("x")).alias("s"))
    required_type = required.schema["s"].dataType
    assert required_type != as_nullable(required_type), f"the input: {required.schema.simpleString()}"
    cast = nullable_df(required)
    assert cast is not required, "a field that is not nullable was left as it is"
    cast_type = cast.schema["s"].dataType
    assert cast_type == as_nullable(cast_type), f"nullable_df gave {cast.schema.simpleString()}"
    assert nullable_df(cast) is cast, (
        f"an all-nullable DataFrame was selected again: {cast.schema.simpleString()}"
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-CONTENT-001")
def test_actions_df_gives_each_action_back_as_one_row(spark: SparkSession) -> None:
    """:func:`actions_df`: one row per JSON-form action, in their order, the action in its own column and
    every other column null, typed as the single-action schema; no actions: no rows, the same types.

    Spec: CKPT-CONTENT-001
    > A checkpoint named for version `n` MUST describe exactly the table state obtained by reconciling
    > the actions of all commits from version 0 through version `n`.
    """
    actions: list[dict[str, Any]] = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {"metaData": {"id": "m", "format": {"provider": "parquet", "options": {}}, "partitionColumns": []}},
        {"txn": {"appId": "app", "version": 3, "lastUpdated": 7}},
        {"domainMetadata": {"domain": "d", "configuration": "{}", "removed": False}},
    ]
    schema = single_action_schema(V1_CHECKPOINT_COLUMNS)
    df = actions_df(spark, actions, V1_CHECKPOINT_COLUMNS)
    assert df.schema == schema, f"actions_df: {df.schema.simpleString()}"
    rows = [row.asDict(recursive=True) for row in df.collect()]
    got = [{k: _without_nulls(v) for k, v in row.items() if v is not None} for row in rows]
    assert got == actions, f"actions_df gave {got}"
    empty = actions_df(spark, [], V1_CHECKPOINT_COLUMNS)
    assert empty.schema == schema and empty.count() == 0, f"no actions: {empty.schema.simpleString()}"


def _without_nulls(value: object) -> object:
    """``value`` with the null fields of its structs left out (the input actions do not spell them)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value
