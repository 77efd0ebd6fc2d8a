"""``python -m tests.support.cluster_writes SETTINGS OUT < WRITES``: checkpoints of many tables written by one Spark cluster.

Spec: ``spec/checkpoints.md`` §17.2 Publication order (the executors write parts and sidecars
straight to the table's store; sidecars at their final names), §19.4 Stores.

One process, one session on the master ``SETTINGS`` names (the tests: ``local-cluster[2,1,1024]``,
two workers whose executors are JVMs of their own, started by the workers as child processes of
the driver's JVM) writes a checkpoint of each table of ``WRITES`` with the Python API
(:func:`~reference_impl.write.writer.write_checkpoint`, the code path of ``delta-ckpt checkpoint``):
one cluster start for every table (a ``delta-ckpt`` process per table would start one each).
``SETTINGS`` is a JSON file, ``{"master": URL, "conf": {key: value}}``; the session starts at once,
and ``WRITES`` is read from standard input after that (so the caller may prepare the tables while
the cluster starts): a JSON list of ``{"table": URI, "kind": a key of CHECKPOINT_KINDS,
"storageOptions": {…}}`` (other members are kept). ``OUT`` gets a JSON document with, for each
write, its result (``CheckpointResult.to_json``), the tasks each executor completed during it
(Spark's status store: executor id → tasks), and the files found in the writer's staging
directory and in ``_delta_log/_sidecars`` on the table's store when the writer reached ``staged`` (its
Spark job done, its files read back, nothing of them written by the driver); and, for the run, the driver
JVM's process id and each executor's id and the process id of its JVM (a descendant process of the
driver's JVM whose command line names that executor id). The session is stopped at the end.
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from reference_impl.hooks import NoHooks, PublicationPoint
from reference_impl.log.naming import SIDECAR_DIR, is_staging_dir_name
from reference_impl.spark.session import get_spark, settings_from_env, stop_quietly
from reference_impl.storage import Location, Storage, storage_for
from reference_impl.write.writer import write_checkpoint
from tests.reference_impl.write.helpers import CHECKPOINT_KINDS

_EXECUTOR_ID = re.compile(r"--executor-id (\S+)")


class FilesOnTheStore(NoHooks):
    """At ``staged`` (the Spark job that wrote the parts or sidecars ended and its files were read back; the
    driver has written nothing of them), records the files in the writer's staging directories on the
    table's store, and the files in ``_delta_log/_sidecars``."""

    def __init__(self, storage: Storage, table: Location) -> None:
        self.storage, self.log = storage, table / "_delta_log"
        self.staged: list[str] = []
        self.sidecars: list[str] = []

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        if point is PublicationPoint.STAGED:
            for name in self.storage.list_subdirs(self.log):
                if is_staging_dir_name(name):
                    self.staged += [f"{name}/{f.name}" for f in self.storage.list_tree(self.log / name)]
            self.sidecars = [f.name for f in self.storage.list_dir(self.log / SIDECAR_DIR)]


def completed_tasks(spark: SparkSession) -> dict[str, int]:
    """Tasks completed so far by each executor (``driver`` included), from Spark's status store."""
    context: Any = spark.sparkContext._jsc.sc()
    context.listenerBus().waitUntilEmpty()
    summaries = context.statusStore().executorList(False)
    return {
        str(summaries.apply(i).id()): int(summaries.apply(i).completedTasks())
        for i in range(summaries.size())
    }


def executor_processes(spark: SparkSession) -> tuple[int, dict[str, int]]:
    """The driver JVM's process id, and executor id → process id of each executor JVM under it."""
    jvm: Any = spark.sparkContext._jvm
    driver = jvm.java.lang.ProcessHandle.current()
    executors: dict[str, int] = {}
    for process in driver.descendants().toArray():
        match = _EXECUTOR_ID.search(str(process.info().commandLine().orElse("")))
        if match:
            executors[match.group(1)] = int(process.pid())
    return int(driver.pid()), executors


def wait_for_executors(spark: SparkSession, count: int, timeout: float = 300.0) -> None:
    """Return once ``count`` executors have registered (the test asserts that every one ran tasks, and a
    write that starts before the second executor is up runs on the first alone); fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while len([e for e in completed_tasks(spark) if e != "driver"]) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{count} executors did not register in {timeout:.0f} s: {completed_tasks(spark)}"
            )
        time.sleep(0.2)


def write_all(spark: SparkSession, writes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write each table's checkpoint; what each write did and where its tasks ran."""
    done = []
    for write in writes:
        table, options = Location.parse(write["table"]), write["storageOptions"]
        hooks = FilesOnTheStore(storage_for(table, options, session=lambda: spark), table)
        before = completed_tasks(spark)
        result = write_checkpoint(
            table.uri,
            options=replace(CHECKPOINT_KINDS[write["kind"]][1], hooks=hooks),
            spark=spark,
            storage_options=options,
        )
        after = completed_tasks(spark)
        tasks = {executor: n - before.get(executor, 0) for executor, n in after.items()}
        done.append(
            {
                **write,
                "result": result.to_json(),
                "tasks": tasks,
                "staged": hooks.staged,
                "sidecarsWritten": hooks.sidecars,
            }
        )
    return done


def run(settings_path: Path, out_path: Path) -> int:
    settings = json.loads(settings_path.read_text())
    conf = [f"{k}={v}" for k, v in settings["conf"].items()]
    spark = get_spark(settings_from_env(settings["master"], conf))
    try:
        workers = re.fullmatch(r"local-cluster\[(\d+),.*\]", settings["master"])
        wait_for_executors(spark, int(workers.group(1)) if workers else 0)
        writes = write_all(spark, json.loads(sys.stdin.read()))
        driver_pid, executors = executor_processes(spark)
        document = {
            "master": spark.sparkContext.master,
            "driverPid": driver_pid,
            "executorPids": executors,
            "writes": writes,
        }
    finally:
        stop_quietly(spark)
    out_path.write_text(json.dumps(document, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]), Path(sys.argv[2])))
