"""Incremental V2 checkpoints and cleanup over random histories: no cleanup loses a shared sidecar.

Spec: ``spec/checkpoints.md`` §12.1 Sidecar reuse (``CKPT-INC-002``) and §18.3 Sidecar garbage
collection (``CKPT-CLEAN-013``); ``docs/incremental-v2-checkpoints.md``.

Hypothesis draws short histories of a small V2 table (1-day log and tombstone retention): commits
that add and remove files (or touch none), days apart on a simulated clock; after some commits an
``--incremental`` checkpoint by our writer (2 actions per sidecar, so several sidecars; its files
timed on the clock, so a reused sidecar is as old as the checkpoint that wrote it) and a cleanup at
a later clock by our cleaner or delta-spark's (drawn too). After every cleanup, every sidecar any remaining checkpoint file lists exists, and
our reader reads the latest version as the model (the files the commits left) holds it. Unlike ``test_shared_sidecars_property.py`` (the cleaner's plan
alone, thousands of layouts, no Spark) everything here is real: our writer, our cleaner and
delta-spark's, so the examples are few. The default run (CI) plays the explicit examples only
(``Phase.explicit``: the same three every run, whatever the hypothesis version or the test's source,
from which a derandomized draw is seeded): :data:`SHARED_THEN_CLEANED`, the case the issue names — a
checkpoint lists every sidecar of the one before (no commit between touched a file, no tombstone
expired) and delta-spark's cleanup deletes that one, where delta-spark reads the latest version too;
:data:`SIMPLEST`, delta-spark's cleanup the day of the only checkpoint (nothing expires); and
:data:`OURS_THEN_DELTA_SPARK`, our cleaner after version 1 (before any checkpoint), then delta-spark's
two days after the checkpoint of version 2 — about 7 s each. They exercise our cleaner little
(``test_shared_sidecars_property.py`` covers its plan). ``--hypothesis-profile thorough``
(``tests/conftest.py``) draws ``max_examples`` random histories besides; see README "Tests".
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from conformance.compare import assert_states_equal
from conformance.oracles.delta_spark import delta_spark_cleanup, delta_spark_state
from conformance.tables.builder import (
    add,
    commit_info,
    metadata,
    remove,
    schema,
    schema_field,
    txn,
    v2_protocol,
    write_commit,
)
from conformance.tables.real_writers import checkpoint_files
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.log.naming import SIDECAR_DIR
from reference_impl.log.table_properties import MS_PER_DAY
from reference_impl.read.snapshot import read_snapshot
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.writer import write_checkpoint
from spec.vocabulary import CheckpointSpec
from tests.reference_impl.cleanup.helpers import top_level_actions
from tests.support.listings import log_dir

HOUR = 3_600_000
T0 = 1_800_000_000_000 // MS_PER_DAY * MS_PER_DAY + 6 * HOUR  # 06:00 UTC: no clock is on a day boundary
FIRST_FILES = 4
#: The cleaners a history draws (each cleanup one of them): ours and delta-spark's.
CLEANERS = ("delta-spark", "ours")
#: The phases of a run: the explicit examples only by default (module docs); with ``--hypothesis-profile
#: thorough``, random draws (and shrinking) too.
PHASES = tuple(Phase) if settings.get_current_profile_name() == "thorough" else (Phase.explicit,)
CONFIGURATION = {
    "delta.checkpointPolicy": "v2",
    "delta.logRetentionDuration": "interval 1 days",
    "delta.deletedFileRetentionDuration": "interval 1 days",
}


@dataclass(frozen=True)
class Commit:
    """One commit ``gap_days`` (+1 h) after the previous step: ``adds`` new files, and the live files
    at ``removes`` (indices into the sorted live files, modulo their count) removed."""

    gap_days: int
    adds: int
    removes: tuple[int, ...]
    checkpoint: bool  # an --incremental checkpoint of this version after it
    cleanup: str | None  # then a cleanup by "ours" or "delta-spark" ...
    cleanup_days: int  # ... this many days (+2 h) after the commit


@dataclass(frozen=True)
class History:
    commits: tuple[Commit, ...]
    delta_spark_reads: bool = False  # delta-spark reads every checked version too
    expect_reuse: bool = False  # a checkpoint lists a sidecar of an earlier one, which a cleanup deletes


@st.composite
def commits(draw: st.DrawFn, *, last: bool) -> Commit:
    return Commit(
        gap_days=draw(st.integers(0, 2)),
        adds=draw(st.integers(0, 2)),
        removes=tuple(draw(st.lists(st.integers(0, 20), max_size=2))),
        checkpoint=last or draw(st.booleans()),
        cleanup=draw(st.sampled_from(CLEANERS if last else (None, *CLEANERS))),
        cleanup_days=draw(st.integers(0, 3)),
    )


@st.composite
def histories(draw: st.DrawFn) -> History:
    count = 2  # the second commit is always checkpointed and cleaned: the first may leave a base
    return History(tuple(draw(commits(last=i == count - 1)) for i in range(count)))


SHARED_THEN_CLEANED = History(
    (
        Commit(gap_days=0, adds=3, removes=(), checkpoint=True, cleanup=None, cleanup_days=0),
        # the same day: a sidecar older than half the log retention is not reused (CKPT-INC-004)
        Commit(gap_days=0, adds=0, removes=(), checkpoint=True, cleanup="delta-spark", cleanup_days=2),
    ),
    delta_spark_reads=True,
    expect_reuse=True,
)

SIMPLEST = History(
    (
        Commit(gap_days=0, adds=0, removes=(), checkpoint=False, cleanup=None, cleanup_days=0),
        Commit(gap_days=0, adds=0, removes=(), checkpoint=True, cleanup="delta-spark", cleanup_days=0),
    )
)
OURS_THEN_DELTA_SPARK = History(
    (
        Commit(gap_days=1, adds=1, removes=(16,), checkpoint=False, cleanup="ours", cleanup_days=0),
        Commit(gap_days=2, adds=1, removes=(20,), checkpoint=True, cleanup="delta-spark", cleanup_days=2),
    )
)


class _Run:
    """One history played on a fresh table, with the model of its live files per version."""

    def __init__(self, spark: SparkSession, table: Path, history: History) -> None:
        self.spark, self.table, self.history = spark, table, history
        self.clock = T0
        self.live = {f"f-{i:02d}.parquet": 100 + i for i in range(FIRST_FILES)}
        self.states = {0: dict(self.live)}
        self.version = 0
        self.written_by: dict[str, str] = {}  # sidecar -> the top-level file of the checkpoint that wrote it
        self.sidecars_reused = 0
        self.outliving = 0  # sidecars a remaining checkpoint lists after the one that wrote them went
        head = [v2_protocol(), metadata(schema(schema_field("v", "long")), configuration=CONFIGURATION)]
        files = [add(p, size=s, modification_time=T0) for p, s in self.live.items()]
        write_commit(table, 0, [commit_info(T0), *head, *files], mtime_ms=T0)

    def commit(self, step: Commit) -> None:
        self.clock += step.gap_days * MS_PER_DAY + HOUR
        self.version += 1
        names = sorted(self.live)
        gone = sorted({names[i % len(names)] for i in step.removes}) if names else []
        actions = [remove(p, deletion_timestamp=self.clock, size=self.live.pop(p)) for p in gone]
        for i in range(step.adds):
            path = f"f-{self.version:02d}-{i}.parquet"
            self.live[path] = 1000 * self.version + i
            actions.append(add(path, size=self.live[path], modification_time=self.clock))
        if not actions:
            actions.append(txn("app", self.version))
        write_commit(self.table, self.version, [commit_info(self.clock), *actions], mtime_ms=self.clock)
        self.states[self.version] = dict(self.live)

    def checkpoint(self) -> None:
        when = self.clock + 60_000
        options = CheckpointOptions(
            spec=CheckpointSpec.V2, incremental=True, actions_per_sidecar=2, now_ms=when, file_time_ms=when
        )
        result = write_checkpoint(self.table, self.version, options, spark=self.spark)
        self.sidecars_reused += sum(1 for s in result.sidecars if s.base_name in self.written_by)
        for sidecar in result.sidecars:
            self.written_by.setdefault(sidecar.base_name, result.top_level[0].name)

    def cleanup(self, cleaner: str, days: int) -> None:
        self.clock += days * MS_PER_DAY + 2 * HOUR
        if cleaner == "ours":
            cleanup(self.table, now_ms=self.clock, spark=self.spark)
        else:
            delta_spark_cleanup(self.spark, str(self.table), self.clock)
        self.check(f"after {cleaner}'s cleanup at {self.clock}")

    def check(self, when: str) -> None:
        """Every sidecar a remaining checkpoint lists exists; the readers read the latest version."""
        log = log_dir(self.table)
        present = {p.name for p in (log / SIDECAR_DIR).iterdir()} if (log / SIDECAR_DIR).is_dir() else set()
        names = checkpoint_files(log)
        for name in names:
            listed = {
                str(a["sidecar"]["path"]).rsplit("/", 1)[-1]  # type: ignore[index]
                for a in top_level_actions(log / name)
                if "sidecar" in a
            }
            assert listed <= present, (
                f"{self.table} {when}: remaining checkpoint {name} lists missing sidecars {sorted(listed - present)}"
            )
            self.outliving += sum(1 for s in listed if self.written_by.get(s, name) not in names)
        label = f"{self.table} v{self.version} {when} ({self.history})"
        ours = read_snapshot(self.spark, self.table, now_ms=self.clock).table_state()
        got = {f["path"]: f["size"] for f in ours.files}
        assert ours.version == self.version and got == self.states[self.version], (
            f"{label}: our reader read v{ours.version} {got}, the commits left {self.states[self.version]}"
        )
        if self.history.delta_spark_reads:
            theirs = delta_spark_state(self.spark, str(self.table), now_ms=self.clock)
            assert_states_equal(ours, theirs, context=f"{label}: ours vs delta-spark")


@pytest.mark.spark
@pytest.mark.requirement("CKPT-CLEAN-013", "CKPT-INC-002")
@settings(
    phases=PHASES,  # each example costs ~7 s
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(history=SHARED_THEN_CLEANED)
@example(history=SIMPLEST)
@example(history=OURS_THEN_DELTA_SPARK)
@given(history=histories())
def test_cleanup_after_incremental_checkpoints_keeps_every_listed_sidecar(
    delta_spark: SparkSession, tmp_path: Path, history: History
) -> None:
    """Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint remaining
    after the cleanup references …"

    Spec: CKPT-INC-002
    "A writer MUST list a sidecar file written for an earlier checkpoint only when, for every logical
    file that has an action in that sidecar, the action is the one the new checkpoint's state holds
    for that file …"
    """
    table = Path(tempfile.mkdtemp(dir=tmp_path)) / "table"
    try:
        run = _Run(delta_spark, table, history)
        for step in history.commits:
            run.commit(step)
            if step.checkpoint:
                run.checkpoint()
            if step.cleanup is not None:
                run.cleanup(step.cleanup, step.cleanup_days)
        if history.expect_reuse:
            assert run.sidecars_reused and run.outliving, (
                f"{table} ({history}): {run.sidecars_reused} sidecar(s) listed again, {run.outliving} "
                "listed after the checkpoint that wrote them was deleted"
            )
    finally:
        shutil.rmtree(table.parent, ignore_errors=True)
