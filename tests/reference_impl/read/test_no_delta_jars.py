"""The reference reader needs no Delta jars: a plain Spark session reads a delta-spark-built table.

The test process's session carries delta-spark's jars (the oracles need them, and a JVM holds one
SparkContext), so the proof runs in a **subprocess**: it starts ``get_spark()`` — Spark's built-in
sources only, its JVM launched in the background as ``delta-ckpt snapshot`` launches it
(``start_spark``), its stderr free of the JVM's notices — checks that delta-spark's classes cannot be loaded, reads a table that delta-spark
wrote (UUID-named V2 checkpoint with a Parquet top-level file and sidecars, commits after it) with
``read_snapshot`` and prints the resulting ``TableState`` as JSON. The in-process reader (same code,
session with the jars) must produce the identical state.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from pyspark.sql import SparkSession

from conformance.oracles.session import has_delta_classes
from conformance.tables.real_writers import shared_cache
from reference_impl.read.snapshot import read_snapshot
from spec.spark_conf import ENV_CONF, ENV_MASTER
from spec.table_state import TableState
from tests.support import REPO_ROOT

CHILD = textwrap.dedent(
    """
    import json, sys
    from conformance.oracles.session import has_delta_classes
    from reference_impl.spark.session import get_spark, settings_from_env, start_spark
    start_spark(settings_from_env())
    from reference_impl.read.snapshot import read_snapshot
    spark = get_spark()
    jars = spark.sparkContext.getConf().get("spark.jars", "")
    extensions = spark.sparkContext.getConf().get("spark.sql.extensions", "")
    state = read_snapshot(spark, sys.argv[1]).table_state()
    print("RESULT " + json.dumps({
        "hasDeltaClasses": has_delta_classes(spark),
        "jars": jars,
        "extensions": extensions,
        "state": state.to_json(),
    }))
    """
)


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.delta_spark
def test_reader_runs_without_delta_jars(
    delta_spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A jar-free subprocess reconstructs a delta-spark table exactly as the in-process reader does."""
    assert has_delta_classes(delta_spark), "the in-process session should be the one with delta-spark's jars"
    built = shared_cache(delta_spark, lambda: tmp_path_factory.mktemp("built-tables")).get("v2-parquet")
    env = {k: v for k, v in os.environ.items() if k not in (ENV_CONF, "PYSPARK_SUBMIT_ARGS")}
    env[ENV_MASTER] = "local[1]"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(built.path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=REPO_ROOT,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        f"subprocess failed (exit {proc.returncode}) reading {built.path}:\n{proc.stderr[-3000:]}"
    )
    assert "WARNING: Using incubator modules" not in proc.stderr, proc.stderr[-3000:]
    child = json.loads(lines[-1][len("RESULT ") :])
    assert child["hasDeltaClasses"] is False, (
        f"the plain session can load delta-spark's classes: jars={child['jars']!r}"
    )
    assert "delta" not in child["jars"].lower() and "delta" not in child["extensions"].lower(), child
    theirs = TableState.from_json(child["state"])
    ours = read_snapshot(delta_spark, built.path).table_state()
    assert theirs.source["checkpoint"]["kind"] == "uuid" and theirs.source["checkpoint"]["sidecars"], (
        theirs.source
    )
    assert theirs.to_json() == ours.to_json(), (
        f"{built.path}: the jar-free reader and the in-process reader disagree:\n"
        f"subprocess: {json.dumps(theirs.to_json(), sort_keys=True)[:1500]}\n"
        f"in-process: {json.dumps(ours.to_json(), sort_keys=True)[:1500]}"
    )
