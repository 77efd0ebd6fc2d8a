"""Helpers shared by the reader tests: log surgery, delta-spark with a clock, expected row counts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from conformance.oracles.delta_spark import delta_spark_state
from conformance.tables import mutations
from conformance.tables.mutations import delete_commits_before
from reference_impl.log.naming import DELTA_LOG, commit_name, parse_log_file_name
from spec.table_state import TableState

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def log_dir(table: Path) -> Path:
    return table / DELTA_LOG


def prune_commits_before(table: Path, version: int) -> list[int]:
    """Delete the commit files (and their ``.crc``) before ``version``; keep the one at it. Returns the deleted versions."""
    gone = delete_commits_before(log_dir(table), version)
    if not (log_dir(table) / commit_name(version)).exists():
        raise AssertionError(f"the commit at the checkpoint version {version} is missing in {table}")
    return sorted(
        v for v in (parse_log_file_name(n).version for n in gone if n.endswith(".json")) if v is not None
    )


def truncate(path: Path, size: int = 10) -> None:
    """Cut ``path`` to its first ``size`` bytes (a torn write), as the fixtures' mutation does: Hadoop's
    ``.crc`` beside it goes too, so readers meet the torn bytes, not a checksum mismatch."""
    length = path.stat().st_size
    if length <= size:
        raise AssertionError(f"{path} has only {length} bytes; cannot truncate it to {size}")
    mutations.truncate(path, size)


def checkpoint_version_of(state: TableState) -> int | None:
    """The checkpoint version our reader reports in ``source`` (``None``: replayed from commits)."""
    checkpoint = state.source.get("checkpoint")
    return None if checkpoint is None else int(checkpoint["version"])


def expected_rows(state: TableState) -> int:
    """Rows of a state from its stats: Σ numRecords − Σ deletion-vector cardinality."""
    total = 0
    for f in state.files:
        stats = f.get("stats")
        if not isinstance(stats, dict) or "numRecords" not in stats:
            raise AssertionError(f"file {f['path']} has no numRecords in its stats: {stats!r}")
        total += int(stats["numRecords"]) - int((f.get("deletionVector") or {}).get("cardinality", 0))
    return total


def delta_spark_state_at(
    spark: SparkSession, table: str | Path, now_ms: int, version: int | None = None
) -> TableState:
    """delta-spark's snapshot with its clock set to ``now_ms`` (``ManualClock``), as a ``TableState``.

    delta-spark drops tombstones older than ``clock - delta.deletedFileRetentionDuration`` when it
    builds a snapshot; a manual clock lets the test compare expiry with our reader's ``now_ms``.
    """
    return delta_spark_state(spark, str(table), version, now_ms=now_ms)
