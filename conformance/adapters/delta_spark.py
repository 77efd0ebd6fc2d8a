"""delta-spark as an oracle: its own snapshot of a table, read through the JVM (py4j).

This module needs a session from :func:`reference_impl.spark_session.get_delta_spark`. It reads
delta-spark's ``Snapshot`` directly — protocol, metadata, ``allFiles``, ``tombstones``,
``setTransactions`` and ``domainMetadata`` — and normalises it into a :class:`TableState` so it can
be compared field by field with any other reader.

delta-spark caches ``DeltaLog`` instances per path; every call here clears that cache first, so a
test that edits ``_delta_log`` between reads always gets a fresh replay.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from reference_impl.storage import to_local_path, to_uri
from reference_impl.table_state import TableState

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _jvm(spark: SparkSession) -> Any:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    return jvm


def delta_log(spark: SparkSession, table: str) -> Any:
    """A fresh ``DeltaLog`` for ``table`` (the JVM-side cache is cleared)."""
    jvm = _jvm(spark)
    delta_log_cls = jvm.org.apache.spark.sql.delta.DeltaLog
    delta_log_cls.clearCache()
    return delta_log_cls.forTable(spark._jsparkSession, to_uri(to_local_path(table)))


def delta_snapshot(spark: SparkSession, table: str, version: int | None = None) -> Any:
    """delta-spark's ``Snapshot`` of ``table`` at ``version`` (latest when ``None``)."""
    jvm = _jvm(spark)
    log = delta_log(spark, table)
    none = jvm.scala.Option.empty()
    if version is None:
        return log.update(False, none, none)
    return log.getSnapshotAt(version, none, none, False)


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


def delta_spark_state(spark: SparkSession, table: str, version: int | None = None) -> TableState:
    """delta-spark's view of ``table`` at ``version`` as a :class:`TableState`."""
    snap = delta_snapshot(spark, table, version)
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
