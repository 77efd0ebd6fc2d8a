"""The oracle's SparkSession: Spark plus delta-spark's jars, extension and catalog.

Used by the delta-spark adapter, the ``demo`` command, the foreign fixtures and the tests — never
by the reference implementation, which runs on Spark's built-in sources alone
(``reference_impl.spark.session``).

A JVM holds one SparkContext, so a process gets one session, and whichever side starts it decides
its classpath: :func:`get_delta_spark` refuses a running session without delta-spark's classes.
So that a session either side starts serves both, the oracle starts Spark with the reference's
defaults and environment, from their one neutral copy :mod:`spec.spark_conf` (``BASE_CONF``,
``LOCAL_CONF``, the same ``log4j2.properties`` and ``SPARK_CONF_DIR`` choice), and honours the same
settings: master from ``DELTA_CKPT_SPARK_MASTER`` (default ``local[2]``), extra conf from
``DELTA_CKPT_SPARK_CONF`` (:func:`spec.spark_conf.conf_from_env`), both under the ``master`` and
``conf`` arguments.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.oracles.delta_jars import DeltaJarsUnavailable, cached_s3a_jars, resolve_delta_jars
from spec.spark_conf import (
    BASE_CONF,
    DEFAULT_MASTER,
    ENV_MASTER,
    LOCAL_CONF,
    conf_from_env,
    parse_conf_pairs,
    session_environment,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DELTA_CONF: Mapping[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
DELTA_LOCAL_CONF: Mapping[str, str] = {"spark.databricks.delta.snapshotPartitions": "2"}


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
    settings = delta_session_conf(master, conf, jars)
    builder = SparkSession.builder.master(master).appName("delta-checkpoint-conformance")
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def delta_session_conf(master: str, conf: Iterable[str], jars: Iterable[Path]) -> dict[str, str]:
    """The Spark conf of a new Delta session on ``master`` with the extra ``conf`` (``k=v``, over
    ``$DELTA_CKPT_SPARK_CONF``) and ``jars``, and its environment set for the JVM to come, as the
    reference's session sets it (:func:`spec.spark_conf.session_environment`); no JVM is started here."""
    local = master.startswith("local")
    extra = conf_from_env()
    extra.update(parse_conf_pairs(conf, source="--conf"))
    settings = {
        **BASE_CONF,
        **(LOCAL_CONF if local else {}),
        **DELTA_CONF,
        **(DELTA_LOCAL_CONF if local else {}),
        "spark.jars": ",".join(str(j) for j in jars),
        **extra,
    }
    session_environment(settings)
    return settings


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
