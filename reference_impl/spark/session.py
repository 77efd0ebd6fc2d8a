"""SparkSession factories: a plain one for the reference implementation, a Delta one for the oracles.

| factory | used by | classpath |
|---|---|---|
| :func:`get_spark` | the reference writer, reader and cleaner | Spark only: built-in JSON and Parquet sources |
| :func:`get_delta_spark` | delta-spark oracle, demo, cross-reader tests | Spark + delta-spark's jars |

Both honour the same settings, so the same code runs on a laptop and on a cluster:

* master: ``--master`` CLI flag, else ``DELTA_CKPT_SPARK_MASTER``, else ``local[2]``;
* extra conf: ``--conf k=v`` CLI flags (repeatable), else ``DELTA_CKPT_SPARK_CONF`` holding
  ``k=v`` pairs separated by newlines or ``;``. Extra conf wins over every default below.

Defaults: session time zone UTC, quiet logs (ERROR), no UI, and — in local mode only — few
shuffle partitions so small tables are fast. A JVM holds one SparkContext, so a process gets one
session: whichever factory runs first decides whether the Delta jars are on the classpath
(:func:`get_delta_spark` refuses a running session without them).

The Delta jars come from :mod:`conformance.oracles.delta_jars` (Maven Central, cached in the project).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from reference_impl.errors import DeltaJarsUnavailable, InvalidOption

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ENV_MASTER = "DELTA_CKPT_SPARK_MASTER"
ENV_CONF = "DELTA_CKPT_SPARK_CONF"
DEFAULT_MASTER = "local[2]"

_SPARK_CONF_DIR = (
    Path(__file__).resolve().parents[1] / "resources" / "spark-conf"
)  # holds our quiet log4j2.properties

_BASE_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.sql.sources.partitionOverwriteMode": "static",
}
_LOCAL_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.driver.memory": "4g",
    "spark.sql.adaptive.coalescePartitions.enabled": "false",
}
_DELTA_CONF: dict[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
_DELTA_LOCAL_CONF: dict[str, str] = {
    "spark.databricks.delta.snapshotPartitions": "2",
}


@dataclass(frozen=True)
class SparkSettings:
    """Where Spark runs and which extra configuration it gets."""

    master: str = DEFAULT_MASTER
    conf: Mapping[str, str] = field(default_factory=dict)
    app_name: str = "delta-checkpoint-conformance"

    @property
    def is_local(self) -> bool:
        return self.master.startswith("local")


def parse_conf_pairs(pairs: Iterable[str], *, source: str) -> dict[str, str]:
    """Parse ``k=v`` strings; an item without ``=`` is an :class:`InvalidOption` naming ``source``."""
    out: dict[str, str] = {}
    for raw in pairs:
        item = raw.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidOption(f"Spark conf entry {item!r} from {source} is not of the form key=value")
        out[key.strip()] = value.strip()
    return out


def settings_from_env(master: str | None = None, conf: Iterable[str] = ()) -> SparkSettings:
    """Combine CLI values (which win) with the environment variables and defaults."""
    env_conf_text = os.environ.get(ENV_CONF, "")
    merged = parse_conf_pairs(env_conf_text.replace(";", "\n").splitlines(), source=ENV_CONF)
    merged.update(parse_conf_pairs(conf, source="--conf"))
    return SparkSettings(master=master or os.environ.get(ENV_MASTER) or DEFAULT_MASTER, conf=merged)


def _active_session() -> SparkSession | None:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def _build(settings: SparkSettings, extra: Mapping[str, str]) -> SparkSession:
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("SPARK_CONF_DIR", str(_SPARK_CONF_DIR))
    os.environ.setdefault("PYSPARK_PYTHON", _python_executable())
    conf: dict[str, str] = dict(_BASE_CONF)
    if settings.is_local:
        conf.update(_LOCAL_CONF)
    conf.update(extra)
    conf.update(settings.conf)
    builder = SparkSession.builder.master(settings.master).appName(settings.app_name)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _python_executable() -> str:
    import sys

    return sys.executable


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


def get_spark(settings: SparkSettings | None = None) -> SparkSession:
    """The session of the reference implementation (Spark's built-in sources only).

    Returns the running session if there is one (it may carry the Delta jars; the reference code
    never uses them).
    """
    active = _active_session()
    if active is not None:
        return active
    return _build(settings or settings_from_env(), {})


def get_delta_spark(settings: SparkSettings | None = None) -> SparkSession:
    """A session with delta-spark's extension, catalog and jars (oracle and demo only).

    Raises :class:`DeltaJarsUnavailable` when the jars cannot be resolved or when a session
    without them is already running in this process.
    """
    from conformance.oracles.delta_jars import resolve_delta_jars

    active = _active_session()
    if active is not None:
        if not has_delta_classes(active):
            raise DeltaJarsUnavailable(
                "a SparkSession without delta-spark's jars is already running in this process; "
                "start the Delta session first"
            )
        return active
    jars = resolve_delta_jars()
    settings = settings or settings_from_env()
    extra = dict(_DELTA_CONF)
    if settings.is_local:
        extra.update(_DELTA_LOCAL_CONF)
    extra["spark.jars"] = ",".join(str(j) for j in jars)
    return _build(settings, extra)


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
