"""``delta-ckpt`` on a Spark cluster: ``local-cluster[2,1,1024]``, two workers whose executors are separate JVMs.

Spec: ``spec/checkpoints.md`` §17.2 Publication order (the executors write sidecars straight to the
table's store), §19.4 Stores.

The command runs as a user runs it (a subprocess, ``--master "local-cluster[2,1,1024]"``, through
:mod:`tests.support.cli_runs` as the crash tests run it) on a
7-commit table with the ``v2Checkpoint`` feature on local disk, and writes a V2 checkpoint with
several sidecars. (Every checkpoint kind written by such a cluster on HDFS and on S3, the S3A
connector shipped to the executors with ``spark.jars``, is in
``tests/reference_impl/write/test_cluster_stores.py``: one cluster for all of them.) Its whole output is checked: stdout is exactly the
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
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from reference_impl.read.snapshot import read_snapshot
from tests.reference_impl.write.helpers import small_v2_table
from tests.support.cli_runs import checkpoint_argv, run_checkpoint

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
