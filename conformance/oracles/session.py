"""The oracle's SparkSession: Spark plus delta-spark's jars, extension and catalog.

Used by the delta-spark adapter, the ``demo`` command, the foreign fixtures and the tests — never
by the reference implementation, which runs on Spark's built-in sources alone
(``reference_impl.spark.session``).

A JVM holds one SparkContext, so a process gets one session, and whichever side starts it decides
its classpath: :func:`get_delta_spark` refuses a running session without delta-spark's classes.
So that a session either side starts serves both, the oracle starts Spark with the same defaults
as the reference (:data:`BASE_CONF`, :data:`LOCAL_CONF`, the same ``log4j2.properties``) and
honours the same settings: master from ``DELTA_CKPT_SPARK_MASTER`` (default ``local[2]``), extra
conf from ``DELTA_CKPT_SPARK_CONF`` (``k=v`` pairs separated by newlines or ``;``).
``tests/conformance/test_oracle_session.py`` keeps the two copies of those defaults equal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.oracles.delta_jars import DeltaJarsUnavailable, cached_s3a_jars, resolve_delta_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ENV_MASTER = "DELTA_CKPT_SPARK_MASTER"
ENV_CONF = "DELTA_CKPT_SPARK_CONF"
DEFAULT_MASTER = "local[2]"
SPARK_CONF_DIR = Path(str(resources.files("conformance.oracles") / "spark-conf"))

BASE_CONF: Mapping[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.sql.sources.partitionOverwriteMode": "static",
    # No session extensions from the classpath (MLlib's functions: ~1 s of start-up CPU); Delta's
    # extension is named in spark.sql.extensions (DELTA_CONF) and still applies.
    "spark.sql.extensions.test.loadFromCp": "false",
}
#: JVM flags for short jobs (local mode): C1 only (no C2 JIT work) and the serial collector. Measured
#: for issue #12 (``benchmarks/RESULTS.md``): most of a small command's CPU is JIT and GC threads.
SHORT_JOB_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
LOCAL_CONF: Mapping[str, str] = {
    "spark.driver.extraJavaOptions": f"-Duser.timezone=UTC {SHORT_JOB_JAVA_OPTIONS}",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.driver.memory": "4g",
    "spark.sql.adaptive.coalescePartitions.enabled": "false",
}
DELTA_CONF: Mapping[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
DELTA_LOCAL_CONF: Mapping[str, str] = {"spark.databricks.delta.snapshotPartitions": "2"}


def _conf_pairs(items: Iterable[str], source: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"Spark conf entry {item!r} from {source} is not of the form key=value")
        out[key.strip()] = value.strip()
    return out


def has_delta_classes(spark: SparkSession) -> bool:
    """True when delta-spark's classes are loadable in the session's JVM."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        loader = jvm.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName("io.delta.tables.DeltaTable", False, loader)
    except Exception:  # py4j raises Py4JJavaError; any failure means "not loadable"
        return False
    return True


def get_delta_spark(master: str | None = None, conf: Iterable[str] = ()) -> SparkSession:
    """A session with delta-spark's extension, catalog and jars.

    ``master`` and ``conf`` (``k=v`` strings, e.g. the CLI's ``--master`` / ``--conf``) win over the
    environment. Raises :class:`DeltaJarsUnavailable` when the jars cannot be resolved or when a
    session without them is already running in this process.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        if not has_delta_classes(active):
            raise DeltaJarsUnavailable(
                "a SparkSession without delta-spark's jars is already running in this process; "
                "start the Delta session first"
            )
        return active
    # The S3A connector too when setup resolved it (``env --resolve-jars``), so delta-spark reads s3a:// tables.
    jars = [*resolve_delta_jars(), *(cached_s3a_jars() or [])]
    master = master or os.environ.get(ENV_MASTER) or DEFAULT_MASTER
    local = master.startswith("local")
    extra = _conf_pairs(os.environ.get(ENV_CONF, "").replace(";", "\n").splitlines(), ENV_CONF)
    extra.update(_conf_pairs(conf, "--conf"))
    settings = {
        **BASE_CONF,
        **(LOCAL_CONF if local else {}),
        **DELTA_CONF,
        **(DELTA_LOCAL_CONF if local else {}),
        "spark.jars": ",".join(str(j) for j in jars),
        **extra,
    }
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("SPARK_CONF_DIR", str(SPARK_CONF_DIR))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if LOCAL_CONF["spark.driver.extraJavaOptions"] == settings.get("spark.driver.extraJavaOptions"):
        os.environ.setdefault("SPARK_LAUNCHER_OPTS", SHORT_JOB_JAVA_OPTIONS)  # spark-submit's own JVM
    builder = SparkSession.builder.master(master).appName("delta-checkpoint-conformance")
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextmanager
def temporary_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Set session configuration for the duration of the block, then restore what was there."""
    previous: dict[str, str | None] = {key: spark.conf.get(key, None) for key in settings}
    try:
        for key, value in settings.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, old in previous.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)
