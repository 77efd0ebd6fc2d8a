"""The Spark defaults every session of the project starts with: one copy for both sides.

Not a rule of the specification: the one neutral home of what the reference implementation's
session (:mod:`reference_impl.spark.session`) and the oracle's (:mod:`conformance.oracles.session`)
must agree on, as neither may import the other (``tests/test_boundaries.py``) and a process's one
SparkSession, started by either, serves both. No Spark here — names, values and the environment:

* the settings variables (:data:`ENV_MASTER`, :data:`ENV_CONF`) and :data:`DEFAULT_MASTER`;
* :data:`BASE_CONF` (every session) and :data:`LOCAL_CONF` (local mode), with the short-job JVM flags
  :data:`SHORT_JOB_JAVA_OPTIONS`; :data:`SMALL_QUERIES_CONF`, the SQL settings of queries over small tables;
* :data:`SPARK_CONF_DIR`, the quiet ``log4j2.properties``, and :func:`session_environment`, which
  sets the environment of the JVM a session is about to start (the same way for both sides);
* the extra conf of ``--conf k=v`` flags and of ``$DELTA_CKPT_SPARK_CONF``: :func:`parse_conf_pairs`,
  :func:`conf_from_env` and :func:`encode_env_conf` (a JSON object, so a value may hold ``;`` or a
  newline; ``k=v`` lines separated by newlines or ``;`` are still read, for people typing them).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from spec.cache import cache_dir
from spec.error_codes import ErrorCode

ENV_MASTER = "DELTA_CKPT_SPARK_MASTER"
ENV_CONF = "DELTA_CKPT_SPARK_CONF"
DEFAULT_MASTER = "local[2]"

#: Holds our quiet ``log4j2.properties`` (errors only, to stderr).
SPARK_CONF_DIR = Path(__file__).resolve().parent / "spark-conf"

BASE_CONF: Mapping[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.sql.sources.partitionOverwriteMode": "static",
    # Session extensions found on the classpath (ServiceLoader) are not loaded: in pyspark's jars that is
    # only MLlib's SQL functions (vector_to_array, …), whose registration runs Scala reflection and
    # ~1 s of a short command's JVM CPU (issue #12); neither side uses them. Extensions named in
    # spark.sql.extensions (the oracle's Delta extension) are still applied.
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
#: SQL settings of queries over small tables (issue #12: a 10-commit table's checkpoint ran 5 Spark jobs and
#: compiled 46 classes with Janino, with these 2 and 2): no adaptive execution (a query is one job, not one
#: per stage) and Spark's interpreted expressions instead of generated code — Spark's own fallback path,
#: same results. The reference sets them on its own session for a small log
#: (``reference_impl.spark.session.size_queries``); ``conformance run`` starts every worker's session with
#: them (``conformance.cli.RUN_SPARK_CONF``: the suite's tables are all small).
SMALL_QUERIES_CONF: Mapping[str, str] = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


class ConfError(ValueError):
    """A Spark conf entry that is not ``key=value`` (or a ``$DELTA_CKPT_SPARK_CONF`` that is not readable):
    ``INVALID_OPTION`` on the command line."""

    code = ErrorCode.INVALID_OPTION


def parse_conf_pairs(pairs: Iterable[str], *, source: str) -> dict[str, str]:
    """Parse ``k=v`` strings (blank ones skipped, key and value stripped); a later key wins.

    Raises :class:`ConfError` naming ``source`` and the entry for an item without ``=`` or without a key.
    """
    out: dict[str, str] = {}
    for raw in pairs:
        item = raw.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfError(f"Spark conf entry {item!r} from {source} is not of the form key=value")
        out[key.strip()] = value.strip()
    return out


def conf_from_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The extra conf in ``$DELTA_CKPT_SPARK_CONF``: a JSON object of strings (what
    :func:`encode_env_conf` writes), else ``k=v`` entries separated by newlines or ``;``."""
    text = (os.environ if environ is None else environ).get(ENV_CONF, "")
    if not text.lstrip().startswith("{"):
        return parse_conf_pairs(text.replace(";", "\n").splitlines(), source=ENV_CONF)
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfError(f"{ENV_CONF} is not a JSON object of strings: {exc} in {text!r}") from exc
    if not isinstance(decoded, dict) or not all(isinstance(v, str) for v in decoded.values()):
        raise ConfError(f"{ENV_CONF} is not a JSON object of strings: {text!r}")
    return dict(decoded)


def encode_env_conf(conf: Mapping[str, str]) -> str:
    """``conf`` as the value of ``$DELTA_CKPT_SPARK_CONF``: JSON, which :func:`conf_from_env` reads back
    exactly, whatever the values hold."""
    return json.dumps(dict(conf), sort_keys=False)


def class_archive_conf_dir() -> Path:
    """The empty ``SPARK_CONF_DIR`` of a reference session that maps the driver's class archive
    (:mod:`reference_impl.storage.class_archive`): never the directory of a session that does not."""
    return cache_dir() / "spark-cds" / "empty-conf"


def session_environment(conf: Mapping[str, str]) -> Path:
    """Set the environment of the JVM a new session with ``conf`` is about to start; its conf directory.

    ``SPARK_LOCAL_IP`` (loopback) and ``PYSPARK_PYTHON`` (this interpreter) unless set;
    ``SPARK_LAUNCHER_OPTS`` (spark-submit's own JVM) :data:`SHORT_JOB_JAVA_OPTIONS` unless set, when
    the driver has the default local flags; and ``SPARK_CONF_DIR`` always: the user's, else
    :data:`SPARK_CONF_DIR` — never the class archive's empty directory that an earlier session of
    this process left there (a session without the archive would log at Spark's default level).
    """
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if conf.get("spark.driver.extraJavaOptions") == LOCAL_CONF["spark.driver.extraJavaOptions"]:
        os.environ.setdefault("SPARK_LAUNCHER_OPTS", SHORT_JOB_JAVA_OPTIONS)
    conf_dir = Path(os.environ.get("SPARK_CONF_DIR") or SPARK_CONF_DIR)
    if conf_dir == class_archive_conf_dir():
        conf_dir = SPARK_CONF_DIR
    os.environ["SPARK_CONF_DIR"] = str(conf_dir)
    return conf_dir
