"""delta-spark as an oracle: its own snapshot, state and metadata cleanup of a table, through the JVM (py4j).

Used by the delta-spark adapter, the tests and the foreign fixtures. Every function needs a session
from :func:`conformance.oracles.session.get_delta_spark`. :func:`delta_spark_state` reads
delta-spark's ``Snapshot`` directly — its protocol and metadata, and the live files, tombstones,
transactions and domains of its reconciled state (``stateDF``, in one collect) — and normalises it
into a :class:`TableState` so it can be compared field by field with any other reader.

delta-spark caches ``DeltaLog`` instances per path; every call here clears that cache first, so a
test that edits ``_delta_log`` between reads always gets a fresh replay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spec.table_state import TableState

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def jvm_of(spark: SparkSession) -> Any:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    return jvm


def location_uri(table: str | Path) -> str:
    """The URI of a table given as a local path or a URI (``file:``, ``hdfs://``, ``s3a://``, … kept as given)."""
    text = str(table)
    if text.startswith("file:") or (not isinstance(table, Path) and "://" in text):
        return text
    return Path(text).resolve().as_uri()


def delta_log(spark: SparkSession, table: str, *, now_ms: int | None = None) -> Any:
    """A fresh ``DeltaLog`` for ``table`` (the JVM-side cache is cleared).

    With ``now_ms`` the log gets a ``ManualClock`` at that time, so tombstone and txn expiry are
    evaluated as of ``now_ms`` (what the fixtures' ``nowMs`` asks for).
    """
    jvm = jvm_of(spark)
    delta_log_cls = jvm.org.apache.spark.sql.delta.DeltaLog
    delta_log_cls.clearCache()
    location = location_uri(table)
    if now_ms is None:
        return delta_log_cls.forTable(spark._jsparkSession, location)
    clock = jvm.org.apache.spark.util.ManualClock(now_ms)
    return delta_log_cls.forTable(spark._jsparkSession, jvm.org.apache.hadoop.fs.Path(location), clock)


def delta_snapshot(
    spark: SparkSession, table: str, version: int | None = None, *, now_ms: int | None = None
) -> Any:
    """delta-spark's ``Snapshot`` of ``table`` at ``version`` (latest when ``None``)."""
    jvm = jvm_of(spark)
    log = delta_log(spark, table, now_ms=now_ms)
    none = jvm.scala.Option.empty()
    if version is None:
        return log.update(False, none, none)
    return log.getSnapshotAt(version, none, none, False)


def delta_spark_cleanup(
    spark: SparkSession, table: str, now_ms: int | None = None, *, post_commit: bool = False
) -> None:
    """delta-spark's own metadata cleanup of ``table`` with its clock at ``now_ms`` (default: now).

    By default ``doLogCleanup(latest snapshot)`` on a fresh ``DeltaLog``: the cleanup alone, of a
    snapshot loaded from the newest checkpoint. It honours ``delta.enableExpiredLogCleanup`` and
    ``delta.logRetentionDuration``, writes the compatibility checkpoint (of that newest checkpoint),
    deletes expired log files and collects sidecars.

    With ``post_commit`` it takes delta-spark's real route instead, the only one its public API
    offers: ``DeltaLog.checkpoint(latest snapshot)``, which the post-commit hook calls. It writes a
    checkpoint of the latest version, then cleans the snapshot it checkpointed, which was loaded from
    the checkpoint before, so the compatibility copy is of that one (spec §13, ``Checkpoints.scala``
    L379-386), and it checks no writer feature (spec D16).
    """
    jvm = jvm_of(spark)
    log = delta_log(spark, table, now_ms=now_ms)
    none = jvm.scala.Option.empty()
    snapshot = log.update(False, none, none)
    if post_commit:
        log.checkpoint(snapshot, none)
    else:
        log.doLogCleanup(snapshot, none)
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


#: The columns of delta-spark's reconciled state (``Snapshot.stateDF``) that a :class:`TableState` takes
#: beside the protocol and metadata, which the snapshot already holds.
STATE_COLUMNS = ("add", "remove", "txn", "domainMetadata")


def _state_actions(spark: SparkSession, snapshot: Any) -> dict[str, list[dict[str, Any]]]:
    """The snapshot's live files, tombstones, transactions and domains, by column of ``stateDF``.

    One collect of the reconciled state (two Spark jobs: the log replay and the result), where
    ``allFiles``, ``tombstones`` and ``setTransactions``/``domainMetadata`` are views of the same
    cached ``stateDF`` and took a job each (``Snapshot.scala``: ``allFiles`` and ``tombstones`` filter
    ``stateDS``; ``SnapshotState.scala``: ``setTransactions`` and ``domainMetadata`` are
    ``collect_set`` of its ``txn`` and ``domainMetadata`` columns). Each row of ``stateDF`` holds one
    action; a state is small enough for the driver (10,000 files at most in the suite).
    """
    from pyspark.sql import DataFrame

    out: dict[str, list[dict[str, Any]]] = {column: [] for column in STATE_COLUMNS}
    for row in DataFrame(snapshot.stateDF(), spark).select(*STATE_COLUMNS).collect():
        for column in STATE_COLUMNS:
            action = row[column]
            if action is not None:
                out[column].append(action.asDict(recursive=True))
    return out


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
    return snapshot_state(spark, delta_snapshot(spark, table, version, now_ms=now_ms))


def snapshot_state(spark: SparkSession, snap: Any) -> TableState:
    """The :class:`TableState` of one delta-spark ``Snapshot`` (:func:`delta_snapshot`)."""
    actions = _state_actions(spark, snap)
    return TableState.build(
        version=int(snap.version()),
        protocol=_action_json(snap.protocol()),
        metadata=_action_json(snap.metadata()),
        files=actions["add"],
        tombstones=actions["remove"],
        txns=actions["txn"],
        domain_metadata=actions["domainMetadata"],
        source={"checkpoint": checkpoint_description(snap)},
    )


def snapshot_row_count(spark: SparkSession, snap: Any) -> int:
    """The rows delta-spark reads from the data files of one ``Snapshot``, with its own scan.

    The relation is the one ``spark.read.format("delta").load(...)`` builds once it has resolved its
    snapshot (``DeltaTableV2.toBaseRelation``: ``deltaLog.createRelation(…, Some(initialSnapshot), …,
    isTimeTravelQuery)``, ``DeltaTableV2.scala`` L332-333 at v4.4.0), given the snapshot already read:
    a load with ``versionAsOf`` would build a second ``Snapshot`` of the same version and replay its
    state again (8-10 Spark jobs per versioned read instead of 5). With ``isTimeTravelQuery`` the scan
    reads exactly this snapshot (``TahoeFileIndex.getSnapshotToScan``, ``TahoeFileIndex.scala`` L300-306),
    whose files the state reports. Raises the JVM's error when a data file is missing or unreadable.
    """
    jvm = jvm_of(spark)
    log = snap.deltaLog()
    no_filters = getattr(log, "createRelation$default$1")()  # Nil
    relation = log.createRelation(no_filters, jvm.scala.Some(snap), jvm.scala.Option.empty(), True)
    return int(spark._jsparkSession.baseRelationToDataFrame(relation).count())
