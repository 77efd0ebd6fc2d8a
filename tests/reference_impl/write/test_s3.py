"""Checkpoints of tables on S3: Spark's executors write through s3a to a real SeaweedFS on 127.0.0.1.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``), §18 Metadata cleanup, §19.4 Stores.

The test session carries Hadoop's S3A connector (``hadoop-aws`` and the S3 parts of the AWS SDK v2,
resolved at setup: :func:`conformance.oracles.delta_jars.s3a_coordinates`). Every checkpoint kind
written at ``s3://`` by a Spark cluster (the driver through obstore, the executors through
``s3a://``) and read back by our reader, deltalake and delta-spark is in ``test_cluster_stores.py``.
Cleanup on S3 (compatibility checkpoint, sidecar GC) must decide as the same cleanup on a
local copy with the same modification times.
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

from conformance.compare import assert_states_equal
from conformance.tables.builder import metadata, protocol, schema, schema_field, write_log
from fixtures import FIXTURES_DIR
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.cleanup.plan import FileDecision
from reference_impl.cli.main import main
from reference_impl.hooks import NoHooks, PublicationPoint
from reference_impl.log.naming import commit_name
from reference_impl.read.snapshot import read_snapshot
from reference_impl.storage import Location, storage_for
from spec.table_state import TableState
from spec.vocabulary import LogFileKind
from tests.reference_impl.cleanup.conftest import CleanupTables
from tests.support.listings import log_files
from tests.support.servers.seaweed import S3Server
from tests.support.store_tables import log_listing, upload

DAY_MS = 86_400_000


class DeleteRequests(NoHooks):
    """Counts the server's ``DELETE`` requests (a DeleteObjects is one) from the compatibility checkpoint on.

    SeaweedFS counts a request after it has answered it, so the total is read once the test has done
    its later reads (no delete among them), not at the cleaner's last point.
    """

    def __init__(self, server: S3Server) -> None:
        self.server = server
        self.before: int | None = None

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        if point is PublicationPoint.COMPAT_WRITTEN:
            self.before = self.server.requests_by_type()["DELETE"]

    def since_compat(self) -> int:
        assert self.before is not None, "the cleaner never reached cleanup:compat"
        return self.server.requests_by_type()["DELETE"] - self.before


def expected_batches(deleted: list[FileDecision]) -> int:
    """Deletion batches: one a checkpoint version's files, one a commit (and one before the first of
    them, if the log's deletions start with neither), one of sidecars, one a staging directory."""
    log = [d for d in deleted if d.kind not in (LogFileKind.SIDECAR, LogFileKind.STAGING)]
    commits = sum(d.kind is LogFileKind.COMMIT for d in log)
    starts = (
        len({d.version for d in log if d.kind.is_checkpoint})
        + commits
        + int(bool(log) and not (log[0].kind.is_checkpoint or log[0].kind is LogFileKind.COMMIT))
    )
    sidecars = any(d.kind is LogFileKind.SIDECAR for d in deleted)
    return starts + int(sidecars) + sum(d.kind is LogFileKind.STAGING for d in deleted)


@pytest.fixture(scope="module")
def s3_tables(s3_server: S3Server) -> Location:
    return Location.parse(s3_server.uri(f"tables-{uuid.uuid4().hex[:8]}"))


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-CLEAN-004")
def test_cleanup_on_s3_equals_cleanup_on_local_disk(
    s3_spark: SparkSession,
    cleanup_tables: CleanupTables,
    s3_server: S3Server,
    s3_tables: Location,
    tmp_path: Path,
) -> None:
    """The cleanup base (UUID-named V2 checkpoints, shared sidecars, a compatibility checkpoint to write)
    on S3 and on a local copy given the S3 modification times: cleaned four days later, same deletions,
    same compatibility checkpoint, same files left, same state. On S3 the files go in batches (one
    DeleteObjects from each checkpoint version on, one of sidecars: CKPT-CLEAN-022's order), counted
    by the server: fewer requests than files.

    Spec: CKPT-CLEAN-004
    "A cleaner that finds no complete checkpoint at or before the cutoff commit MUST NOT delete any
    commit, checkpoint, checksum or log compaction file."
    """
    options = s3_server.storage_options()
    local = cleanup_tables.copy(tmp_path / "local")
    root = s3_tables / "cleanup"
    storage = storage_for(root, options)
    upload(storage, local.path, root)
    listed = {f.name: f.mtime_ms for f in storage.list_dir(root / "_delta_log")}
    listed |= {f"_sidecars/{f.name}": f.mtime_ms for f in storage.list_dir(root / "_delta_log" / "_sidecars")}
    assert sorted(listed) == sorted(log_files(local.path, hidden=False)), f"{root}: uploaded {sorted(listed)}"
    for name, mtime_ms in listed.items():  # the local copy gets S3's whole-second times
        os.utime(local.log_dir / name, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    now = max(listed.values()) + 4 * DAY_MS  # the table keeps 3 days of log
    deletes = DeleteRequests(s3_server)
    results = {
        "local": cleanup(local.path, now_ms=now, spark=s3_spark),
        "s3": cleanup(root.uri, now_ms=now, spark=s3_spark, storage_options=options, hooks=deletes),
    }
    summary = {k: (r.status, r.deleted_paths(), r.compat) for k, r in results.items()}
    assert summary["s3"] == summary["local"], f"{root}: S3 {summary['s3']} vs local {summary['local']}"
    assert results["local"].deleted_sidecars and results["local"].compat is not None, summary["local"]
    left = sorted(log_files(local.path, hidden=False))
    assert log_listing(storage, root) == left, f"{root}: left {log_listing(storage, root)}, local left {left}"
    ours_local = read_snapshot(s3_spark, local.path, now_ms=now).table_state()
    ours_s3 = read_snapshot(s3_spark, root.uri, now_ms=now, storage_options=options).table_state()
    assert_states_equal(
        ours_local, ours_s3, context=f"{root}: our reader, local (expected) vs S3 after cleanup"
    )
    deleted = results["s3"].deleted
    assert deletes.since_compat() == expected_batches(deleted) < len(deleted), (
        f"{root}: {deletes.since_compat()} DELETE requests for {len(deleted)} files, "
        f"expected {expected_batches(deleted)} batches: {[d.name for d in deleted]}"
    )


@pytest.mark.spark
def test_spark_without_an_s3a_connector_is_one_error_before_any_write(
    s3_server: S3Server, s3_tables: Location, tmp_path: Path
) -> None:
    """``delta-ckpt checkpoint s3://…`` with a plain Spark (no hadoop-aws): exit 2, one STORAGE_ERROR on
    stderr naming hadoop-aws, nothing on stdout, the bucket unchanged."""
    root = s3_tables / "no-connector"
    storage = storage_for(root, s3_server.storage_options())
    local = write_log(tmp_path / "local", [[protocol(1, 2), metadata(schema(schema_field("id", "long")))]])
    upload(storage, local, root)
    before = log_listing(storage, root)
    env = {k: v for k, v in os.environ.items() if k != "DELTA_CKPT_SPARK_CONF"}
    argv = [sys.executable, "-m", "reference_impl.cli", "checkpoint", root.uri, "--quiet"]
    argv += [f"--storage-option={k}={v}" for k, v in s3_server.storage_options().items()]
    proc = subprocess.run(
        argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False
    )
    err = proc.stderr.splitlines()  # all of it: the JVM's start-up notice is filtered out by the CLI
    assert proc.returncode == 2 and proc.stdout == "", (
        f"{root}: exit {proc.returncode}, stdout {proc.stdout!r}"
    )
    assert len(err) == 1 and err[0].startswith("STORAGE_ERROR: ") and "hadoop-aws" in err[0], (
        f"{root}: stderr {proc.stderr!r}"
    )
    assert f"[file: {root.uri}]" in err[0], err[0]
    assert log_listing(storage, root) == before, f"{root}: the bucket changed"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-006")
def test_an_s3a_table_is_read_and_cleaned_through_hadoop_and_refused_by_the_writer(
    s3_spark: SparkSession, s3_server: S3Server, s3_tables: Location, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ``v1_classic`` golden table on SeaweedFS, named ``s3a://``: our reader (through Hadoop's S3A in the
    JVM) reports the golden state, as it does through ``s3://``; ``delta-ckpt checkpoint`` exits 2 with one
    STORAGE_ERROR (S3A's ``create(overwrite=false)`` is not atomic) and writes nothing; cleanup deletes the
    commits below the checkpoint, its invariants (the state unchanged) checked.

    Spec: CKPT-WRITE-006
    "A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    see it partially written, and MUST NOT publish a UUID-named top-level file under a name that an
    existing file already has"
    """
    golden = FIXTURES_DIR / "valid" / "v1_classic"
    descriptor = json.loads((golden / "fixture.json").read_text())
    expected = TableState.from_json(json.loads((golden / "expected" / "v4" / "table_state.json").read_text()))
    options = s3_server.storage_options()
    root = s3_tables / "s3a"
    storage = storage_for(root, options)
    upload(storage, golden / "table", root)
    s3a = Location("s3a", root.authority, root.path)
    ours = read_snapshot(s3_spark, s3a.uri, now_ms=descriptor["nowMs"], storage_options=options)
    assert_states_equal(expected, ours.table_state(), context=f"{s3a}: golden v4 vs our reader through s3a")
    before = log_listing(storage, root)
    status = main(["checkpoint", s3a.uri, *(f"--storage-option={k}={v}" for k, v in options.items())])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, f"{s3a}: exit {status}, stderr {err}"
    assert err[0].startswith("STORAGE_ERROR: ") and "[rule: CKPT-WRITE-006]" in err[0], err[0]
    assert f"[file: {s3a.uri}/_delta_log]" in err[0], err[0]
    assert log_listing(storage, root) == before, f"{root}: the writer changed the log"
    now = max(f.mtime_ms for f in storage.list_dir(root / "_delta_log")) + 3 * DAY_MS
    result = cleanup(s3a.uri, now_ms=now, retention_ms=DAY_MS, spark=s3_spark, storage_options=options)
    gone = [commit_name(v) for v in (0, 1, 2)]
    assert result.deleted_paths() == gone, f"{s3a}: deleted {result.deleted_paths()}"
    assert log_listing(storage, root) == [n for n in before if n not in gone], f"{root}: left"
