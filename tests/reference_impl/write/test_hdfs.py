"""Checkpoints of tables on HDFS: a real MiniDFSCluster on 127.0.0.1 (``tests/support/servers/hdfs.py``).

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``), §18 Metadata cleanup, §19.4 Stores.

Every checkpoint kind written at ``hdfs://`` by a Spark cluster and read back by delta-spark and
our reader is in ``test_cluster_stores.py``. Cleanup on HDFS must leave the same files as
the same cleanup on a local copy. A NameNode nobody listens on, and a ``_delta_log`` the user
may not write to (HDFS permissions: the MiniDFSCluster runs as another user, so the tests' user is
not HDFS's superuser), are one ``STORAGE_ERROR`` each, and nothing is written.
"""

from __future__ import annotations

import pickle
import re
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from conformance.compare import assert_states_equal
from conformance.oracles.delta_spark import delta_spark_state
from conformance.tables.builder import metadata, protocol, schema, schema_field, write_log
from conformance.tables.real_writers import NOW
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.cli.main import main
from reference_impl.read.snapshot import read_snapshot
from reference_impl.storage import Location, storage_for
from reference_impl.storage.hadoop import HadoopStorage
from reference_impl.storage.local import is_temp_of
from reference_impl.write import task_files
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.writer import write_checkpoint
from tests.reference_impl.cleanup.conftest import CleanupTables
from tests.reference_impl.write.helpers import no_sidecar_job, small_v2_table
from tests.support.listings import log_files
from tests.support.servers.hdfs import HdfsServer
from tests.support.servers.processes import refused_port

ERROR_LINE = re.compile(
    r"^(?P<code>[A-Z_]+): (?P<message>.+?) \[file: (?P<file>[^\]]+)\]( \[rule: [^\]]+\])?$"
)


def _fs(spark: SparkSession, uri: str) -> Any:
    """A Hadoop FileSystem of the test's own (independent of the storage under test)."""
    jvm: Any = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return jvm.org.apache.hadoop.fs.Path(uri).getFileSystem(conf)


def upload(spark: SparkSession, local: Path, uri: str) -> str:
    """Copy the local table ``local`` to ``uri`` with Hadoop's copy, keeping the log's modification times
    (the cleaner reads them); Hadoop's hidden ``.<name>.crc`` files stay behind."""
    jvm: Any = spark.sparkContext._jvm
    fs = _fs(spark, uri)
    hadoop_path = jvm.org.apache.hadoop.fs.Path
    fs.copyFromLocalFile(False, True, hadoop_path(local.as_uri()), hadoop_path(uri))
    for file in (local / "_delta_log").rglob("*"):
        if file.is_file() and not file.name.startswith("."):  # not Hadoop's own .<name>.crc
            relative = file.relative_to(local).as_posix()
            fs.setTimes(hadoop_path(f"{uri}/{relative}"), file.stat().st_mtime_ns // 1_000_000, -1)
    return uri


def log_listing(spark: SparkSession, uri: str) -> list[str]:
    """Files in ``uri``'s ``_delta_log`` and ``_delta_log/_sidecars`` (relative to ``_delta_log``), sorted."""
    log = f"{uri}/_delta_log"
    return sorted([*names_in(spark, log), *(f"_sidecars/{n}" for n in names_in(spark, f"{log}/_sidecars"))])


def names_in(spark: SparkSession, uri: str) -> list[str]:
    """Names of the files directly in ``uri`` (a directory), sorted."""
    jvm: Any = spark.sparkContext._jvm
    fs = _fs(spark, uri)
    path = jvm.org.apache.hadoop.fs.Path(uri)
    if not fs.exists(path):
        return []
    return sorted(str(s.getPath().getName()) for s in fs.listStatus(path) if s.isFile())


@pytest.fixture(scope="module")
def hdfs_tables(hdfs_server: HdfsServer) -> str:
    """A directory of this module's tables on the session's HDFS."""
    return hdfs_server.uri(f"tables-{uuid.uuid4().hex[:8]}")


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-CLEAN-004")
def test_cleanup_on_hdfs_equals_cleanup_on_local_disk(
    delta_spark: SparkSession, cleanup_tables: CleanupTables, hdfs_tables: str, tmp_path: Path
) -> None:
    """The cleanup base (UUID-named V2 checkpoints with shared sidecars, a compatibility checkpoint to
    write) cleaned at ``NOW`` on HDFS and on a local copy: same decisions, same files left, same state.

    Spec: CKPT-CLEAN-004
    "A cleaner that finds no complete checkpoint at or before the cutoff commit MUST NOT delete any
    commit, checkpoint, checksum or log compaction file."
    """
    local = cleanup_tables.copy(tmp_path / "local")
    remote = upload(delta_spark, local.path, f"{hdfs_tables}/cleanup")
    before = log_listing(delta_spark, remote)
    expected_before = sorted(log_files(local.path, hidden=False))
    assert before == expected_before, f"{remote}: uploaded {before}, local {expected_before}"
    results = {
        where: cleanup(table, now_ms=NOW, spark=delta_spark)
        for where, table in (("local", str(local.path)), ("hdfs", remote))
    }
    assert results["hdfs"].status == results["local"].status, (
        f"{remote}: status {results['hdfs'].status}, local {results['local'].status}"
    )
    assert results["hdfs"].deleted_paths() == results["local"].deleted_paths(), (
        f"{remote}: deleted {results['hdfs'].deleted_paths()}, local {results['local'].deleted_paths()}"
    )
    assert results["local"].deleted_sidecars and results["local"].compat is not None
    assert results["hdfs"].compat == results["local"].compat, (
        f"{remote}: compatibility checkpoint {results['hdfs'].compat}, local {results['local'].compat}"
    )
    left_local = sorted(log_files(local.path, hidden=False))
    assert log_listing(delta_spark, remote) == left_local, (
        f"{remote}: left {log_listing(delta_spark, remote)}, local left {left_local}"
    )
    ours_local = read_snapshot(delta_spark, local.path, now_ms=NOW).table_state()
    ours_hdfs = read_snapshot(delta_spark, remote, now_ms=NOW).table_state()
    assert_states_equal(
        ours_local, ours_hdfs, context=f"{remote}: our reader, local (expected) vs HDFS after cleanup"
    )
    assert_states_equal(
        ours_local,
        delta_spark_state(delta_spark, remote, now_ms=NOW),
        context=f"{remote}: our reader on the local copy (expected) vs delta-spark on HDFS after cleanup",
    )


@pytest.mark.spark
def test_hdfs_storage_operations(spark: SparkSession, hdfs_tables: str) -> None:
    """Create-if-absent never replaces, replace is atomic, listings carry millisecond times, deletes report;
    HDFS's guarantees only through Hadoop's own HDFS classes (a user's ``fs.hdfs.impl`` gets none)."""
    root = Location.parse(f"{hdfs_tables}/ops")
    storage = storage_for(root, session=lambda: spark)
    assert isinstance(storage, HadoopStorage) and storage.guarantees.partial_writes_visible
    assert storage.guarantees.atomic_create, f"{root}: {storage.guarantees}"
    other = storage_for(
        root, {"fs.hdfs.impl": "org.apache.hadoop.fs.RawLocalFileSystem"}, session=lambda: spark
    )
    assert not other.guarantees.atomic_create, f"{root} with fs.hdfs.impl overridden: {other.guarantees}"
    log = root / "_delta_log"
    storage.write_new(log / "00000000000000000000.json", b"{}\n")
    with pytest.raises(FileExistsError):
        storage.write_new(log / "00000000000000000000.json", b"other")
    assert storage.read_bytes(log / "00000000000000000000.json") == b"{}\n"
    storage.write_replace(log / "_last_checkpoint", b"{}")
    storage.write_replace(log / "_last_checkpoint", b'{"version":0}')
    assert storage.read_bytes(log / "_last_checkpoint") == b'{"version":0}'
    storage.set_mtime(log / "_last_checkpoint", 1_700_000_000_123)
    listed = storage.list_dir(log)
    assert [(f.name, f.size) for f in listed] == [
        ("00000000000000000000.json", 3),
        ("_last_checkpoint", 13),
    ], f"{log}: {listed} (no temp file may be left)"
    assert listed[1].mtime_ms == 1_700_000_000_123, f"{log}/_last_checkpoint: mtime {listed[1].mtime_ms}"
    with storage.open_read(log / "_last_checkpoint") as stream:
        stream.seek(-2, 2)
        assert stream.read() == b"0}"
    assert (
        storage.delete(log / "_last_checkpoint") is True and storage.delete(log / "_last_checkpoint") is False
    )
    assert storage.list_dir(root / "missing") == [] and storage.stat(log / "missing") is None
    storage.remove_tree(root)
    assert not storage.is_dir(root)


@pytest.mark.spark
def test_unreachable_namenode_is_one_error(spark: SparkSession, capsys: pytest.CaptureFixture[str]) -> None:
    """``delta-ckpt checkpoint hdfs://127.0.0.1:<closed port>/t``: exit 2, one STORAGE_ERROR naming the table."""
    uri = f"hdfs://127.0.0.1:{refused_port()}/t"
    status = main(["checkpoint", uri])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, f"{uri}: exit {status}, stderr {err}"
    match = ERROR_LINE.match(err[0])
    assert match and match["code"] == "STORAGE_ERROR", f"{uri}: {err[0]!r}"
    assert "cannot reach the NameNode 127.0.0.1" in match["message"] and match["file"].startswith(uri), err[0]


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-011")
def test_read_only_log_on_hdfs_is_one_error_and_writes_nothing(
    spark: SparkSession, hdfs_tables: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``delta-ckpt checkpoint`` on a table whose ``_delta_log`` is mode 555 on HDFS: exit 2, one
    STORAGE_ERROR naming the log, nothing written (not even the writability probe).

    Spec: CKPT-WRITE-011
    "A writer asked to checkpoint a table whose `_delta_log/` it cannot create files in (a read-only
    directory, missing write permission, credentials that only read) MUST fail with `STORAGE_ERROR`
    naming `_delta_log/`, and MUST leave every file of the table as it was."
    """
    write_log(tmp_path / "t", [[protocol(1, 2), metadata(schema(schema_field("id", "long")))]])
    table = upload(spark, tmp_path / "t", f"{hdfs_tables}/read-only")
    jvm: Any = spark.sparkContext._jvm
    fs, log = _fs(spark, table), jvm.org.apache.hadoop.fs.Path(f"{table}/_delta_log")
    fs.setPermission(log, jvm.org.apache.hadoop.fs.permission.FsPermission(0o555))
    before = [str(s.getPath()) for s in fs.listStatus(log)]
    status = main(["checkpoint", table])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1, f"{table}: exit {status}, stderr {err}"
    match = ERROR_LINE.match(err[0])
    assert match and match["code"] == "STORAGE_ERROR", f"{table}: {err[0]!r}"
    assert "not writable" in match["message"] and match["file"] == f"{table}/_delta_log", err[0]
    after = [str(s.getPath()) for s in fs.listStatus(log)]
    assert after == before == [f"{table}/_delta_log/00000000000000000000.json"], (
        f"{table}: the log held {before}, now {after}"
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-006")
def test_hdfs_task_sink_never_shows_a_partial_file_at_its_name(
    spark: SparkSession, hdfs_server: HdfsServer, hdfs_tables: str
) -> None:
    """The sink a Spark task gets on HDFS (hdfs-native, pickled): while its block is held on the DataNode the
    file is only a hidden ``.<name>.<uuid>.tmp`` — nothing at its name, where HDFS would show a partial file;
    released, it appears whole at its name and the temp is gone; a second create keeps it and says so.

    Spec: CKPT-WRITE-006
    > A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    > see it partially written
    """
    directory = Location.parse(f"{hdfs_tables}/sink/_delta_log/_sidecars")
    storage = storage_for(directory, session=lambda: spark)
    storage.mkdirs(directory)
    sink = pickle.loads(pickle.dumps(storage.task_sink(directory)))
    name = "00000000000000000003.checkpoint.0000000001.0000000001.x.parquet"
    data = bytes(range(256)) * 1024
    outcome: list[bool | BaseException] = []

    def create() -> None:
        try:
            outcome.append(sink.create(name, data))
        except BaseException as exc:
            outcome.append(exc)

    task = threading.Thread(target=create)
    with hdfs_server.holding_writes(f"^{re.escape(directory.path)}/[.].*[.]tmp$") as holds:
        task.start()
        assert holds.held.wait(120), f"{directory}: the sink's write was never held"
        during = [f.name for f in storage.list_dir(directory)]
    task.join(120)
    assert len(during) == 1 and is_temp_of(during[0], name), f"{directory} while held: {during}"
    assert outcome == [True], f"{directory}/{name}: {outcome}"
    assert [f.name for f in storage.list_dir(directory)] == [name], "the temp file is gone"
    assert storage.read_bytes(directory / name) == data
    assert sink.create(name, b"another attempt") is False
    assert storage.read_bytes(directory / name) == data, f"{directory}/{name}: the taken file changed"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-005", "CKPT-WRITE-006")
def test_a_small_table_s_sidecar_is_created_on_hdfs_by_the_driver(
    spark: SparkSession, hdfs_tables: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seven-commit V2 table on HDFS: its one sidecar is created by the driver through the HDFS task
    sink (hdfs-native in the driver's Python, no sidecar job), read back (12 adds) and referenced; no
    hidden temp file is left in ``_sidecars/``; our reader reads the state through the checkpoint. The
    cluster and crash tests pass ``actions_per_sidecar`` and so only ever test the tasks' path.

    Spec: CKPT-WRITE-005
    "Before publishing a checkpoint, a writer MUST verify that the number of `add` rows it wrote equals the
    number of live files of the version"
    """
    table = upload(spark, small_v2_table(tmp_path / "t"), f"{hdfs_tables}/driver-sidecar")
    monkeypatch.setattr(task_files, "_map_in_arrow", no_sidecar_job)
    progress = CheckpointOptions().progress
    result = write_checkpoint(table, options=CheckpointOptions(spec="v2", progress=progress), spark=spark)
    phases = [p for p in progress.timings if p.startswith("write sidecars")]
    assert phases == ["write sidecars (by the driver)"], f"{table}: phases {list(progress.timings)}"
    assert [(f.rows, f.adds) for f in result.sidecars] == [(12, 12)], f"{table}: {result.sidecars}"
    directory = Location.parse(f"{table}/_delta_log/_sidecars")
    listed = [f.name for f in storage_for(directory, session=lambda: spark).list_dir(directory)]
    assert [n for n in listed if n.startswith(".")] == [], f"{directory}: {listed}"
    assert result.sidecars[0].name.removeprefix("_sidecars/") in listed, f"{directory}: {listed}"
    snap = read_snapshot(spark, table)
    assert snap.checkpoint is not None and snap.num_files == 12, (
        f"{table}: read through {snap.source()['checkpoint']}, {snap.num_files} files"
    )
