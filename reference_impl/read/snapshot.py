"""The reference reader: reconstruct a table version by distributed log replay on Spark.

Spec: ``spec/checkpoints.md`` §16 Reader rules (``CKPT-READ-*``) and §6 Checkpoint content
(``CKPT-CONTENT-*``); PROTOCOL.md "Action Reconciliation".

Usage::

    snap = read_snapshot(spark, "/path/to/table")          # latest version
    snap = read_snapshot(spark, path, version=12)          # time travel
    snap = read_snapshot(spark, "s3://bucket/t", storage_options={"AWS_REGION": "eu-west-1"})
    snap.summary()                                        # small dict, computed with aggregations
    snap.table_state()                                    # the full TableState (collects the files)

Steps:

1. :mod:`reference_impl.log.listing` classifies one listing of ``_delta_log`` and
   :mod:`reference_impl.log.segment` picks the checkpoint and the commits after it;
2. :mod:`reference_impl.read.checkpoint` loads the checkpoint (falling back to an older one, or to
   the commits alone, when a checkpoint file is unreadable — at most ``max_fallbacks`` times, 2 as
   in delta-spark);
3. commits (:mod:`reference_impl.read.commits`): file actions by one scan with Spark's JSON source
   (``FAILFAST``), each row tagged with its version and its position in the file; the few non-file
   actions by a driver pass over the commit bytes that skips file-action lines by their prefix;
4. file actions are reconciled in Spark by a grouped aggregation, not a window: per identity
   ``(canonical path, deletionVector unique id)`` (the path relative to the table root, dot and
   empty segments removed, decoded: ``CKPT-CONTENT-014``) one ``max_by`` keeps the action with the greatest
   ``(version, ord)`` (the last action wins), in the same plan as the scan; live files are the
   winning ``add`` rows; tombstones are winning ``remove`` rows newer than
   ``now - delta.deletedFileRetentionDuration`` (strictly); a writer asks for the state in its
   files' partitions (:meth:`Snapshot.partitioned_state`), which the same shuffle makes;
5. once the checkpoint is loaded, the session's SQL settings follow the bytes the replay reads
   (:func:`~reference_impl.spark.session.size_queries`: a small log's queries run without adaptive
   execution and generated code, issue #12);
6. non-file actions (few) are replayed on the driver: the last ``protocol`` and ``metaData`` win,
   the latest ``txn`` per ``appId`` (expired ones dropped when
   ``delta.setTransactionRetentionDuration`` is set), the latest ``domainMetadata`` per domain
   with removed ones dropped.

Nothing is collected to the driver but non-file actions until :meth:`Snapshot.table_state` or
:meth:`Snapshot.summary` is called; a table of millions of files stays distributed.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from reference_impl.errors import (
    CheckpointError,
    DuplicateMetadata,
    DuplicateProtocol,
    LogCorrupt,
    MissingMetadata,
    MissingProtocol,
    TableNotFound,
    UnsupportedReaderFeature,
)
from reference_impl.log.actions import FILE_ACTIONS
from reference_impl.log.last_checkpoint import read_last_checkpoint
from reference_impl.log.listing import LogListing, list_log
from reference_impl.log.segment import LogSegment, segments_newest_first
from reference_impl.log.table import Table, open_table
from reference_impl.log.table_properties import TableProperties
from reference_impl.read.checkpoint import (
    CheckpointContent,
    checkpoint_job_error,
    fallback_errors,
    load_checkpoint,
    named_file,
    store_error,
)
from reference_impl.read.commits import corrupt_line, failing_commit, non_file_rows, read_commits
from reference_impl.spark.columns import canonical_path, dv_unique_id, placement_key
from reference_impl.spark.jobs import spark_errors
from reference_impl.spark.schemas import COMMIT_SCHEMA
from reference_impl.spark.session import size_queries, use_storage
from reference_impl.storage import Location, Storage
from spec.table_state import TableState

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: Reader features whose presence does not change log replay (we reconstruct state, not data).
SUPPORTED_READER_FEATURES: frozenset[str] = frozenset(
    {
        "columnMapping",
        "deletionVectors",
        "timestampNtz",
        "v2Checkpoint",
        "vacuumProtocolCheck",
        "typeWidening",
        "typeWidening-preview",
        "variantType",
        "variantType-preview",
        "variantShredding",
        "variantShredding-preview",
    }
)
MAX_READER_VERSION = 3
DEFAULT_MAX_FALLBACKS = 2


@dataclass
class Snapshot:
    """A reconstructed table version. DataFrames are lazy; the rest is small."""

    table: Location
    storage: Storage
    version: int
    segment: LogSegment
    listing: LogListing
    protocol: dict[str, Any]
    metadata: dict[str, Any]
    txns: dict[str, dict[str, Any]]
    domains: dict[str, dict[str, Any]]
    checkpoint: CheckpointContent | None
    now_ms: int
    #: Plans :attr:`file_actions`; whether they need reconciling (commits follow the checkpoint), and
    #: the tombstone cutoff.
    replay: Callable[[], DataFrame] = field(repr=False)
    needs_merge: bool
    min_tombstone_ms: int
    _counts: dict[str, int] = field(default_factory=dict)

    @functools.cached_property
    def file_actions(self) -> DataFrame:
        """The file actions replayed (columns ``version``, ``ord``, ``add``, ``remove``), not
        reconciled. Planned on first use: an incremental write reads the commits after its base and
        only the base sidecars it rewrites, never this scan of all of them (issue #12)."""
        return self.replay()

    @functools.cached_property
    def state_df(self) -> DataFrame:
        """Columns ``add``, ``remove``: one row per live file or unexpired tombstone. Built on first use:
        Spark analyses each DataFrame step as it is made, and an incremental write never evaluates
        the whole state (it reconciles only the commits after its base; issue #12)."""
        return live_state(_reconcile(self.file_actions, self.needs_merge, self.table), self.min_tombstone_ms)

    @property
    def files_df(self) -> DataFrame:
        """One column ``add`` (ADD struct): the live files. Built on use: each DataFrame step is
        analysed by Spark as it is made, and most commands never need this one (issue #12)."""
        return self.state_df.where(F.col("add").isNotNull()).select("add")

    @property
    def tombstones_df(self) -> DataFrame:
        """One column ``remove`` (REMOVE struct): the unexpired tombstones; built on use."""
        return self.state_df.where(F.col("remove").isNotNull()).select("remove")

    @property
    def properties(self) -> TableProperties:
        return TableProperties(self.metadata.get("configuration"))

    @property
    def reader_features(self) -> list[str]:
        return sorted(self.protocol.get("readerFeatures") or [])

    @property
    def writer_features(self) -> list[str]:
        return sorted(self.protocol.get("writerFeatures") or [])

    @property
    def supports_v2_checkpoints(self) -> bool:
        """``v2Checkpoint`` is a reader+writer feature: it must be in both lists."""
        return "v2Checkpoint" in (self.protocol.get("readerFeatures") or []) and "v2Checkpoint" in (
            self.protocol.get("writerFeatures") or []
        )

    @contextmanager
    def replay_errors(self) -> Iterator[None]:
        """Run Spark jobs over the state: the store failing to serve a file fails them as the store's
        ``STORAGE_ERROR`` naming the file (CKPT-READ-027), a malformed commit line as ``LOG_CORRUPT``,
        any other failure while a checkpoint is in use as ``CHECKPOINT_CORRUPT`` naming its file.

        The file actions of the commits are parsed lazily, by the first job that needs them (see
        :mod:`reference_impl.read.commits`); such a job names the file and the line.
        """
        try:
            yield
        except spark_errors() as exc:
            log_dir, commits = self.listing.log_dir, self.segment.commits
            read = self.checkpoint.paths(log_dir) if self.checkpoint is not None else []
            read += [log_dir / info.name for _, info in commits]
            store = store_error(exc, named_file(exc, read, log_dir))
            if store is not None:
                raise store from exc
            found = corrupt_line(self.storage, log_dir, commits)
            if found is not None:
                raise LogCorrupt(f"cannot parse the commit: {found[1]}", path=found[0]) from exc
            failing = failing_commit(self.state_df.sparkSession, self.storage, log_dir, commits)
            if failing is None:
                if self.checkpoint is not None:
                    raise checkpoint_job_error(self.checkpoint, log_dir, exc) from exc
                raise
            raise LogCorrupt(
                "a file action of the commit does not fit the action schema", path=failing
            ) from exc

    def partitioned_state(self, partitions: int) -> DataFrame:
        """The rows of :attr:`state_df`, their actions as logged (:func:`live_state`), in ``partitions``
        hash partitions of :func:`placement_key`, made by the reconciliation's own shuffle
        (:func:`_reconcile`): a writer stages one file per partition from them without shuffling again."""
        reconciled = _reconcile(self.file_actions, self.needs_merge, self.table, partitions)
        return live_state(reconciled, self.min_tombstone_ms, as_logged=True)

    def _aggregate(self) -> dict[str, int]:
        if not self._counts:
            with self.replay_errors():
                row = self.state_df.agg(
                    F.count("add").alias("files"),
                    F.coalesce(F.sum("add.size"), F.lit(0)).alias("bytes"),
                    F.count("remove").alias("tombstones"),
                ).collect()[0]  # one job: the state is reconciled once
            self._counts = {k: int(row[k]) for k in ("files", "bytes", "tombstones")}
        return self._counts

    @property
    def num_files(self) -> int:
        return self._aggregate()["files"]

    def non_file_actions(self) -> list[dict[str, Any]]:
        """protocol, metaData, txns (by appId), live domainMetadata (by domain): JSON actions."""
        out: list[dict[str, Any]] = [{"protocol": self.protocol}, {"metaData": self.metadata}]
        out += [{"txn": self.txns[k]} for k in sorted(self.txns)]
        out += [{"domainMetadata": self.domains[k]} for k in sorted(self.domains)]
        return out

    def source(self) -> dict[str, Any]:
        seg = self.segment
        return {
            "checkpoint": self.checkpoint.describe() if self.checkpoint else None,
            "foundBy": seg.found_by,
            "hint": seg.hint.state.value,
            "hintDetail": seg.hint.detail,
            "commits": [seg.commits[0][0], seg.commits[-1][0]] if seg.commits else [],
            "fallbackFrom": list(seg.fallback_from),
        }

    def summary(self) -> dict[str, Any]:
        agg = self._aggregate()
        return {
            "table": str(self.table),
            "version": self.version,
            "protocol": self.protocol,
            "readerFeatures": self.reader_features,
            "writerFeatures": self.writer_features,
            "numFiles": agg["files"],
            "sizeInBytes": agg["bytes"],
            "numTombstones": agg["tombstones"],
            "numTxns": len(self.txns),
            "numDomains": len(self.domains),
            "checkpointPolicy": self.properties.checkpoint_policy,
            **self.source(),
        }

    def table_state(self, *, include_source: bool = True) -> TableState:
        """Collect everything into a :class:`TableState` (the only step that collects files).

        One pass over :attr:`state_df` (each row holds an ``add`` or a ``remove``): the log is
        scanned and reconciled once, not once for the files and again for the tombstones.
        """
        with self.replay_errors():
            rows = _collect_dicts(self.state_df)
        files = [r["add"] for r in rows if r["add"] is not None]
        tombstones = [r["remove"] for r in rows if r["remove"] is not None]
        return TableState.build(
            version=self.version,
            protocol=self.protocol,
            metadata=self.metadata,
            files=files,
            tombstones=tombstones,
            txns=self.txns.values(),
            domain_metadata=self.domains.values(),
            source=self.source() if include_source else None,
        )


def _collect_dicts(df: DataFrame) -> list[dict[str, Any]]:
    """The rows as dicts, in one Spark job (``collect``: ``toLocalIterator`` runs one job per partition, and
    every row ends up in the returned list either way)."""
    return [row.asDict(recursive=True) for row in df.collect()]


def _replay_non_file(
    checkpoint: CheckpointContent | None,
    commit_rows: list[tuple[int, dict[str, Any]]],
    now_ms: int,
    log_dir: Location,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    protocol: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    txns: dict[str, dict[str, Any]] = {}
    domains: dict[str, dict[str, Any]] = {}
    if checkpoint is not None:
        cp_path = str(log_dir / checkpoint.instance.name)
        protocols = [a["protocol"] for a in checkpoint.non_file_actions if "protocol" in a]
        metadatas = [a["metaData"] for a in checkpoint.non_file_actions if "metaData" in a]
        if len(protocols) > 1:
            raise DuplicateProtocol(f"{len(protocols)} protocol actions in the checkpoint", path=cp_path)
        if len(metadatas) > 1:
            raise DuplicateMetadata(f"{len(metadatas)} metaData actions in the checkpoint", path=cp_path)
        if not protocols:
            raise MissingProtocol("the checkpoint has no protocol action", path=cp_path, rule="CKPT-READ-014")
        if not metadatas:
            raise MissingMetadata("the checkpoint has no metaData action", path=cp_path, rule="CKPT-READ-014")
        protocol, metadata = protocols[0], metadatas[0]
        initial = [(checkpoint.instance.version, a) for a in checkpoint.non_file_actions]
    else:
        initial = []
    for _, action in [*initial, *commit_rows]:
        kind, value = next(iter(action.items()))
        if kind == "protocol":
            protocol = value
        elif kind == "metaData":
            metadata = value
        elif kind == "txn":
            txns[value["appId"]] = value
        elif kind == "domainMetadata":
            if value.get("removed"):
                domains.pop(value["domain"], None)
            else:
                domains[value["domain"]] = {
                    "domain": value["domain"],
                    "configuration": value.get("configuration"),
                    "removed": False,
                }
    if protocol is None:
        raise MissingProtocol("no protocol action in the log", path=str(log_dir))
    if metadata is None:
        raise MissingMetadata("no metaData action in the log", path=str(log_dir))
    retention = TableProperties(metadata.get("configuration")).set_transaction_retention_ms
    if retention is not None:
        cutoff = now_ms - retention
        txns = {
            k: t for k, t in txns.items() if t.get("lastUpdated") is not None and t["lastUpdated"] > cutoff
        }
    return protocol, metadata, txns, domains


def check_reader_features(protocol: dict[str, Any], path: str) -> None:
    """Refuse tables that need a reader capability this implementation lacks."""
    reader_version = int(protocol.get("minReaderVersion", 1))
    if reader_version > MAX_READER_VERSION:
        raise UnsupportedReaderFeature(f"minReaderVersion {reader_version} is not supported", path=path)
    unknown = sorted(set(protocol.get("readerFeatures") or []) - SUPPORTED_READER_FEATURES)
    if unknown:
        raise UnsupportedReaderFeature(f"unsupported reader feature(s): {', '.join(unknown)}", path=path)


def _reconcile(
    file_actions: DataFrame, needs_merge: bool, root: Location, partitions: int | None = None
) -> DataFrame:
    """One row per logical file: the last action (greatest ``(version, ord)``) wins.

    Logical files are keyed by the canonical path (CKPT-CONTENT-014, relative to ``root``) and the
    deletion-vector id.

    A grouped aggregation keyed by the file identity: ``max_by`` keeps, per key, the
    ``(add, remove)`` pair whose ``(version, ord)`` is greatest. Spark plans it as a partial
    aggregation before the shuffle and a final one after it — no window, no global order.

    With ``partitions``, the actions are first hash-partitioned into that many partitions by
    :func:`placement_key` of their path and grouped by it (it tells the same identities apart as the canonical
    path): the aggregation needs no shuffle of its own, and the state comes out in the
    partitions a writer stages its files from (issue #12: one shuffle and one sort less per write).
    """
    if partitions is not None:
        key = placement_key(F.coalesce(F.col("add.path"), F.col("remove.path")), root)
        file_actions = file_actions.withColumn(_KEY, key).repartition(partitions, _KEY)
    if not needs_merge:
        return file_actions.select(*FILE_ACTIONS)
    # Partitioned, _KEY tells the paths apart: the canonical path's expression is not built (issue #12).
    path, dv = (F.col(_KEY), _dv_identity()) if partitions is not None else file_identity(root)
    last = F.max_by(F.struct(*FILE_ACTIONS), F.struct("version", "ord"))
    return (
        file_actions.groupBy(path, dv)
        .agg(last.alias("_last"))
        .select(*[F.col(f"_last.{kind}").alias(kind) for kind in FILE_ACTIONS])
    )


_KEY = "_key"


def file_identity(root: Location) -> tuple[Column, Column]:
    """The identity of a file action row (columns ``add``, ``remove``): its canonical path
    (``CKPT-CONTENT-014``, relative to ``root``) as ``_path`` and its deletion-vector id as ``_dv``."""
    key_path = canonical_path(F.coalesce(F.col("add.path"), F.col("remove.path")), root)
    return key_path.alias("_path"), _dv_identity()


def _dv_identity() -> Column:
    """The deletion-vector part of :func:`file_identity`, as ``_dv``."""
    return dv_unique_id(F.coalesce(F.col("add.deletionVector"), F.col("remove.deletionVector"))).alias("_dv")


def unexpired(min_tombstone_ms: int) -> Column:
    """True for an ``add`` row and for a tombstone deleted after ``min_tombstone_ms`` (strictly)."""
    deleted = F.coalesce(F.col("remove.deletionTimestamp"), F.lit(0))
    return F.col("add").isNotNull() | (F.col("remove").isNotNull() & (deleted > F.lit(min_tombstone_ms)))


def live_state(reconciled: DataFrame, min_tombstone_ms: int, *, as_logged: bool = False) -> DataFrame:
    """Reconciled file actions as state rows: live files and unexpired tombstones, ``dataChange`` false.

    With ``as_logged``, each action is kept as the log has it (``dataChange`` too): for a writer,
    whose checkpoint rows rebuild every action and set ``dataChange`` false themselves
    (:func:`~reference_impl.write.rows.checkpoint_add`) — one copy of each row's action less (issue #12).
    """
    live = reconciled.where(unexpired(min_tombstone_ms))
    if as_logged:
        return live.select("add", F.when(F.col("add").isNull(), F.col("remove")).alias("remove"))
    return live.select(
        F.when(F.col("add").isNotNull(), F.col("add").withField("dataChange", F.lit(False))).alias("add"),
        F.when(F.col("add").isNull(), F.col("remove").withField("dataChange", F.lit(False))).alias("remove"),
    )


def file_actions_of_commits(commits: DataFrame) -> DataFrame:
    """The file-action rows of a commit scan (:func:`~reference_impl.read.commits.read_commits`)."""
    return commits.where(F.col("add").isNotNull() | F.col("remove").isNotNull()).select(
        "version", "ord", "add", "remove"
    )


def reconcile_commits(
    commits: DataFrame, root: Location, min_tombstone_ms: int, partitions: int | None = None
) -> DataFrame:
    """The state rows the file actions of ``commits`` alone leave: the last action per identity, as
    logged (a writer's, as :meth:`Snapshot.partitioned_state`); with ``partitions``, in that many hash partitions."""
    reconciled = _reconcile(file_actions_of_commits(commits), True, root, partitions)
    return live_state(reconciled, min_tombstone_ms, as_logged=True)


def read_snapshot(
    spark: SparkSession,
    table: str | os.PathLike[str] | Location | Table,
    *,
    version: int | None = None,
    now_ms: int | None = None,
    max_fallbacks: int = DEFAULT_MAX_FALLBACKS,
    listing: LogListing | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> Snapshot:
    """Reconstruct ``version`` (default: latest) of ``table``. See the module docs.

    ``table`` is a local path, a URI (``hdfs://``, ``s3://``, …) or an opened
    :class:`~reference_impl.log.table.Table`; ``storage_options`` configure its store (deltalake's
    names, :mod:`reference_impl.storage.options`). ``listing`` replaces the listing of
    ``_delta_log`` (default: list it now). The cleaner passes the classification of its listing
    without the files it plans to delete, to prove the plan changes no state.
    """
    opened = open_table(table, storage_options, session=lambda: spark)
    use_storage(spark, opened.storage, opened.root)
    storage, log_dir = opened.storage, opened.log_dir
    if listing is None:
        listing = list_log(storage, log_dir)
    if not listing.commits and not listing.checkpoints:
        raise TableNotFound("_delta_log has no commit and no checkpoint", path=str(log_dir))
    hint, hint_error = read_last_checkpoint(storage, log_dir)
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    first_error: CheckpointError | None = None
    skipped: list[str] = []
    for attempt, segment in enumerate(
        segments_newest_first(listing, hint, hint_error=hint_error, version=version)
    ):
        if attempt > max_fallbacks:
            break
        try:
            return _build(spark, opened, listing, segment, now, tuple(skipped))
        except fallback_errors() as exc:
            first_error = first_error or exc
            if segment.checkpoint is None:
                break
            skipped.append(segment.checkpoint.name)
    assert first_error is not None
    raise first_error


def _build(
    spark: SparkSession,
    table: Table,
    listing: LogListing,
    segment: LogSegment,
    now_ms: int,
    skipped: tuple[str, ...],
) -> Snapshot:
    storage, log_dir = table.storage, listing.log_dir
    if skipped:
        segment = LogSegment(
            segment.log_dir, segment.version, segment.checkpoint, segment.commits, segment.hint, skipped
        )
    checkpoint = load_checkpoint(spark, storage, log_dir, segment.checkpoint) if segment.checkpoint else None
    size_queries(spark, sum(replayed_bytes(segment, checkpoint)))
    commit_rows: list[tuple[int, dict[str, Any]]] = []
    if segment.commits:
        commit_rows = non_file_rows(spark, storage, log_dir, segment.commits)
        _check_one_per_commit(commit_rows, log_dir)
    protocol, metadata, txns, domains = _replay_non_file(checkpoint, commit_rows, now_ms, log_dir)
    check_reader_features(protocol, str(log_dir))
    min_tombstone = now_ms - TableProperties(metadata.get("configuration")).deleted_file_retention_ms
    return Snapshot(
        table=table.root,
        storage=table.storage,
        version=segment.version,
        segment=segment,
        listing=listing,
        protocol=protocol,
        metadata=metadata,
        txns=txns,
        domains=domains,
        checkpoint=checkpoint,
        now_ms=now_ms,
        replay=functools.partial(_replayed_file_actions, spark, storage, segment, checkpoint),
        needs_merge=bool(segment.commits),
        min_tombstone_ms=min_tombstone,
    )


def _replayed_file_actions(
    spark: SparkSession, storage: Storage, segment: LogSegment, checkpoint: CheckpointContent | None
) -> DataFrame:
    """The file actions of the checkpoint (at its version, ``ord`` 0) and of the commits after it
    (:func:`~reference_impl.read.commits.read_commits`), in one union: :attr:`Snapshot.file_actions`."""
    file_frames: list[DataFrame] = []
    if checkpoint is not None:
        cp_version = F.lit(checkpoint.instance.version).cast("long")
        file_frames.append(
            checkpoint.file_actions.select(
                cp_version.alias("version"), F.lit(0).cast("long").alias("ord"), "add", "remove"
            )
        )
    commits_df = read_commits(spark, storage, segment.log_dir, segment.commits)
    if commits_df is not None:
        file_frames.append(file_actions_of_commits(commits_df))
    if not file_frames:
        return spark.createDataFrame([], COMMIT_SCHEMA).select(
            F.lit(0).cast("long").alias("version"), F.lit(0).cast("long").alias("ord"), "add", "remove"
        )
    actions = file_frames[0]
    for frame in file_frames[1:]:
        actions = actions.unionByName(frame)
    return actions


def replayed_bytes(segment: LogSegment, checkpoint: CheckpointContent | None) -> tuple[int, int]:
    """Bytes of the commit files and of the checkpoint files (top-level files, sidecars) ``segment`` replays."""
    commits = sum(info.size for _, info in segment.commits)
    if checkpoint is None:
        return commits, 0
    files = sum(info.size for info in checkpoint.instance.files)
    return commits, files + sum(int(s.action.get("sizeInBytes") or 0) for s in checkpoint.sidecars)


def _check_one_per_commit(commit_rows: list[tuple[int, dict[str, Any]]], log_dir: Location) -> None:
    """PROTOCOL: at most one ``metaData`` (and one ``protocol``) per version."""
    seen: dict[tuple[int, str], int] = {}
    for version, action in commit_rows:
        kind = next(iter(action))
        if kind in ("protocol", "metaData"):
            seen[(version, kind)] = seen.get((version, kind), 0) + 1
            if seen[(version, kind)] > 1:
                raise LogCorrupt(
                    f"more than one {kind} action in version {version}",
                    path=str(log_dir / f"{version:020d}.json"),
                )
