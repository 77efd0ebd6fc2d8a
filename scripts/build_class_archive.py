"""Build the driver JVM's class archive (``reference_impl.storage.class_archive``) once, into the cache.

Run by ``scripts/bootstrap.sh``; ``--force`` rebuilds. Pyspark's signed jars (Janino) are first
copied without their signatures (``class_archive.write_unsigned_jars``), for the archive to hold
their classes. A child process runs a training workload — a
V2 checkpoint with a sidecar of a 3-commit table, then its snapshot and summary, in a temporary
directory — with the reference's local session and ``-XX:ArchiveClassesAtExit``; its JVM dumps
the classes it loaded as it exits (the gateway exits when the child closes its stdin). The archive
is written under a temporary name and renamed into place. Its JVM's dump warnings (classes of
signed jars, generated classes: not archived) are kept out of the output unless the build fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reference_impl.storage import class_archive  # noqa: E402


def build(*, force: bool = False) -> Path | None:
    """The archive for this Java and pyspark, built unless it exists with its unsigned jars; ``None``
    without Java. An archive whose jars are gone is built again: the JVM maps an archive only with the
    classpath it was trained on (the jars' sizes and times), so new copies need a new archive."""
    path = class_archive.archive_path()
    jars = class_archive.unsigned_jars_dir()
    if path is None or (path.is_file() and jars is not None and jars.is_dir() and not force):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    _unsigned_jars()
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DELTA_CKPT_SPARK", "PYSPARK_SUBMIT", "SPARK_"))
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory(prefix="delta-ckpt-cds-") as work:
        child = [sys.executable, __file__, "--train", work, str(partial)]
        done = subprocess.run(
            child, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False
        )
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        tail = "\n".join(done.stdout.strip().splitlines()[-5:])
        raise RuntimeError(f"the class archive could not be built (exit {done.returncode}): {tail}")
    os.replace(partial, path)
    return path


def _unsigned_jars() -> None:
    """The unsigned copies of pyspark's signed jars (Janino) the training and the sessions put first on the
    driver's classpath, written under a temporary name and renamed into place (unless there)."""
    target = class_archive.unsigned_jars_dir()
    if target is None or target.is_dir():
        return
    with tempfile.TemporaryDirectory(prefix=f"{target.name}.", dir=target.parent) as work:
        staged = Path(work) / "jars"
        class_archive.write_unsigned_jars(staged)
        staged.mkdir(exist_ok=True)
        os.replace(staged, target)


def training_table(root: Path) -> Path:
    """A 3-commit table with the ``v2Checkpoint`` feature: two adds; a remove and an add; a txn and an add."""
    table = root / "table"
    log = table / "_delta_log"
    log.mkdir(parents=True)
    schema = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]}
    protocol = {"minReaderVersion": 3, "minWriterVersion": 7}
    features = {"readerFeatures": ["v2Checkpoint"], "writerFeatures": ["v2Checkpoint"]}
    metadata = {
        "id": "00000000-0000-4000-8000-000000000000",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": json.dumps(schema),
        "partitionColumns": [],
        "configuration": {},
        "createdTime": 0,
    }
    stats = {"numRecords": 1, "minValues": {"id": 1}, "maxValues": {"id": 1}, "nullCount": {"id": 0}}

    def add(name: str) -> dict[str, object]:
        fields = {"path": name, "partitionValues": {}, "size": 1, "modificationTime": 0, "dataChange": True}
        return {"add": {**fields, "stats": json.dumps(stats)}}

    commits = [
        [{"protocol": {**protocol, **features}}, {"metaData": metadata}, add("a.parquet"), add("b.parquet")],
        [{"remove": {"path": "a.parquet", "deletionTimestamp": 0, "dataChange": True}}, add("c.parquet")],
        [{"txn": {"appId": "training", "version": 1}}, add("d.parquet")],
    ]
    for version, actions in enumerate(commits):
        (log / f"{version:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))
    return table


def train(work: Path, partial: Path) -> None:
    """Run the training workload in a driver that dumps its classes into ``partial`` as it exits."""
    from pyspark.sql import SparkSession

    from reference_impl.read.snapshot import read_snapshot
    from reference_impl.spark.session import SparkSettings, session_conf
    from reference_impl.write.options import CheckpointOptions
    from reference_impl.write.writer import write_checkpoint
    from spec.spark_conf import LOCAL_CONF, SPARK_CONF_DIR
    from spec.vocabulary import CheckpointSpec

    dump = f"{class_archive.log4j_flag(SPARK_CONF_DIR)} -XX:ArchiveClassesAtExit={partial}"
    java = f"{LOCAL_CONF['spark.driver.extraJavaOptions']} {dump}"
    conf = {"spark.driver.extraJavaOptions": java}
    classpath = class_archive.archive_classpath()  # as the sessions that map the archive
    if classpath is not None:
        conf["spark.driver.extraClassPath"] = classpath
    settings = SparkSettings(master="local[2]", conf=conf)
    builder = SparkSession.builder.master(settings.master).appName(settings.app_name)
    for key, value in session_conf(settings).items():
        builder = builder.config(key, value)
    os.environ["SPARK_CONF_DIR"] = str(class_archive.empty_conf_dir())  # as the sessions that map it
    spark = builder.getOrCreate()
    table = training_table(work)
    write_checkpoint(str(table), 1, CheckpointOptions(spec=CheckpointSpec.V2), spark=spark)
    read_snapshot(spark, str(table)).table_state()
    read_snapshot(spark, str(table)).summary()
    gateway = spark.sparkContext._gateway
    assert gateway is not None
    jvm = gateway.proc
    spark.stop()
    jvm.stdin.close()  # the gateway exits on EOF, dumping the archive
    jvm.wait()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--train"]:
        train(Path(argv[1]), Path(argv[2]))
        return 0
    path = build(force="--force" in argv)
    print(f"[setup] Spark class archive: {path if path else 'not built (no java)'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
