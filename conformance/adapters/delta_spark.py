"""delta-spark as an oracle: its own snapshot of a table, read through the JVM (py4j).

This module needs a session from :func:`reference_impl.spark.session.get_delta_spark`. It reads
delta-spark's ``Snapshot`` directly — protocol, metadata, ``allFiles``, ``tombstones``,
``setTransactions`` and ``domainMetadata`` — and normalises it into a :class:`TableState` so it can
be compared field by field with any other reader.

delta-spark caches ``DeltaLog`` instances per path; every call here clears that cache first, so a
test that edits ``_delta_log`` between reads always gets a fresh replay.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.adapter import MAX_CHECKPOINT_FILES
from reference_impl.storage.local import to_local_path, to_uri
from spec.table_state import TableState

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _jvm(spark: SparkSession) -> Any:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    return jvm


def delta_log(spark: SparkSession, table: str, *, now_ms: int | None = None) -> Any:
    """A fresh ``DeltaLog`` for ``table`` (the JVM-side cache is cleared).

    With ``now_ms`` the log gets a ``ManualClock`` at that time, so tombstone and txn expiry are
    evaluated as of ``now_ms`` (what the fixtures' ``nowMs`` asks for).
    """
    jvm = _jvm(spark)
    delta_log_cls = jvm.org.apache.spark.sql.delta.DeltaLog
    delta_log_cls.clearCache()
    location = to_uri(to_local_path(table))
    if now_ms is None:
        return delta_log_cls.forTable(spark._jsparkSession, location)
    clock = jvm.org.apache.spark.util.ManualClock(now_ms)
    return delta_log_cls.forTable(spark._jsparkSession, jvm.org.apache.hadoop.fs.Path(location), clock)


def delta_snapshot(
    spark: SparkSession, table: str, version: int | None = None, *, now_ms: int | None = None
) -> Any:
    """delta-spark's ``Snapshot`` of ``table`` at ``version`` (latest when ``None``)."""
    jvm = _jvm(spark)
    log = delta_log(spark, table, now_ms=now_ms)
    none = jvm.scala.Option.empty()
    if version is None:
        return log.update(False, none, none)
    return log.getSnapshotAt(version, none, none, False)


def delta_spark_cleanup(spark: SparkSession, table: str, now_ms: int | None = None) -> None:
    """delta-spark's own metadata cleanup of ``table`` with its clock at ``now_ms`` (default: now).

    ``doLogCleanup(latest snapshot)`` on a fresh ``DeltaLog`` is the call delta-spark makes after a
    checkpoint: it honours ``delta.enableExpiredLogCleanup`` and ``delta.logRetentionDuration``,
    writes the compatibility checkpoint, deletes expired log files and collects sidecars.
    """
    jvm = _jvm(spark)
    log = delta_log(spark, table, now_ms=now_ms)
    none = jvm.scala.Option.empty()
    log.doLogCleanup(log.update(False, none, none), none)
    jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()


def _seq(scala_seq: Any) -> list[Any]:
    iterator = scala_seq.iterator()
    out = []
    while iterator.hasNext():
        out.append(iterator.next())
    return out


def _action_json(action: Any) -> dict[str, Any]:
    """The inner object of a delta-spark action's JSON (``{"protocol": {...}}`` → ``{...}``)."""
    wrapped = json.loads(action.json())
    return dict(next(iter(wrapped.values())))


def _dataset_dicts(spark: SparkSession, jds: Any) -> list[dict[str, Any]]:
    from pyspark.sql import DataFrame

    df = DataFrame(jds.toDF(), spark)
    return [row.asDict(recursive=True) for row in df.toLocalIterator()]


def checkpoint_description(snapshot: Any) -> dict[str, Any] | None:
    """Which checkpoint delta-spark's snapshot was built from (version and file names)."""
    provider = snapshot.checkpointProvider()
    version = int(provider.version())
    if version < 0:
        return None
    files = [str(f.getPath().getName()) for f in _seq(provider.topLevelFiles())]
    return {"version": version, "files": sorted(files)}


def delta_spark_state(
    spark: SparkSession, table: str, version: int | None = None, *, now_ms: int | None = None
) -> TableState:
    """delta-spark's view of ``table`` at ``version`` as a :class:`TableState` (expiry as of ``now_ms``)."""
    snap = delta_snapshot(spark, table, version, now_ms=now_ms)
    return TableState.build(
        version=int(snap.version()),
        protocol=_action_json(snap.protocol()),
        metadata=_action_json(snap.metadata()),
        files=_dataset_dicts(spark, snap.allFiles()),
        tombstones=_dataset_dicts(spark, snap.tombstones()),
        txns=[_action_json(t) for t in _seq(snap.setTransactions())],
        domain_metadata=[_action_json(d) for d in _seq(snap.domainMetadata())],
        source={"checkpoint": checkpoint_description(snap)},
    )


# -- the adapter --------------------------------------------------------------------------------

_THROW = "spark.databricks.delta.checkpoint.exceptionThrowing.enabled"
_PART_SIZE = "spark.databricks.delta.checkpoint.partSize"
_DS_PROFILE_CONF: dict[str, dict[str, str]] = {
    "v1": {},
    "multipart": {_PART_SIZE: "2"},
    "v2-json": {_PART_SIZE: "2",
                "spark.databricks.delta.checkpointV2.topLevelFileFormat": "json"},
    "v2-parquet": {_PART_SIZE: "2",
                   "spark.databricks.delta.checkpointV2.topLevelFileFormat": "parquet"},
}  # fmt: skip


def _delta_spark_profiles() -> tuple[Any, ...]:
    from conformance.adapter import WriterProfile

    return (
        WriterProfile("v1", "delta-spark's default on a classic table: one classic V1 file", "v1", "classic"),
        WriterProfile("multipart", "partSize=2: a multi-part V1 checkpoint once the state has more than 2 file "
                      "actions", "v1", "multi-part"),
        WriterProfile("v2-json", "delta.checkpointPolicy=v2, partSize=2: UUID-named JSON + sidecars", "v2", "uuid",
                      "json", sidecars=True, needs_v2_table=True),
        WriterProfile("v2-parquet", "delta.checkpointPolicy=v2, partSize=2, Parquet top-level file", "v2", "uuid",
                      "parquet", sidecars=True, needs_v2_table=True),
    )  # fmt: skip


class DeltaSparkImplementation:
    """``delta-spark`` 4.4: its own reader (``Snapshot``) and checkpoint writer, driven through the JVM.

    Errors are Java exceptions; their messages are mapped to spec codes by
    :mod:`conformance.adapters.error_codes`. The adapter starts its delta-spark session when it is
    created: the jars must be on the classpath of the process's first session, and other adapters
    (``reference``) then share it rather than starting a plain one first.
    """

    def __init__(self) -> None:
        from conformance.adapter import ImplementationInfo, Role

        self.info = ImplementationInfo(
            name="delta-spark",
            version="4.4.0",
            roles=Role.READER | Role.WRITER | Role.CLEANER,
            description="delta-spark 4.4.0 (io.delta:delta-spark_4.2_2.13) through py4j",
            homepage="https://github.com/delta-io/delta",
            reports_checkpoint=True,
            honours_clock=True,
            reads_data=True,
            profiles=_delta_spark_profiles(),
        )
        self._spark()

    def _spark(self) -> SparkSession:
        from reference_impl.spark.session import get_delta_spark

        return get_delta_spark()

    def _fail(self, exc: BaseException) -> Exception:
        from conformance.adapter import AdapterError
        from conformance.adapters.error_codes import classify

        message = str(exc).strip().splitlines()
        text = " | ".join(message[:3])[:600]
        return AdapterError(classify(str(exc)), text)

    def read(self, table: Path, *, version: int | None = None, now_ms: int | None = None) -> Any:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        from conformance.adapter import ReadResult

        spark = self._spark()
        try:
            state = delta_spark_state(spark, str(table), version, now_ms=now_ms)
        except (Py4JJavaError, PySparkException) as exc:
            raise self._fail(exc) from exc
        rows = None
        try:
            reader = spark.read.format("delta")
            if version is not None:
                reader = reader.option("versionAsOf", version)
            rows = reader.load(to_uri(to_local_path(str(table)))).count()
        except (Py4JJavaError, PySparkException):
            rows = None  # data files absent (log-only tables) or unreadable: only the state is compared
        checkpoint = state.source.get("checkpoint")
        return ReadResult(state=state, rows=rows, checkpoint=checkpoint["files"][0] if checkpoint else None)

    def write_checkpoint(self, table: Path, *, profile: str, version: int | None = None) -> None:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        from reference_impl.spark.session import temporary_conf

        spark = self._spark()
        conf = dict(_DS_PROFILE_CONF[profile])
        try:
            with temporary_conf(spark, {_THROW: "true"}):
                snap = delta_snapshot(spark, str(table), version)
                if _PART_SIZE in conf:  # at most MAX_CHECKPOINT_FILES parts or sidecars
                    actions = int(snap.numOfFiles()) + int(snap.numOfRemoves())
                    conf[_PART_SIZE] = str(
                        max(int(conf[_PART_SIZE]), math.ceil(actions / MAX_CHECKPOINT_FILES))
                    )
                with temporary_conf(spark, conf):
                    snap.deltaLog().checkpoint(snap, _jvm(spark).scala.Option.empty())
        except (Py4JJavaError, PySparkException) as exc:
            raise self._fail(exc) from exc

    def cleanup(self, table: Path, *, now_ms: int | None = None) -> None:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        try:
            delta_spark_cleanup(self._spark(), str(table), now_ms)
        except (Py4JJavaError, PySparkException) as exc:
            raise self._fail(exc) from exc

    def close(self) -> None:
        return None
