"""``delta-ckpt`` on a Spark cluster: ``local-cluster[2,1,1024]``, two workers whose executors are separate JVMs.

Spec: ``spec/checkpoints.md`` §17.2 Publication order (the executors write sidecars straight to the
table's store), §19.4 Stores.

The command runs as a user runs it (a subprocess, ``--master "local-cluster[2,1,1024]"``, through
:mod:`tests.support.cli_runs` as the crash tests run it) on a
7-commit table with the ``v2Checkpoint`` feature, on local disk and on the tests' S3 server, and
writes a V2 checkpoint with several sidecars. Its whole output is checked: stdout is exactly the
result document (``--json``), stderr is empty — no start-up notice of the JVM, no ERROR stack traces
from executors stopped at shutdown (the command stops Spark itself, quietly) — and the checkpoint is
read back by our reader. (The workers keep their executors' logs under pyspark's ``work/``: Spark's
local cluster takes no other work directory — ``LocalSparkCluster`` starts its workers with no work
directory unless Spark runs in its test mode (``SPARK_TESTING``, which changes Spark's behaviour
elsewhere), and a worker then uses ``$SPARK_HOME/work``; ``SPARK_WORKER_DIR`` is read only by a
standalone worker's command line, and Spark has no ``spark.worker.dir`` setting.)
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from conformance.oracles.delta_jars import cached_s3a_jars
from conformance.plugin import unavailable
from reference_impl.read.snapshot import read_snapshot
from reference_impl.storage import Location, storage_for
from tests.reference_impl.write.helpers import small_v2_table
from tests.support.cli_runs import checkpoint_argv, run_checkpoint
from tests.support.servers.seaweed import S3Server

MASTER = "local-cluster[2,1,1024]"
COMMITS = 7  # as in the report


def check_output(proc: subprocess.CompletedProcess[str], table: str) -> dict[str, Any]:
    """Exit 0, stderr empty, stdout one JSON document: a V2 checkpoint of the last version with sidecars."""
    assert proc.returncode == 0 and proc.stderr == "", (
        f"{table}: exit {proc.returncode}; stderr ({len(proc.stderr.splitlines())} lines): {proc.stderr[-3000:]!r}"
    )
    document: dict[str, Any] = json.loads(proc.stdout)  # the whole stdout is the result, nothing else
    assert document["version"] == COMMITS - 1 and document["spec"] == "v2", f"{table}: {proc.stdout[:500]}"
    sidecars = [f for f in document["files"] if f["role"] == "sidecar"]
    assert len(sidecars) >= 2, (
        f"{table}: expected several sidecars from the executors, got {document['files']}"
    )
    return document


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-003")
def test_cluster_checkpoint_of_a_local_table_prints_only_its_result(
    tmp_path: Path, spark: SparkSession
) -> None:
    """Executors in other JVMs write the sidecars of a local table; the command prints only the JSON result.

    Spec: CKPT-WRITE-003
    "Writing a checkpoint MUST NOT change the table state that a conforming reader reports for
    any version."
    """
    table = small_v2_table(tmp_path / "table")
    before = read_snapshot(spark, table).table_state()
    proc = run_checkpoint(checkpoint_argv(str(table), global_args=("--master", MASTER)), cwd=tmp_path)
    document = check_output(proc, str(table))
    after = read_snapshot(spark, table).table_state()
    assert after.files == before.files, f"{table}: files changed by the checkpoint"
    assert sorted(after.source["checkpoint"]["files"]) == sorted(
        f["name"] for f in document["files"] if f["role"] == "top-level"
    ), f"{table}: our reader used {after.source['checkpoint']}"


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-003")
def test_cluster_checkpoint_of_an_s3_table_prints_only_its_result(
    tmp_path: Path, spark: SparkSession, s3_server: S3Server
) -> None:
    """The same on S3: the executors get the S3A connector with ``--conf spark.jars`` and write through s3a.

    Spec: CKPT-WRITE-003
    "Writing a checkpoint MUST NOT change the table state that a conforming reader reports for
    any version."
    """
    jars = cached_s3a_jars()
    if jars is None:
        unavailable("Hadoop's S3A connector", "not resolved (run `delta-ckpt env --resolve-jars`)")
        return
    local = small_v2_table(tmp_path / "local")
    options = s3_server.storage_options()
    root = Location.parse(s3_server.uri(f"cluster-{uuid.uuid4().hex[:8]}"))
    storage = storage_for(root, options)
    for file in sorted((local / "_delta_log").iterdir()):
        storage.write_new(root / "_delta_log" / file.name, file.read_bytes())
    before = read_snapshot(spark, root.uri, storage_options=options).table_state()
    jars_conf = ("--conf", f"spark.jars={','.join(str(j) for j in jars)}")
    argv = checkpoint_argv(root.uri, global_args=("--master", MASTER, *jars_conf), storage_options=options)
    proc = run_checkpoint(argv, cwd=tmp_path)
    check_output(proc, root.uri)
    after = read_snapshot(spark, root.uri, storage_options=options).table_state()
    assert after.files == before.files, f"{root}: files changed by the checkpoint"
    assert after.source["checkpoint"]["version"] == COMMITS - 1, f"{root}: our reader used {after.source}"
