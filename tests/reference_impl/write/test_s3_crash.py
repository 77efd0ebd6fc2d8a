"""Crash points on S3: a writer killed mid-checkpoint leaves the previous state for every reader.

Spec: ``spec/checkpoints.md`` §17.2 Publication order (``CKPT-WRITE-004``), §17.3 Atomicity, §18
(sidecar GC).

On a 7-commit ``v2Checkpoint`` table in the tests' S3 bucket, ``delta-ckpt checkpoint`` (V2,
UUID-named, three sidecars, the executors writing through s3a) is killed in turn
(``python -m tests.support.fault_cli crash:<point>``: ``os._exit`` at the point, no cleanup runs)

| point | what exists when the process dies |
|---|---|
| ``sidecar:1`` | the first sidecar published |
| ``sidecars`` | every sidecar published, no top-level file |
| ``top-level`` | the top-level file published, ``_last_checkpoint`` not written |

After each crash our reader and deltalake report the state from before, and before the top-level
file no checkpoint and no ``_last_checkpoint`` exist. A re-run then succeeds; our reader uses the greater
file name of the two complete UUID-named checkpoints of that version (the crashed run's top-level
file and the re-run's, ``CKPT-READ-004``). The sidecars of the runs killed before their top-level
file are orphans, and a cleanup after the retention period deletes every one of them and keeps
the checkpoints' sidecars. (The writer's hidden staging prefixes of
the crashed runs stay: no reader lists them, and the cleaner never enters a directory.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from conformance.adapters.deltalake import deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_jars import cached_s3a_jars
from conformance.plugin import unavailable
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.read.snapshot import read_snapshot
from reference_impl.storage import Location, Storage, storage_for
from tests.reference_impl.write.helpers import small_v2_table
from tests.support import REPO_ROOT
from tests.support.faults import CRASH_EXIT_STATUS
from tests.support.servers.seaweed import S3Server

POINTS = ("sidecar:1", "sidecars", "top-level")
DAY_MS = 86_400_000


def run_cli(
    root: Location, options: dict[str, str], jars: str, fault: str
) -> subprocess.CompletedProcess[str]:
    """``delta-ckpt --conf spark.jars=… checkpoint s3://… --spec v2 --naming uuid --json`` with the fault hooks."""
    argv = [sys.executable, "-m", "tests.support.fault_cli", fault, "--conf", f"spark.jars={jars}"]
    argv += [
        "checkpoint",
        root.uri,
        "--spec",
        "v2",
        "--naming",
        "uuid",
        "--actions-per-sidecar",
        "4",
        "--json",
    ]
    argv += [f"--storage-option={k}={v}" for k, v in options.items()]
    env = {**os.environ, "DELTA_CKPT_SPARK_MASTER": "local[2]"}
    return subprocess.run(
        argv, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900, check=False
    )


def listing(storage: Storage, root: Location) -> dict[str, int]:
    """Visible files of ``_delta_log`` and ``_delta_log/_sidecars`` (relative names) and their mtimes."""
    log = root / "_delta_log"
    out = {f.name: f.mtime_ms for f in storage.list_dir(log)}
    out |= {f"_sidecars/{f.name}": f.mtime_ms for f in storage.list_dir(log / "_sidecars")}
    return out


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-WRITE-004")
def test_crashes_on_s3_leave_the_previous_state_and_cleanup_collects_the_orphans(
    s3_spark: SparkSession, s3_server: S3Server, tmp_path: Path
) -> None:
    """Killed at each publication point: the previous state everywhere; a re-run succeeds; cleanup takes the orphans.

    Spec: CKPT-WRITE-004
    "A writer MUST finish writing every sidecar file before the top-level file that references it
    becomes visible, and every file of a checkpoint before it updates `_last_checkpoint` to
    describe that checkpoint."
    """
    jars = cached_s3a_jars()
    if jars is None:
        unavailable("Hadoop's S3A connector", "not resolved (run `delta-ckpt env --resolve-jars`)")
        return
    classpath = ",".join(str(j) for j in jars)
    options = s3_server.storage_options()
    root = Location.parse(s3_server.uri(f"crash-{uuid.uuid4().hex[:8]}"))
    storage = storage_for(root, options)
    local = small_v2_table(tmp_path / "table")
    for file in sorted((local / "_delta_log").iterdir()):
        storage.write_new(root / "_delta_log" / file.name, file.read_bytes())
    commits = sorted(listing(storage, root))
    ours_before = read_snapshot(s3_spark, root.uri, storage_options=options).table_state()
    rust_before = deltalake_state(root.uri, storage_options=options)
    crashed_sidecars: set[str] = set()
    orphans: set[str] = set()  # sidecars no top-level file references: those of the runs killed before it
    crashed_top = ""
    for point in POINTS:
        proc = run_cli(root, options, classpath, f"crash:{point}")
        assert proc.returncode == CRASH_EXIT_STATUS, (
            f"{root} crash:{point}: exit {proc.returncode}, stderr {proc.stderr[-2000:]!r}"
        )
        names = sorted(listing(storage, root))
        new = [n for n in names if n not in commits and not n.startswith("_sidecars/")]
        sidecars = {n for n in names if n.startswith("_sidecars/")}
        assert sidecars - crashed_sidecars, f"{root} crash:{point}: no sidecar published before the crash"
        if point != "top-level":
            orphans |= sidecars - crashed_sidecars
        crashed_sidecars |= sidecars
        if point == "top-level":
            assert len(new) == 1 and ".checkpoint." in new[0], f"{root} crash:{point}: new files {new}"
            crashed_top = new[0]
        else:
            assert new == [], f"{root} crash:{point}: a checkpoint or _last_checkpoint appeared: {new}"
        assert "_last_checkpoint" not in names, f"{root} crash:{point}: _last_checkpoint written"
        ours = read_snapshot(s3_spark, root.uri, storage_options=options).table_state()
        assert_states_equal(ours_before, ours, context=f"{root} crash:{point}: our reader before vs after")
        rust = deltalake_state(root.uri, storage_options=options)
        assert_states_equal(
            rust_before,
            rust,
            context=f"{root} crash:{point}: deltalake before vs after",
            ignore=unavailable_fields(rust),
        )
        commits = [n for n in names if not n.startswith("_sidecars/")]  # a published top-level file stays
    proc = run_cli(root, options, classpath, "")
    assert proc.returncode == 0, f"{root} re-run: exit {proc.returncode}, stderr {proc.stderr[-2000:]!r}"
    result = json.loads(proc.stdout)
    kept = {f["name"] for f in result["files"] if f["role"] == "sidecar"}
    top = [f["name"] for f in result["files"] if f["role"] == "top-level"]
    ours = read_snapshot(s3_spark, root.uri, storage_options=options).table_state()
    assert_states_equal(ours_before, ours, context=f"{root} re-run: our reader")
    # Two complete UUID-named checkpoints of one version now exist (the crashed run's and the re-run's):
    # a reader takes the greater file name (CKPT-READ-004), whichever run wrote it.
    preferred = max(crashed_top, *top)
    assert ours.source["checkpoint"]["files"] == [preferred], (
        f"{root}: our reader used {ours.source['checkpoint']['files']}, not {preferred} "
        f"(crashed run {crashed_top}, re-run {top})"
    )
    assert orphans and not kept & crashed_sidecars, f"{root}: crashed {crashed_sidecars}, re-run {kept}"
    now = max(listing(storage, root).values()) + 31 * DAY_MS  # past the default 30-day retention
    cleaned = cleanup(root.uri, now_ms=now, spark=s3_spark, storage_options=options)
    left = set(listing(storage, root))
    assert not orphans & left, f"{root}: cleanup left the orphans {sorted(orphans & left)} ({cleaned.status})"
    assert kept <= left and set(top) <= left, (
        f"{root}: cleanup deleted the re-run's checkpoint: left {sorted(left)}"
    )
    after = read_snapshot(s3_spark, root.uri, storage_options=options).table_state()
    assert after.files == ours_before.files, f"{root}: files differ after cleanup"
