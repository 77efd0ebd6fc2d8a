"""Atomicity: a writer that dies at any point, or whose Spark task fails, never changes what readers see.

Crash points, on the ``rich`` table with ``v2Checkpoint`` that already has an older checkpoint (a
classic V1 one at the version before) and a ``_last_checkpoint`` naming it — in each case the
table as a writer that dies at that publication point leaves it, with no ``finally`` or cleanup
run:

| point | what exists when the process dies |
|---|---|
| ``staged`` | every sidecar written by the Spark tasks at its final name in ``_sidecars/`` and read back, nothing else done |
| ``sidecar:1`` | the first sidecar finished by the driver (its time set, its name set written when incremental) |
| ``sidecars`` | every sidecar written and re-checked, no top-level file |
| ``top-level`` | the top-level file published, ``_last_checkpoint`` not yet rewritten |

and ``top-level`` for a V1 classic write. After each crash delta-spark, deltalake and our reader
report exactly the state from before; before the top-level file nothing new is referenced (no new
checkpoint file, only unreferenced sidecars; ``_last_checkpoint`` byte-identical); a re-run then succeeds and is read
correctly. Two processes make the five tables, at the same time, in a module fixture (each start
of the command and its JVM costs about 20 s of the suite's budget); the checks run one test at a
time:

* the V1 write (``python -m tests.support.fault_cli crash:top-level checkpoint …``) calls
  ``os._exit(86)`` at its point;
* one V2 write (``pause:staged,pause:sidecar:1,…``) waits at each of its four points in turn,
  where its table is copied (with modification times) into that case's table — while it waits
  nothing of it runs, so the copy is what a crash there leaves — and is killed with ``SIGKILL``
  at the last (:func:`tests.support.cli_runs.paused_then_killed`).

Task retries run in-process (the session is ``local[2,2]``: one retry per task): a sidecar-writing
task that fails on its first attempt and is retried leaves a checkpoint that references only
complete, verified files; a task that fails on every attempt leaves nothing published. A
shuffle-map stage run again after a lost shuffle output does not make the one-pass write count its
state twice: that write runs in a process of its own (``local[2,2]`` too), as a fetch failure leaves
a local session with a ten-minute fuse (:func:`test_lost_shuffle_output_rerun_counts_once`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from conformance.tables.real_writers import Shape
from reference_impl.log.naming import LAST_CHECKPOINT, classic_checkpoint_name, parse_log_file_name
from reference_impl.spark.jobs import job_group_stages
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.writer import write_checkpoint
from spec.table_state import TableState
from tests.reference_impl.write.conftest import ShapeCache
from tests.reference_impl.write.helpers import assert_all_readers_see, rows_of
from tests.support import REPO_ROOT
from tests.support.faults import CRASH_EXIT_STATUS, FaultPlan
from tests.support.listings import checkpoint_names, log_dir, sidecar_names

SIDECAR_ACTIONS = 3


@dataclass(frozen=True)
class Base:
    """The table every test copies: ``rich`` (v2 variant) plus our V1 checkpoint one version back."""

    shape: Shape
    path: Path
    state: TableState
    rows: int
    older_checkpoint: str


@pytest.fixture(scope="module")
def base(
    delta_spark_session: SparkSession, shapes: ShapeCache, tmp_path_factory: pytest.TempPathFactory
) -> Base:
    shape = shapes.get("rich", "v2")
    path = shapes.copy(shape, tmp_path_factory.mktemp("crash-base") / "table")
    older = write_checkpoint(path, version=shape.version - 1, spark=delta_spark_session)
    assert [f.name for f in older.top_level] == [classic_checkpoint_name(shape.version - 1)], older.files
    return Base(shape, path, shapes.state_before(shape), shapes.rows_before(shape), older.top_level[0].name)


def _copy(base: Base, tmp_path: Path) -> Path:
    target = tmp_path / "table"
    shutil.copytree(base.path, target)
    return target


def cli_argv(table: Path, *args: str, fault: str, global_args: Sequence[str] = ()) -> list[str]:
    """``delta-ckpt GLOBAL_ARGS checkpoint TABLE ARGS --quiet`` with the fault hooks (:mod:`tests.support.fault_cli`)."""
    head = [sys.executable, "-m", "tests.support.fault_cli", fault, *global_args]
    return [*head, "checkpoint", str(table), *args, "--quiet"]


def run_cli(
    table: Path, *args: str, fault: str, global_args: Sequence[str] = (), timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """:func:`cli_argv` run to its end in a fresh process (its own JVM)."""
    env = dict(os.environ)
    env.setdefault("DELTA_CKPT_SPARK_MASTER", "local[2,2]")
    return subprocess.run(
        cli_argv(table, *args, fault=fault, global_args=global_args),
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def published(table: Path) -> dict[str, int]:
    """Every non-hidden file directly in ``_delta_log`` and ``_delta_log/_sidecars``, with its size."""
    out = {}
    for directory in (log_dir(table), log_dir(table) / "_sidecars"):
        if directory.is_dir():
            for entry in directory.iterdir():
                if entry.is_file() and not entry.name.startswith("."):
                    out[str(entry.relative_to(log_dir(table)))] = entry.stat().st_size
    return out


def hint_bytes(table: Path) -> bytes:
    return (log_dir(table) / LAST_CHECKPOINT).read_bytes()


def staging_dirs(table: Path) -> list[str]:
    return sorted(p.name for p in log_dir(table).iterdir() if p.name.startswith(".delta-ckpt-staging"))


@dataclass(frozen=True)
class CrashRun:
    """A table as a writer that died at a point left it, what was published before, and how the writer ended."""

    table: Path
    files_before: dict[str, int]
    hint_before: bytes
    # The V1 process's (the injected crash); the V2 cases': SIGKILL, checked by paused_then_killed.
    exit_status: int
    stderr: str


V2_ARGS = ("--actions-per-sidecar", str(SIDECAR_ACTIONS))
CRASH_CASES = [
    # (id, extra CLI args, crash point, new sidecars expected (None: all), top-level published). The tasks write
    # the sidecars at their final names: from ``staged`` on, all of them are there, referenced by nothing.
    ("v2-staged", V2_ARGS, "staged", None, False),
    ("v2-after-one-sidecar", V2_ARGS, "sidecar:1", None, False),
    ("v2-after-all-sidecars", V2_ARGS, "sidecars", None, False),
    ("v2-before-last-checkpoint", V2_ARGS, "top-level", None, True),
    ("v1-before-last-checkpoint", ("--spec", "v1"), "top-level", 0, True),
]


@pytest.fixture(scope="module")
def crash_runs(base: Base, tmp_path_factory: pytest.TempPathFactory) -> dict[str, CrashRun]:
    """Every crash case's table: the V1 process and the V2 one run at the same time (module docs)."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.support.cli_runs import paused_then_killed

    tables = {case: tmp_path_factory.mktemp(f"crash-{case}") / "table" for case, *_ in CRASH_CASES}
    v1_case, v1_args, v1_point = CRASH_CASES[-1][:3]
    v2_cases = {point: case for case, _, point, _, _ in CRASH_CASES[:-1]}
    v1_table, v2_table = _copy(base, tables[v1_case].parent), _copy(base, tmp_path_factory.mktemp("crash-v2"))
    before = (published(v2_table), hint_bytes(v2_table))

    def copy_at(point: str) -> None:
        shutil.copytree(v2_table, tables[v2_cases[point]])

    with ThreadPoolExecutor(max_workers=1) as pool:
        v1_before = (published(v1_table), hint_bytes(v1_table))
        v1 = pool.submit(run_cli, v1_table, *v1_args, fault=f"crash:{v1_point}")
        fault = ",".join(f"pause:{point}" for point in v2_cases)
        paused_then_killed(cli_argv(v2_table, *V2_ARGS, fault=fault), list(v2_cases), copy_at)
        proc = v1.result()
    runs = {case: CrashRun(tables[case], *before, -signal.SIGKILL, "") for case in v2_cases.values()}
    return runs | {v1_case: CrashRun(v1_table, *v1_before, proc.returncode, proc.stderr)}


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
@pytest.mark.slow
@pytest.mark.requirement(
    "CKPT-WRITE-003", "CKPT-WRITE-004", "CKPT-LAST-002", "CKPT-SIDE-003", "CKPT-WRITE-008"
)
@pytest.mark.parametrize(
    ("case", "args", "point", "new_sidecars", "top_published"), CRASH_CASES, ids=[c[0] for c in CRASH_CASES]
)
def test_crash_leaves_the_table_as_it_was(
    case: str,
    args: tuple[str, ...],
    point: str,
    new_sidecars: int | None,
    top_published: bool,
    base: Base,
    crash_runs: dict[str, CrashRun],
    delta_spark: SparkSession,
    deltalake: ModuleType,
) -> None:
    """After a real crash at ``point`` every reader sees the state from before; a re-run succeeds.

    Spec: CKPT-WRITE-003
    "Writing a checkpoint MUST NOT change the table state that a conforming reader reports for
    any version."
    Spec: CKPT-WRITE-004
    "A writer MUST finish writing every sidecar file before the top-level file that references it
    becomes visible, and every file of a checkpoint before it updates `_last_checkpoint` to
    describe that checkpoint."
    Spec: CKPT-WRITE-008 (the V1 re-run keeps the identical classic file the crashed run published)
    "A writer MAY overwrite an existing classic checkpoint or multi-part part of the same version
    with a file that describes the same table state, or keep the existing file instead of writing
    its own."
    """
    run = crash_runs[case]
    table, files_before, hint_before = run.table, run.files_before, run.hint_before
    version = base.shape.version
    expected = CRASH_EXIT_STATUS if "--spec" in args else -signal.SIGKILL
    assert run.exit_status == expected, (
        f"{case}: delta-ckpt exited {run.exit_status}, expected {expected} (the injected crash or SIGKILL); "
        f"stderr: {run.stderr[-2000:]}"
    )
    files_after = published(table)
    created = sorted(set(files_after) - set(files_before))
    assert all(files_after[k] == files_before[k] for k in files_before), (
        f"{case}: an existing file changed in {table}"
    )
    assert hint_bytes(table) == hint_before, (
        f"{case}: {table}/_delta_log/_last_checkpoint changed before the end"
    )
    sidecars = [n for n in created if n.startswith("_sidecars/")]
    tops = [n for n in created if not n.startswith("_sidecars/")]
    if new_sidecars is not None:
        assert len(sidecars) == new_sidecars, f"{case}: new sidecars {sidecars}, expected {new_sidecars}"
    else:
        assert len(sidecars) >= 2, f"{case}: expected every sidecar to be published, got {sidecars}"
    if top_published:
        assert len(tops) == 1 and parse_log_file_name(tops[0]).version == version, (
            f"{case}: new files {created}"
        )
        used = tops
    else:
        assert tops == [], f"{case}: files other than sidecars were published before the crash point: {tops}"
        used = [base.older_checkpoint]
    assert_all_readers_see(
        delta_spark,
        table,
        base.state,
        checkpoint_files=used,
        txn_app_ids=base.shape.txn_app_ids,
        rows=base.rows,
        context=f"after crash:{point}",
    )

    spec = "v1" if "--spec" in args else "v2"
    rerun = write_checkpoint(
        table, options=CheckpointOptions(spec=spec, actions_per_sidecar=SIDECAR_ACTIONS), spark=delta_spark
    )
    assert rerun.version == version and rerun.last_checkpoint is not None, f"{case}: re-run {rerun.to_json()}"
    hint = json.loads(hint_bytes(table))
    assert hint["version"] == version, f"{case}: _last_checkpoint after the re-run: {hint}"
    if spec == "v1":
        assert rerun.files[0].kept_existing, (
            f"{case}: the re-run should keep the identical classic file (CKPT-WRITE-008)"
        )
    rerun_tops = [f.name for f in rerun.top_level]
    # After a crash past the top-level file, a V2 re-run adds a second UUID-named file of the same
    # version; both describe the same state, and which one a reader takes is its choice (CKPT-READ-004).
    ambiguous = spec == "v2" and top_published
    assert_all_readers_see(
        delta_spark,
        table,
        base.state,
        checkpoint_files=None if ambiguous else rerun_tops,
        txn_app_ids=base.shape.txn_app_ids,
        rows=None,
        context=f"re-run after crash:{point}",
    )


def busiest_sidecar_task(spark: SparkSession, state: TableState, per_sidecar: int) -> int:
    """The Spark partition that will write the most file actions into a sidecar.

    The writer hash-partitions the file actions by ``coalesce(add.path, remove.path)`` into
    ``ceil(actions / per_sidecar)`` partitions (spec CKPT-PART-002's formula); the file names of a
    delta-spark table are random, so which partitions are empty varies between builds, and a task
    that writes nothing never reaches the injected failure.
    """
    from pyspark.sql import functions as F

    paths = [f["path"] for f in state.files] + [t["path"] for t in state.tombstones]
    num = -(-len(paths) // per_sidecar)
    counts = (
        spark.createDataFrame([(p,) for p in paths], "path string")
        .groupBy(F.expr(f"pmod(hash(path), {num})").alias("partition"))
        .count()
        .orderBy(F.desc("count"), "partition")
        .collect()
    )
    return int(counts[0]["partition"])


def _failed_tasks(spark: SparkSession, group: str) -> int:
    return sum(stage.numFailedTasks for stage in job_group_stages(spark.sparkContext, group))


def _verify_referenced(table: Path, top_name: str, state: TableState) -> None:
    """The top-level file ``top_name`` references exactly the sidecars on disk, each complete and with the right counts."""
    top = log_dir(table) / top_name
    actions = rows_of(top)
    refs = [a["sidecar"] for a in actions if "sidecar" in a]
    on_disk = sidecar_names(table)
    assert sorted(r["path"] for r in refs) == on_disk, (
        f"{table}: sidecars referenced {sorted(r['path'] for r in refs)} but on disk {on_disk}"
    )
    adds = removes = 0
    for ref in refs:
        path = log_dir(table) / "_sidecars" / ref["path"]
        assert path.stat().st_size == ref["sizeInBytes"], (
            f"{path}: {path.stat().st_size} bytes, recorded {ref['sizeInBytes']}"
        )
        columns = pq.read_table(path).to_pydict()
        adds += sum(1 for a in columns["add"] if a is not None)
        removes += sum(1 for r in columns["remove"] if r is not None)
    assert (adds, removes) == (len(state.files), len(state.tombstones)), (
        f"{table}: sidecars hold {adds} adds / {removes} removes, the state {len(state.files)} / {len(state.tombstones)}"
    )
    tags = next(a["checkpointMetadata"]["tags"] for a in actions if "checkpointMetadata" in a)
    assert tags["sidecarNumActions"] == str(adds + removes), f"{top}: tags {tags}"


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-WRITE-005", "CKPT-SIDE-004", "CKPT-WRITE-003")
def test_retried_sidecar_task_leaves_only_complete_files(
    base: Base, delta_spark: SparkSession, tmp_path: Path
) -> None:
    """A sidecar-writing task that fails on its first attempt is retried; only the successful attempts' files exist.

    Spec: CKPT-SIDE-004
    "The `sizeInBytes` of a `sidecar` action MUST equal the exact length in bytes of the sidecar
    file it references."
    Spec: CKPT-WRITE-005
    "Before publishing a checkpoint, a writer MUST verify that the number of `add` rows it wrote
    equals the number of live files of the version and that every sidecar it references exists
    with the length recorded in its `sidecar` action …"
    """
    table = _copy(base, tmp_path)
    task = busiest_sidecar_task(delta_spark, base.state, SIDECAR_ACTIONS)
    group = f"fail-task-once-{tmp_path.name}"
    delta_spark.sparkContext.setJobGroup(group, "writer test: one failed sidecar task")
    try:
        result = write_checkpoint(
            table,
            options=CheckpointOptions(
                spec="v2", actions_per_sidecar=SIDECAR_ACTIONS, hooks=FaultPlan(failing_tasks=((task, 1),))
            ),
            spark=delta_spark,
        )
        failed = _failed_tasks(delta_spark, group)
    finally:
        delta_spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert failed >= 1, f"{table}: no Spark task failed, so the retry path was not exercised"
    assert len(result.sidecars) >= 2, result.files
    assert staging_dirs(table) == [], f"{table}: staging left behind: {staging_dirs(table)}"
    hidden = sorted(p.name for p in (log_dir(table) / "_sidecars").iterdir() if p.name.startswith("."))
    assert hidden == [], f"{table}/_delta_log/_sidecars: temp files left behind: {hidden}"
    _verify_referenced(table, result.top_level[0].name, base.state)
    assert json.loads(hint_bytes(table))["version"] == base.shape.version
    assert_all_readers_see(
        delta_spark,
        table,
        base.state,
        checkpoint_files=[f.name for f in result.top_level],
        txn_app_ids=base.shape.txn_app_ids,
        rows=None,
        context="after a retried task",
    )


def stages_run_again(events: Path, timeout_s: float = 120.0) -> list[int]:
    """The ids of the stages that ran a second attempt, from the one Spark event log in ``events``.

    Waits for the log to be complete: the driver JVM gives it its final name (``.inprogress`` dropped)
    when its session stops, which a command line leaves to the JVM after the command ended.
    """
    deadline = time.monotonic() + timeout_s
    while not (done := [p for p in events.iterdir() if not p.name.endswith(".inprogress")]):
        assert time.monotonic() < deadline, (
            f"{events}: no complete event log, only {sorted(events.iterdir())}"
        )
        time.sleep(0.2)
    (log,) = done
    stages = set()
    for line in log.read_text().splitlines():
        event = json.loads(line)
        if event["Event"] == "SparkListenerStageSubmitted" and event["Stage Info"]["Stage Attempt ID"] > 0:
            stages.add(int(event["Stage Info"]["Stage ID"]))
    return sorted(stages)


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-WRITE-005")
def test_lost_shuffle_output_rerun_counts_once(base: Base, delta_spark: SparkSession, tmp_path: Path) -> None:
    """A shuffle-map stage that runs again (its output lost) does not make the one-pass write count twice.

    The write of a V2 checkpoint with default sizing counts its state as it writes it
    (``ObservedCounts``). One write task deletes the map output it reads and fails; its retry
    meets a fetch failure, and Spark runs the shuffle-map stage again. Counted in that stage, every
    row was counted twice and the self-check failed (``SELF_CHECK_FAILED``, exit 2) on a correct
    checkpoint. Since the reconciliation's shuffle makes the sidecars' partitions, the stop-24 order
    (observe, then partition) also counts after the shuffle; what fails here is an observation with a
    shuffle after it (stop 25: ``wrote 12 add / 8 remove / 20 rows, but the state has 24 live files /
    16 tombstones / 40 actions``). The table costs little of the time: a two-commit log made the same
    stages (two map tasks, one write task) and took as long.

    The write is ``delta-ckpt checkpoint`` in a process of its own (:func:`run_cli`), and which stages
    ran again is read from its Spark event log. In the tests' session it was fatal to that session
    (stop 29): on the fetch failure Spark's scheduler drops the block manager of the executor that
    served the shuffle — in local mode the driver's own — and a local driver cannot register it again
    (the re-registration asks the ``CoarseGrainedScheduler`` endpoint, which only a cluster's driver
    has), so from then on each heartbeat of its executor (every 10 s) failed, and after
    ``spark.executor.heartbeat.maxFailures`` (60) the executor ended the JVM with ``System.exit``,
    ten minutes later, in the middle of whatever test the process ran then. Hence the last check: the
    tests' session still has its block manager.

    Spec: CKPT-WRITE-005
    "Before publishing a checkpoint, a writer MUST verify that the number of `add` rows it wrote
    equals the number of live files of the version and that every sidecar it references exists
    with the length recorded in its `sidecar` action …"
    """
    table = _copy(base, tmp_path)
    before = published(table)
    events = tmp_path / "events"
    events.mkdir()
    log = [
        f"--conf=spark.eventLog.{k}"
        for k in ("enabled=true", "rolling.enabled=false", "compress=false", f"dir={events.as_uri()}")
    ]
    run = run_cli(table, "--spec", "v2", fault="lose-shuffle", global_args=log)
    assert run.returncode == 0, f"{table}: delta-ckpt exited {run.returncode}; stderr: {run.stderr[-2000:]}"
    rerun = stages_run_again(events)
    assert rerun, f"{table}: no stage ran a second attempt, so the lost shuffle output was not exercised"
    tops = [n for n in published(table) if n not in before and not n.startswith("_sidecars/")]
    assert len(tops) == 1, f"{table}: new top-level files {tops} after stages {rerun} ran again"
    _verify_referenced(table, tops[0], base.state)
    block_managers = delta_spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
    assert block_managers == 1, f"the tests' session has {block_managers} block managers, not its own one"


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-WRITE-003", "CKPT-WRITE-004")
def test_task_failing_every_attempt_publishes_nothing(
    base: Base, delta_spark: SparkSession, tmp_path: Path
) -> None:
    """When a sidecar task fails on every attempt the write fails and nothing is published.

    Spec: CKPT-WRITE-003
    "Writing a checkpoint MUST NOT change the table state that a conforming reader reports for
    any version."
    """
    table = _copy(base, tmp_path)
    files_before, hint_before = published(table), hint_bytes(table)
    names_before = checkpoint_names(table)
    task = busiest_sidecar_task(delta_spark, base.state, SIDECAR_ACTIONS)
    with pytest.raises(Exception, match=rf"(?s)injected failure of task {task}\b") as info:
        write_checkpoint(
            table,
            options=CheckpointOptions(
                spec="v2", actions_per_sidecar=SIDECAR_ACTIONS, hooks=FaultPlan(failing_tasks=((task, 2),))
            ),
            spark=delta_spark,
        )
    assert published(table) == files_before, (
        f"{table}: files were published: {set(published(table)) - set(files_before)} ({info.value!s:.200})"
    )
    assert checkpoint_names(table) == names_before and hint_bytes(table) == hint_before, table
    assert staging_dirs(table) == [], f"{table}: staging left behind: {staging_dirs(table)}"
    assert_all_readers_see(
        delta_spark,
        table,
        base.state,
        checkpoint_files=[base.older_checkpoint],
        txn_app_ids=base.shape.txn_app_ids,
        rows=None,
        context="after a task that always fails",
    )
