"""Crash safety of the cleaner: a real ``delta-ckpt cleanup`` subprocess (:mod:`tests.support.fault_cli`)
waits at its publication points in turn and is killed (``SIGKILL``) at the last; at each point —
where the store holds what a crash there leaves, since nothing of the waiting process runs —
readers still read every version correctly; a re-run finishes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.compare import assert_states_equal
from conformance.oracles.delta_spark import delta_spark_state
from conformance.tables.real_writers import NOW
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.log.naming import classic_checkpoint_name
from reference_impl.read.snapshot import read_snapshot
from tests.reference_impl.cleanup.conftest import Cleaned, CleanupTables
from tests.support.cli_runs import paused_then_killed
from tests.support.listings import log_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _cleanup_argv(table: Path, fault: str) -> list[str]:
    """``delta-ckpt cleanup TABLE --now NOW --quiet`` with the fault hooks installed."""
    argv = [sys.executable, "-m", "tests.support.fault_cli", fault, "cleanup", str(table)]
    return [*argv, "--now", str(NOW), "--quiet"]


def _visible(names: set[str]) -> set[str]:
    return {n for n in names if not n.rsplit("/", 1)[-1].startswith(".")}


def _assert_reads(
    spark: SparkSession, table: Path, cleaned: Cleaned, versions: tuple[int, ...], when: str
) -> None:
    for version in versions:
        ours = read_snapshot(spark, table, version=version, now_ms=NOW).table_state()
        assert ours.comparable() == cleaned.states[version].comparable(), f"{when}: version {version} changed"
    assert_states_equal(
        cleaned.states[6],
        delta_spark_state(spark, str(table)),
        context=f"{table} {when}: state before the cleanup vs delta-spark now",
    )


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.slow
@pytest.mark.requirement("CKPT-CLEAN-002", "CKPT-COMPAT-004")
def test_crash_after_compat_and_midway_through_deletion(
    delta_spark: SparkSession, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """The cleaner stopped right after the compatibility checkpoint (nothing deleted yet), then after
    the 5th deletion, where it is killed. Deletion goes oldest version first, so the log is always one a smaller
    cleanup would have left (CKPT-CLEAN-002 holds at every step): every version that still has its
    files reads as before — version 2 too, from its checkpoint — and a re-run finishes the job with
    the same result as an uninterrupted cleanup.

    Spec: CKPT-CLEAN-002
    "A cleaner MUST NOT delete a commit file while keeping a commit file of a lower version, so that the
    remaining commits have no gap."
    """
    cleaned = cleanup_tables.cleaned()
    planned = cleaned.result.deleted_paths()
    table = cleanup_tables.copy(tmp_path / "table").path
    before = log_files(table)

    def check(point: str) -> None:
        if point == "cleanup:compat":
            now = log_files(table)
            assert before <= now and now - before == {classic_checkpoint_name(6)}, f"{table}: {sorted(now)}"
            when = "stopped after the compatibility checkpoint"
        else:
            gone = before - log_files(table)
            assert _visible(gone) == set(planned[:5]), "exactly the first five planned files, oldest first"
            when = "stopped midway through deletion"
        _assert_reads(delta_spark, table, cleaned, (2, 4, 6), when)

    points = ["cleanup:compat", "cleanup:deleted:5"]
    paused_then_killed(_cleanup_argv(table, ",".join(f"pause:{p}" for p in points)), points, check)

    result = cleanup(table, now_ms=NOW, spark=delta_spark)
    assert result.status == "done" and result.compat is not None and result.compat.action == "exists"
    assert result.deleted_paths() == planned[5:]
    assert _visible(log_files(table)) == _visible(set(cleaned.after))
    _assert_reads(delta_spark, table, cleaned, (4, 6), "after the re-run")
