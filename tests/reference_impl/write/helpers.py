"""Helpers shared by the writer tests: read checkpoint files back, and check every reader against a state."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from conformance.adapters.deltalake import deltalake_row_count, deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_spark import delta_spark_state
from conformance.tables.builder import add, metadata, schema, schema_field, v2_protocol, write_log
from reference_impl.read.snapshot import read_snapshot
from reference_impl.write.options import CheckpointOptions
from spec.table_state import TableState
from tests.support.listings import log_dir

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from reference_impl.write.result import CheckpointResult


def rows_of(path: Path) -> list[dict[str, Any]]:
    """The actions of one checkpoint file (JSON lines or Parquet) as ``{kind: body}`` dicts.

    Parquet rows keep only their non-null columns: one, if the row holds exactly one action (a row
    with none or several is returned as is, so the caller's assertion shows it).
    """
    if path.name.endswith(".json"):
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [{k: v for k, v in row.items() if v is not None} for row in pq.read_table(path).to_pylist()]


def kind_of(action: Mapping[str, Any]) -> str:
    kinds = [k for k, v in action.items() if v is not None]
    if len(kinds) != 1:
        raise AssertionError(
            f"a checkpoint row must hold exactly one action, this one holds {kinds}: {action}"
        )
    return kinds[0]


def checkpoint_paths(table: Path, result: CheckpointResult) -> list[Path]:
    """Every file of the checkpoint ``result`` describes (top-level file(s) and sidecars)."""
    return [log_dir(table) / f.name for f in result.files]


def parquet_spark_schema(path: Path) -> dict[str, Any]:
    """The Spark ``StructType`` JSON Spark stored in a Parquet file's footer."""
    meta = pq.read_metadata(path).metadata or {}
    raw = meta.get(b"org.apache.spark.sql.parquet.row.metadata")
    if raw is None:
        raise AssertionError(f"{path}: no Spark schema in the Parquet footer (keys {sorted(meta)})")
    value: dict[str, Any] = json.loads(raw)
    return value


def assert_all_readers_see(
    spark: SparkSession,
    table: Path,
    expected: TableState,
    *,
    checkpoint_files: list[str] | None,
    txn_app_ids: tuple[str, ...] = (),
    rows: int | None = None,
    context: str = "",
) -> None:
    """delta-spark (JVM snapshot), deltalake and our reader all report ``expected`` for ``table``.

    ``checkpoint_files``: the top-level checkpoint file names delta-spark and our reader must have
    used (``None``: not checked). ``rows``: the row count delta-spark's and deltalake's query engines
    must read (``None``: the table has no data files; only log-level readers are used).
    """
    label = f"{table}{f' ({context})' if context else ''}"
    theirs = delta_spark_state(spark, str(table))
    assert_states_equal(
        expected, theirs, context=f"{label}: state before (expected) vs delta-spark after (actual)"
    )
    if checkpoint_files is not None:
        used = theirs.source.get("checkpoint")
        assert used is not None and used["files"] == sorted(checkpoint_files), (
            f"{label}: delta-spark used checkpoint {used}, expected the files {sorted(checkpoint_files)}"
        )
    rust = deltalake_state(table, txn_app_ids=txn_app_ids)
    assert_states_equal(
        expected,
        rust,
        context=f"{label}: state before (expected) vs deltalake after (actual)",
        ignore=unavailable_fields(rust),
    )
    ours = read_snapshot(spark, table).table_state()
    assert_states_equal(
        expected, ours, context=f"{label}: state before (expected) vs our reader after (actual)"
    )
    if checkpoint_files is not None:
        source = ours.source.get("checkpoint") or {}
        assert sorted(source.get("files", [])) == sorted(checkpoint_files), (
            f"{label}: our reader used checkpoint {source}, expected the files {sorted(checkpoint_files)}"
        )
    if rows is not None:
        spark_rows = spark.read.format("delta").load(str(table)).count()
        assert spark_rows == rows, (
            f"{label}: spark.read.format('delta') counts {spark_rows} rows, before: {rows}"
        )
        rust_rows = deltalake_row_count(table)
        assert rust_rows == rows, f"{label}: deltalake's QueryBuilder counts {rust_rows} rows, before: {rows}"


#: Every checkpoint kind, on the ``rich`` shape's variant it needs (multi-part is forbidden with v2Checkpoint):
#: the kinds the store tests (HDFS, S3) write.
CHECKPOINT_KINDS: dict[str, tuple[str, CheckpointOptions]] = {
    "v1-classic": ("classic", CheckpointOptions(spec="v1")),
    "multipart-3": ("classic", CheckpointOptions(spec="v1", parts=3)),
    "v2-uuid-json-sidecars": (
        "v2",
        CheckpointOptions(spec="v2", naming="uuid", top_level_format="json", actions_per_sidecar=4),
    ),
    "v2-uuid-parquet-sidecars": (
        "v2",
        CheckpointOptions(spec="v2", naming="uuid", top_level_format="parquet", actions_per_sidecar=4),
    ),
    "v2-classic-sidecars": ("v2", CheckpointOptions(spec="v2", naming="classic", actions_per_sidecar=4)),
}


def no_sidecar_job(*args: object) -> None:
    """Patched over ``task_files._map_in_arrow``: fails a test whose sidecar should be written by the driver."""
    raise AssertionError("the sidecar job (mapInArrow: a Spark Python worker a task) ran")


def small_v2_table(path: Path, commits: int = 7) -> Path:
    """A hand-written log: protocol and metadata (``v2Checkpoint``, policy v2), then two files a commit.

    Seven commits by default, the size of the table in issue #13's cluster report.
    """
    first = [
        v2_protocol(),
        metadata(schema(schema_field("id", "long")), configuration={"delta.checkpointPolicy": "v2"}),
    ]
    rest = [[add(f"part-{v:02d}-{i}.parquet") for i in range(2)] for v in range(1, commits)]
    return write_log(path, [first, *rest])
