"""Every checkpoint kind written by a Spark cluster to HDFS and to S3, read back by every reader.

Spec: ``spec/checkpoints.md`` §17.2 Publication order (the executors write parts and sidecars
straight to the table's store), §17.3 Atomicity (``CKPT-WRITE-006``), §19.4 Stores.

The table is the ``rich`` shape (partitions with a null one, deletion vectors, row tracking,
``txn``, tombstones), built by delta-spark on local disk and uploaded, once per checkpoint kind,
to the session's MiniDFSCluster and to its SeaweedFS bucket, while ONE process
(:mod:`tests.support.cluster_writes`: one session on ``local-cluster[2,1,1024]``, two workers whose
executors are JVMs of their own; one cluster start, not one a table) starts; it then writes every kind's
checkpoint on both stores with the Python API, the executors writing straight to the store: parts
staged through Spark's writer (HDFS through Hadoop's client, S3 through ``s3a://`` with the connector
shipped by ``spark.jars``), sidecars created by the tasks at their final names (HDFS through
hdfs-native, S3 through obstore). The first test checks that the executors really were separate JVMs
and wrote: each executor id has a JVM process of its own under the driver's, no task ran in the
driver, both executors ran tasks, each V1 write's staged files were on the table's store, and each
V2 write's sidecars were in ``_sidecars/`` with nothing staged when its job ended. Then, for every store and kind, the
commits before the checkpoint are deleted and each reader must report delta-spark's state from
before and say it used exactly the files the cluster wrote: delta-spark (HDFS through
``HDFSLogStore``; S3 through ``s3a://``), deltalake (S3, with its storage options) and our reader
(both).
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from pyspark.sql import SparkSession

from conformance.adapters.deltalake import deltalake_row_count, deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_jars import cached_s3a_jars
from conformance.oracles.delta_spark import delta_spark_state
from conformance.plugin import unavailable
from reference_impl.read.snapshot import read_snapshot
from reference_impl.storage import Location, storage_for
from tests.reference_impl.write.conftest import ShapeCache
from tests.reference_impl.write.helpers import CHECKPOINT_KINDS
from tests.support import REPO_ROOT
from tests.support.servers.hdfs import HdfsServer
from tests.support.servers.seaweed import S3Server
from tests.support.store_tables import log_listing, prune_commits_before, upload

MASTER = "local-cluster[2,1,1024]"
STORES = ("hdfs", "s3")
TIMEOUT_S = 900.0
#: The driver drops an executor that sent no heartbeat for ``spark.network.timeout`` (120 s by default): on a
#: machine at load 30 (2 cores) one was dropped mid-run and its replacement failed the executor check
#: (``tasks by executor {'0': 4, '1': 6}, executors ['0', '2']``). This run's own limit is TIMEOUT_S. Likewise
#: the local cluster's Master (in the driver's JVM, with the driver's conf: ``LocalSparkCluster`` clones it)
#: removes a Worker, and its executor, that sent no heartbeat for ``spark.worker.timeout`` (seconds, 60 by default).
PATIENT = {"spark.network.timeout": f"{TIMEOUT_S:.0f}s", "spark.worker.timeout": f"{TIMEOUT_S:.0f}"}


@dataclass(frozen=True)
class ClusterRun:
    """What :mod:`tests.support.cluster_writes` reported, and the options of each store."""

    document: dict[str, Any]
    options: dict[str, dict[str, str]]

    def write(self, store: str, kind: str) -> dict[str, Any]:
        """The record of the write of ``kind`` on ``store``."""
        records: list[dict[str, Any]] = self.document["writes"]
        (record,) = [w for w in records if w["store"] == store and w["kind"] == kind]
        return record


@pytest.fixture(scope="module")
def cluster_run(
    delta_spark_session: SparkSession,
    shapes: ShapeCache,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> ClusterRun:
    """Every kind uploaded to both stores, then written by one cluster process (the module docs). The
    cluster process starts first: its driver and executor JVMs start while this process starts the stores
    (when no earlier test of this worker did) and builds and uploads the tables, which need none of them."""
    jars = cached_s3a_jars()
    if jars is None:
        unavailable("Hadoop's S3A connector", "not resolved (run `delta-ckpt env --resolve-jars`)")
        raise AssertionError("unreachable")
    work = tmp_path_factory.mktemp("cluster")
    settings, out = work / "settings.json", work / "out.json"
    settings.write_text(
        json.dumps({"master": MASTER, "conf": {"spark.jars": ",".join(map(str, jars)), **PATIENT}})
    )
    argv = [sys.executable, "-m", "tests.support.cluster_writes", str(settings), str(out)]
    with (
        (work / "stderr.txt").open("w+") as stderr,
        subprocess.Popen(argv, cwd=REPO_ROOT, stdin=subprocess.PIPE, stderr=stderr, text=True) as proc,
    ):
        try:
            hdfs_server: HdfsServer = request.getfixturevalue("hdfs_server")
            s3_server: S3Server = request.getfixturevalue("s3_server")
            writes = _upload_every_kind(delta_spark_session, shapes, hdfs_server, s3_server)
            proc.communicate(json.dumps(writes), timeout=TIMEOUT_S)
        finally:
            proc.kill()  # a no-op once it has exited
        stderr.seek(0)
        assert proc.returncode == 0 and out.exists(), (
            f"{' '.join(argv)}: exit {proc.returncode}; stderr: {stderr.read()[-5000:]}"
        )
    return ClusterRun(json.loads(out.read_text()), {w["store"]: w["storageOptions"] for w in writes})


def _upload_every_kind(
    spark: SparkSession, shapes: ShapeCache, hdfs_server: HdfsServer, s3_server: S3Server
) -> list[dict[str, Any]]:
    """The ``rich`` shape's variant of every kind uploaded to a table of its own on each store: the writes to do."""
    run = uuid.uuid4().hex[:8]
    roots = {"hdfs": hdfs_server.uri(f"cluster-{run}"), "s3": s3_server.uri(f"cluster-{run}")}
    options = {"hdfs": {}, "s3": s3_server.storage_options()}
    writes = []
    for store in STORES:
        for kind, (variant, _) in CHECKPOINT_KINDS.items():
            table = Location.parse(f"{roots[store]}/{kind}")
            upload(
                storage_for(table, options[store], session=lambda: spark),
                shapes.get("rich", variant).path,
                table,
            )
            writes.append(
                {"store": store, "kind": kind, "table": table.uri, "storageOptions": options[store]}
            )
    return writes


@pytest.mark.slow
@pytest.mark.spark
def test_the_cluster_s_executors_are_jvms_of_their_own_and_write_on_the_store(
    cluster_run: ClusterRun,
) -> None:
    """Two executors, each a JVM process under the driver's; every write's tasks ran on them, none in
    the driver, both executors ran some; a V1 write's tasks staged its parts on the table's store, a V2
    write's tasks created its sidecars at their final names in ``_sidecars/`` (nothing staged: when the
    job ended and its files were read back, every sidecar of the checkpoint was there, before the driver
    wrote anything)."""
    document = cluster_run.document
    driver, executors = document["driverPid"], document["executorPids"]
    assert document["master"] == MASTER, f"the session ran on {document['master']}"
    assert len(executors) == 2 and driver not in executors.values() and len(set(executors.values())) == 2, (
        f"executor JVMs {executors}, driver JVM {driver}: expected two executors, each a process of its own"
    )
    ran: dict[str, int] = {}
    for write in document["writes"]:
        tasks = write["tasks"]
        on_executors = {e: n for e, n in tasks.items() if n and e != "driver"}
        assert tasks.get("driver", 0) == 0 and on_executors and set(on_executors) <= set(executors), (
            f"{write['table']}: tasks by executor {tasks}, executors {sorted(executors)}"
        )
        for executor, n in on_executors.items():
            ran[executor] = ran.get(executor, 0) + n
        sidecars = sorted(
            f["name"].removeprefix("_sidecars/") for f in write["result"]["files"] if f["role"] == "sidecar"
        )
        if (
            sidecars
        ):  # the job's tasks created them at their final names: nothing staged, all there when it ended
            assert write["staged"] == [] and sorted(write["sidecarsWritten"]) == sidecars, (
                f"{write['table']}: at `staged`, staging held {write['staged']}, _sidecars held "
                f"{write['sidecarsWritten']}; the checkpoint's sidecars are {sidecars}"
            )
        else:
            staged = [name for name in write["staged"] if name.rsplit("/", 1)[-1].startswith("part-")]
            assert staged and all(name.endswith((".parquet", ".json")) for name in staged), (
                f"{write['table']}: files in the staging directory on the store at `staged`: {write['staged']}"
            )
    assert sorted(ran) == sorted(executors), f"tasks by executor over the run: {ran}, executors {executors}"


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-WRITE-003", "CKPT-WRITE-006", "CKPT-CONTENT-001")
@pytest.mark.parametrize("kind", list(CHECKPOINT_KINDS))
@pytest.mark.parametrize("store", STORES)
def test_every_checkpoint_kind_written_by_a_cluster_is_read_back_by_every_reader(
    store: str,
    kind: str,
    cluster_run: ClusterRun,
    delta_spark: SparkSession,
    shapes: ShapeCache,
    s3_server: S3Server,
) -> None:
    """Written by the cluster on ``store``, commits before it deleted: every reader sees the state from before.

    Spec: CKPT-WRITE-003
    "Writing a checkpoint MUST NOT change the table state that a conforming reader reports for
    any version."
    """
    shape = shapes.get("rich", CHECKPOINT_KINDS[kind][0])
    before = shapes.state_before(shape)
    write, options = cluster_run.write(store, kind), cluster_run.options[store]
    table, result = Location.parse(write["table"]), write["result"]
    assert result["version"] == shape.version, (
        f"{table}: checkpoint of version {result['version']}, latest {shape.version}"
    )
    written = sorted(f["name"] for f in result["files"] if f["role"] != "sidecar")
    sidecars = sorted(f["name"] for f in result["files"] if f["role"] == "sidecar")
    storage = storage_for(table, options, session=lambda: delta_spark)
    logged = log_listing(storage, table)
    assert all(name in logged for name in written), f"{table}: wrote {written}, the log holds {logged}"
    assert [n for n in logged if n.startswith("_sidecars/")] == sidecars, (
        f"{table}: wrote sidecars {sidecars}, the log holds {logged}"
    )
    hidden = [n for n in logged if n.rsplit("/", 1)[-1].startswith(".")]
    assert hidden == [], f"{table}: hidden files {hidden} left in the log"
    if store == "s3":
        # Objects, not "folders": SeaweedFS shows a prefix whose objects were all deleted (the staging
        # directory) as a common prefix for a while (spec §19.4), though it holds nothing.
        raw = s3_server.raw_keys(f"{table.key.strip('/')}/_delta_log/")
        left = [k for k in raw if k.endswith("/") or "/_delta_log/." in k]
        assert left == [], f"{table}: the server lists staging keys or directory markers: {left}"
    else:
        subdirs = storage.list_subdirs(table / "_delta_log")
        assert set(subdirs) <= {"_sidecars"}, f"{table}: directories {subdirs} left in the log"
    assert prune_commits_before(storage, table, result["version"]), f"{table}: nothing to prune"
    states = {
        "our reader": read_snapshot(delta_spark, table.uri, storage_options=options).table_state(),
        "delta-spark": delta_spark_state(delta_spark, table.spark_uri()),
    }
    for reader, state in states.items():
        assert_states_equal(before, state, context=f"{table}: before vs {reader} after")
        assert sorted(state.source["checkpoint"]["files"]) == written, (
            f"{table}: {reader} used {state.source['checkpoint']}, the cluster wrote {written}"
        )
    if store == "s3":
        rust = deltalake_state(table.uri, txn_app_ids=shape.txn_app_ids, storage_options=options)
        assert_states_equal(
            before, rust, context=f"{table}: before vs deltalake after", ignore=unavailable_fields(rust)
        )
        rows = deltalake_row_count(table.uri, storage_options=options)
        assert rows == shapes.rows_before(shape), f"{table}: deltalake counts {rows} rows"
