"""Incremental V2 checkpoints: list the base checkpoint's sidecars again when no commit since touched their files.

Spec: ``spec/checkpoints.md`` §12.1 Sidecar reuse (``CKPT-INC-*``); design and correctness sketch in
``docs/incremental-v2-checkpoints.md``.

**Layout** (:data:`LAYOUT`, *append*). Sidecars are not buckets of a key: a full write sizes and
partitions them as any V2 checkpoint (:mod:`~reference_impl.write.sizing`), and the next incremental
checkpoint starts from the checkpoint its replay used (the *base*):

* a base sidecar is **reused** — listed again, unchanged — when no file action of a commit after
  the base has the identity (canonical path, deletion-vector id: ``CKPT-CONTENT-014``) of one of
  its rows (no remove or re-add since; decided exactly, by joining the identities, not from
  ``dataChange``), none of its tombstones has expired by the new cutoff, it has rows, and it is
  younger than the *reuse age* (``CKPT-INC-004``: half the log retention, :func:`reuse_cutoff`);
* the other base sidecars are **rewritten**: their surviving rows (those the commits did not
  touch, expired tombstones dropped) go into new sidecars, with
* the **changes**: the last action per identity of the commits after the base (new adds, new
  tombstones), sized by the same policy except that no sidecar is added only to use another core
  (:meth:`~reference_impl.write.writer._Writer.estimated_sidecars`), so an append writes only new sidecars;
* **compaction**: a sidecar is *small* below ``cap // SMALL_SHARE`` rows (``cap``: the per-sidecar
  action cap, ``--actions-per-sidecar`` or delta-spark's 50,000; :mod:`~reference_impl.write.sizing`); when
  ``max_small_sidecars`` or more small base sidecars would be reused, all of them are rewritten
  into the new sidecars instead, so appends do not pile up small files.

It reuses nothing (a full write, the reason reported as a progress note) unless the base is a V2
checkpoint with sidecars, this layout in ``checkpointMetadata.tags`` and the sidecar Parquet schema
(``sidecarFileSchema``) the new rows have. The policy is recorded in ``checkpointMetadata.tags``
of every checkpoint written with ``incremental``:

| tag | value |
|---|---|
| :data:`LAYOUT_TAG` | :data:`LAYOUT` |
| :data:`SMALL_ROWS_TAG` | rows below which a sidecar is small |
| :data:`MAX_SMALL_TAG` | ``max_small_sidecars`` |

Every ``sidecar`` action it writes records in its ``tags`` (``CKPT-INC-006``, :func:`sidecar_tags`)
the file's ``add`` and ``remove`` rows and its oldest tombstone, taken from the read-back of the
staged file, and its name set's count and digest (``CKPT-INC-007``; a reused sidecar's tags are
copied): the next writer counts and expires base sidecars from
these tags, reading no row, and writes in full when a base sidecar has none, or when the footer of
one that could be listed again disagrees with them (:func:`_footer_agrees`: row count, null counts
and the smallest ``deletionTimestamp`` from the row groups' statistics, no Spark job). The base
sidecars that could be listed again are searched for a file the commits touch
(:func:`_touched_sidecars`): a row whose last path segment
(:func:`~reference_impl.spark.columns.canonical_name`) a touched file shares marks its sidecar — a
superset, never a miss, since a re-add of a path the base holds supersedes it and must rewrite that
sidecar; the rows of the sidecars rewritten are then compared by identity. A sidecar with a usable
**name set** (``CKPT-INC-007``/``-008``, :mod:`~reference_impl.write.name_sets`: the hashes of its
rows' canonical names, in a file beside it, built in the read-back of every sidecar this writer
stages) is searched on the driver, no row read; the others are read, only their ``add.path`` and
``remove.path`` (one Spark job).
The rows written are read back as any sidecar's. The writer re-checks every reused sidecar before
and after it publishes the top-level file (``CKPT-INC-005``, :mod:`~reference_impl.write.writer`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql import types as T

from reference_impl.errors import StorageError
from reference_impl.log.naming import SIDECAR_DIR
from reference_impl.read.commits import read_commits
from reference_impl.read.sidecars import ResolvedSidecar
from reference_impl.read.snapshot import file_identity, reconcile_commits, replayed_bytes, unexpired
from reference_impl.spark.columns import canonical_name
from reference_impl.spark.session import size_queries
from reference_impl.write import name_sets
from reference_impl.write.hint import schema_json
from reference_impl.write.name_sets import NAME_SET_TAG
from reference_impl.write.result import FileRole, WrittenFile
from reference_impl.write.rows import PartialState
from reference_impl.write.sizing import small_rows

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from reference_impl.read.snapshot import Snapshot
    from reference_impl.storage import Location, Storage
    from reference_impl.write.staging import ActionCounts

ADDS_TAG = "delta-ckpt.numAdds"
REMOVES_TAG = "delta-ckpt.numRemoves"
OLDEST_TAG = "delta-ckpt.minDeletionTimestamp"
LAYOUT_TAG = "delta-ckpt.layout"
#: append-v1 recorded no counts in the ``sidecar`` actions' tags; hash-path-v1/-v2 bucketed by a hash
#: of the path: an append dirtied every bucket.
LAYOUT = "append-v2"
SMALL_ROWS_TAG = "delta-ckpt.smallSidecarRows"
MAX_SMALL_TAG = "delta-ckpt.maxSmallSidecars"
#: A sidecar older than ``log retention // REUSE_AGE_SHARE`` is not reused (``CKPT-INC-004``).
REUSE_AGE_SHARE = 2


def layout_tags(actions_per_sidecar: int | None, max_small_sidecars: int) -> dict[str, str]:
    """The ``checkpointMetadata.tags`` recording the layout and its compaction policy."""
    return {
        LAYOUT_TAG: LAYOUT,
        SMALL_ROWS_TAG: str(small_rows(actions_per_sidecar)),
        MAX_SMALL_TAG: str(max_small_sidecars),
    }


def sidecar_tags(sidecar: WrittenFile) -> dict[str, str]:
    """The ``tags`` of a ``sidecar`` action this writer lists (``CKPT-INC-006``): the file's ``add`` and
    ``remove`` rows and its oldest tombstone (``remove.deletionTimestamp``, 0 when absent; no tag
    without a tombstone), so the next incremental writer reads no row to count it."""
    tags = {ADDS_TAG: str(sidecar.adds), REMOVES_TAG: str(sidecar.removes)}
    if sidecar.oldest_tombstone is not None:
        tags[OLDEST_TAG] = str(sidecar.oldest_tombstone)
    if sidecar.name_set is not None:
        tags[NAME_SET_TAG] = sidecar.name_set
    return tags


def with_name_set(
    storage: Storage, log_dir: Location, sidecar: WrittenFile, counts: ActionCounts, mtime_ms: int | None
) -> WrittenFile:
    """``sidecar``, just published, with the name set its read-back collected written next to it
    (``CKPT-INC-007``, :mod:`~reference_impl.write.name_sets`); unchanged when a row's name could not be told."""
    if counts.names is None:
        return sidecar
    return replace(sidecar, name_set=name_sets.write(storage, log_dir / sidecar.name, counts.names, mtime_ms))


def reuse_cutoff(now_ms: int, log_retention_ms: int) -> int:
    """Sidecars modified before this time are not reused (``CKPT-INC-004``): a cleaner that keeps
    unreferenced sidecars for the log retention (ours by default, ``CKPT-CLEAN-015``; delta-spark) cannot
    delete one during the next half of it, whatever happens to the checkpoints that list it."""
    return now_ms - log_retention_ms // REUSE_AGE_SHARE


@dataclass(frozen=True)
class BaseSidecar:
    """A sidecar of the base checkpoint and what the scan found in it."""

    resolved: ResolvedSidecar
    rows: int
    adds: int
    removes: int
    oldest_tombstone: int | None
    touched: bool

    @property
    def modification_time(self) -> int:
        """The ``modificationTime`` the base checkpoint's ``sidecar`` action records."""
        return int(self.resolved.action["modificationTime"])

    def as_reused(self) -> WrittenFile:
        action = self.resolved.action
        return WrittenFile(
            f"{SIDECAR_DIR}/{self.resolved.name}",
            FileRole.SIDECAR,
            int(action["sizeInBytes"]),
            self.modification_time,
            self.rows,
            self.adds,
            self.removes,
            kept_existing=True,
            oldest_tombstone=self.oldest_tombstone,
            name_set=self.name_set_tag,
        )

    @property
    def name_set_tag(self) -> str | None:
        """The name-set tag the base's ``sidecar`` action records (``CKPT-INC-007``), copied when listed again."""
        tag = (self.resolved.action.get("tags") or {}).get(NAME_SET_TAG)
        return tag if isinstance(tag, str) else None


@dataclass(frozen=True)
class Decision:
    """Which base sidecars are reused, and why each other one is rewritten."""

    reused: list[BaseSidecar]
    rewritten: dict[str, str]  # sidecar name -> reason: empty, touched, expired, aged, compacted
    #: Base sidecars searched for touched files, and how many of them were read (no usable name set).
    searched: int = 0
    read: int = 0

    def note(self) -> str:
        reasons: dict[str, int] = {}
        for reason in self.rewritten.values():
            reasons[reason] = reasons.get(reason, 0) + 1
        why = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        return (
            f"incremental: {len(self.reused)} sidecar(s) reused, {len(self.rewritten)} rewritten"
            + (f" ({why})" if why else "")
            + f"; {self.searched} searched for touched files, {self.read} of them read (no usable name set)"
        )


def decide(
    sidecars: list[BaseSidecar], cutoff_ms: int, reuse_after_ms: int, small: int, max_small: int
) -> Decision:
    """Reuse a base sidecar unless it was touched, holds an expired tombstone (deleted at or before
    ``cutoff_ms``), no rows, or was modified before ``reuse_after_ms`` (:func:`reuse_cutoff`); then,
    when ``max_small`` or more of the kept ones have fewer than ``small`` rows, rewrite those small
    ones too (compaction)."""
    rewritten: dict[str, str] = {}
    kept: list[BaseSidecar] = []
    for sidecar in sidecars:
        if sidecar.rows == 0:
            rewritten[sidecar.resolved.name] = "empty"
        elif sidecar.touched:
            rewritten[sidecar.resolved.name] = "touched"
        elif sidecar.oldest_tombstone is not None and sidecar.oldest_tombstone <= cutoff_ms:
            rewritten[sidecar.resolved.name] = "expired"
        elif sidecar.modification_time < reuse_after_ms:
            rewritten[sidecar.resolved.name] = "aged"
        else:
            kept.append(sidecar)
    smalls = [s for s in kept if s.rows < small]
    if len(smalls) >= max_small:
        rewritten.update((s.resolved.name, "compacted") for s in smalls)
        kept = [s for s in kept if s.rows >= small]
    return Decision(kept, rewritten)


def plan_partial(
    spark: SparkSession, snap: Snapshot, schema: T.StructType, actions_per_sidecar: int | None, max_small: int
) -> tuple[PartialState, Decision] | str:
    """The state of ``snap`` as reused base sidecars plus rows to write; a string says why nothing
    can be reused (then the caller writes the whole state, and sizes Spark's settings for it again:
    :func:`~reference_impl.spark.session.size_queries` may have been set for the commits alone).

    Spark's SQL settings are then those of a replay of what the rows to write are replayed from
    (:attr:`PartialState.replayed`): for an append of a few MB of commits, the small-log settings
    (no adaptive execution, no generated code), whatever the size of the base."""
    base = snap.checkpoint
    if base is None or not base.sidecars:
        return "no base V2 checkpoint with sidecars"
    tags = (base.checkpoint_metadata or {}).get("tags") or {}
    if tags.get(LAYOUT_TAG) != LAYOUT:
        return f"the base checkpoint has layout {tags.get(LAYOUT_TAG)!r}, not {LAYOUT!r}"
    if not _same_schema(tags.get("sidecarFileSchema"), schema_json(schema)):
        return "the base sidecars have another Parquet schema"
    recorded = [_recorded(s) for s in base.sidecars]
    missing = [s.name for s, r in zip(base.sidecars, recorded, strict=True) if r is None]
    if missing:
        return f"the base's sidecar {missing[0]} records no counts in its tags (CKPT-INC-006)"
    counted = [r for r in recorded if r is not None]
    cutoff = snap.now_ms - snap.properties.deleted_file_retention_ms
    reuse_after = reuse_cutoff(snap.now_ms, snap.properties.log_retention_ms)
    small = small_rows(actions_per_sidecar)
    # Only sidecars that could be listed again (rows, no expired tombstone, young enough; before
    # compaction, which can only shrink with more touched sidecars) are searched for touched files.
    candidates = decide(counted, cutoff, reuse_after, small, len(counted) + 1).reused
    if not candidates:
        return "no sidecar of the base can be listed again"
    disagreeing = next((c.resolved.name for c in candidates if not _footer_agrees(snap.storage, c)), None)
    if disagreeing is not None:
        return f"the base's sidecar {disagreeing} holds other counts than its tags record (CKPT-INC-006)"
    # From here on the queries read the commits after the base (and, below, the rewritten sidecars),
    # never the rest of the base: Spark's settings follow those bytes (a few: the small-log settings).
    commit_bytes = replayed_bytes(snap.segment, None)[0]
    size_queries(spark, commit_bytes)
    commits = read_commits(spark, snap.storage, snap.listing.log_dir, snap.segment.commits)
    hit: set[str] = set()
    read = 0
    touched_rows: int | None = 0  # file actions of the commits after the base, when counted
    changed: Callable[[int | None], DataFrame]
    if commits is None:
        changed = functools.partial(_no_changes, snap)
        touched = spark.createDataFrame([], "_path string, _dv string")
    else:
        changed = functools.partial(reconcile_commits, commits, snap.table, cutoff)
        touched = commits.where(F.col("add").isNotNull() | F.col("remove").isNotNull()).select(
            *file_identity(snap.table)
        )
        hit, read, touched_rows = _touched_sidecars(spark, snap.storage, candidates, touched)
    scanned = [replace(r, touched=r.resolved.name in hit) for r in counted]
    decision = replace(
        decide(scanned, cutoff, reuse_after, small, max_small), searched=len(candidates), read=read
    )
    if not decision.reused:
        return "no sidecar of the base can be listed again"
    carried = None
    rewritten = [s for s in scanned if s.resolved.name in decision.rewritten]
    replayed = (commit_bytes, sum(int(s.resolved.action["sizeInBytes"]) for s in rewritten))
    size_queries(spark, sum(replayed))
    if rewritten:
        # Few (the change): computed once (an eager local checkpoint), so each join that broadcasts
        # them reads these rows instead of reading and canonicalizing the commits again.
        touched = touched.distinct().localCheckpoint()
        uris = [s.resolved.path.spark_uri() for s in rewritten]
        rows = _with_hits(_keyed(spark, uris, schema, "add", "remove"), touched, snap.table)
        carried = rows.where(~F.col(_HIT) & unexpired(cutoff)).select("add", "remove")
    reused = [s.as_reused() for s in decision.reused]
    # Only the changes (an append): reconciled straight into the partitions its sidecars are written from.
    partitioned = commits is not None and carried is None
    # The changes are at most one row a file action of the commits; the carried rows, the rewritten ones'.
    bound = None if touched_rows is None else touched_rows + sum(s.rows for s in rewritten)
    return PartialState(reused, changed, carried, replayed, partitioned, bound), decision


def _no_changes(snap: Snapshot, _partitions: int | None) -> DataFrame:
    """No state rows (no commit after the base), typed as the state's."""
    return snap.state_df.limit(0)


def _same_identity(left: DataFrame, right: DataFrame) -> Column:
    """Equal identities; the deletion-vector id is null for most files, so it is compared null-safely."""
    return (left["_path"] == right["_path"]) & left["_dv"].eqNullSafe(right["_dv"])


def _recorded(sidecar: ResolvedSidecar) -> BaseSidecar | None:
    """What the base writer recorded in the ``sidecar`` action's tags (:func:`sidecar_tags`), not yet
    ``touched``; None when a count is missing or not a count."""
    tags = sidecar.action.get("tags") or {}
    try:
        adds, removes = int(tags[ADDS_TAG]), int(tags[REMOVES_TAG])
        oldest = None if tags.get(OLDEST_TAG) is None else int(tags[OLDEST_TAG])
    except (KeyError, TypeError, ValueError):
        return None
    if adds < 0 or removes < 0 or (removes > 0) != (oldest is not None):
        return None
    return BaseSidecar(sidecar, adds + removes, adds, removes, oldest, touched=False)


def _footer_agrees(storage: Storage, sidecar: BaseSidecar) -> bool:
    """Whether the sidecar's Parquet footer gives the counts its tags record (``CKPT-INC-006``), read
    on the driver without a row: its row count, the rows whose ``add.path`` / ``remove.path`` is not
    null, and its oldest tombstone (the smallest ``remove.deletionTimestamp``, 0 when a ``remove``
    has none) from the row groups' statistics. False when they differ, when a statistic needed is
    missing, or when the footer cannot be read: the caller then lists nothing again."""
    import pyarrow.parquet as pq

    try:
        with storage.open_read(sidecar.resolved.path) as handle:
            meta = pq.ParquetFile(handle).metadata
    except (OSError, ValueError, StorageError):  # pyarrow's ArrowInvalid is a ValueError
        return False
    wanted = ("add.path", "remove.path", "remove.deletionTimestamp")
    nulls = dict.fromkeys(wanted, 0)
    oldest: int | None = None
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        columns = {group.column(c).path_in_schema: group.column(c) for c in range(group.num_columns)}
        for name in wanted:
            stats = columns[name].statistics if name in columns else None
            if stats is None or not stats.has_null_count:
                return False
            nulls[name] += stats.null_count
        stamps = columns["remove.deletionTimestamp"].statistics
        if stamps.has_min_max:
            oldest = stamps.min if oldest is None else min(oldest, stamps.min)
    adds, removes = meta.num_rows - nulls["add.path"], meta.num_rows - nulls["remove.path"]
    if removes == 0:
        oldest = None
    elif nulls["remove.deletionTimestamp"] > nulls["remove.path"]:  # a remove without a timestamp
        oldest = 0
    return (meta.num_rows, adds, removes, oldest) == (
        sidecar.rows,
        sidecar.adds,
        sidecar.removes,
        sidecar.oldest_tombstone,
    )


#: The only columns :func:`_touched_sidecars` reads (Parquet column pruning).
_PATHS = T.StructType(
    [T.StructField(c, T.StructType([T.StructField("path", T.StringType())])) for c in ("add", "remove")]
)


def _touched_sidecars(
    spark: SparkSession, storage: Storage, sidecars: list[BaseSidecar], touched: DataFrame
) -> tuple[set[str], int, int | None]:
    """Names of the base sidecars that may hold a touched identity: a row whose canonical name
    (:func:`~reference_impl.spark.columns.canonical_name`) a touched file shares, or that has none.
    A superset of the sidecars that hold one (rewriting a sidecar is always safe: its rows are then
    compared by identity, :func:`_with_hits`). A sidecar with a usable name set
    (:func:`~reference_impl.write.name_sets.load_all`, ``CKPT-INC-008``) is answered from it and the
    touched names' hashes (one Spark job, reading the commits; one probe of all sets,
    :func:`~reference_impl.write.name_sets.holders`); the others are read, only
    ``add.path`` and ``remove.path``, the touched names broadcast (one Spark job). Also returns how
    many sidecars were read, and the rows of ``touched`` when the name-set job counted them (else None)."""
    spark.sparkContext.setJobDescription(f"delta-ckpt: find touched files in {len(sidecars)} base sidecar(s)")
    loaded = name_sets.load_all(storage, [(s.resolved.path, s.name_set_tag) for s in sidecars])
    sets = {s.resolved.name: found for s, found in zip(sidecars, loaded, strict=True) if found is not None}
    hit: set[str] = set()
    rows = None
    if sets:
        hashes, rows = name_sets.touched_hashes(touched)
        hit = name_sets.holders(sets, hashes)
    unread = [s.resolved.path.spark_uri() for s in sidecars if s.resolved.name not in sets]
    if unread:
        maybe, candidate = _maybe_touched(_keyed(spark, unread, _PATHS), touched)
        hit |= {r["_name"] for r in maybe.where(candidate).select("_name").collect()}
    return hit, len(unread), rows


def _keyed(spark: SparkSession, uris: list[str], schema: T.StructType, *columns: str) -> DataFrame:
    """Rows of base sidecars read with ``schema``: their file name (``_name``), ``columns`` and
    :func:`canonical_name` (``_key``)."""
    rows = spark.read.schema(schema).parquet(*uris)
    key = canonical_name(F.coalesce(F.col("add.path"), F.col("remove.path")))
    return rows.select(F.col("_metadata.file_name").alias("_name"), *columns, key.alias("_key"))


def _maybe_touched(keyed: DataFrame, touched: DataFrame) -> tuple[DataFrame, Column]:
    """``keyed`` left-joined with the touched files' last path segments (broadcast), and the column
    that is true where a row may hold a touched identity: its canonical name is one of them, or it
    has none."""
    names = touched.select(F.substring_index("_path", "/", -1).alias("_key")).distinct()
    maybe = keyed.join(F.broadcast(names.withColumn("_maybe", F.lit(True))), "_key", "left")
    return maybe, F.col("_maybe").isNotNull() | F.col("_key").isNull()


_HIT = "_hit"


def _with_hits(keyed: DataFrame, touched: DataFrame, root: Location) -> DataFrame:
    """``keyed`` (:func:`_keyed` with ``add`` and ``remove``) with ``_hit``: whether a row's identity
    is in ``touched``. Only rows whose canonical name a touched file shares (or that have none) are
    canonicalized and compared; both joins broadcast the few touched rows and keep every row of
    ``keyed``."""
    maybe, candidate = _maybe_touched(keyed, touched)
    identity = [
        F.when(candidate, column).alias(str(name))
        for column, name in zip(file_identity(root), ("_path", "_dv"), strict=True)
    ]
    rows = maybe.select(*keyed.columns, *identity)
    found = F.broadcast(touched.withColumn(_HIT, F.lit(True)))
    joined = rows.join(found, on=_same_identity(rows, found), how="left")
    return joined.select(*[rows[c] for c in keyed.columns], F.coalesce(found[_HIT], F.lit(False)).alias(_HIT))


def _same_schema(recorded: str | None, wanted: Any) -> bool:
    if recorded is None:
        return False
    try:
        return bool(json.loads(recorded) == wanted)
    except ValueError:
        return False
