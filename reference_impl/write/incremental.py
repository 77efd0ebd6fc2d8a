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
  tombstones), sized by the same policy, so an append writes only new sidecars;
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

The base sidecars are read only for their identity columns (no shuffle of the state): rows, adds,
removes and oldest tombstone per file — the re-check of every reused sidecar before anything is
written — and which files hold a touched identity, where only rows whose last path segment
(:func:`~reference_impl.spark.columns.canonical_name`) a touched file shares are canonicalized and
compared. The rows written are read back as any sidecar's. The writer re-checks every reused
sidecar before and after it publishes the top-level file (``CKPT-INC-005``,
:mod:`~reference_impl.write.writer`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from reference_impl.log.naming import SIDECAR_DIR
from reference_impl.read.commits import read_commits
from reference_impl.read.sidecars import ResolvedSidecar
from reference_impl.read.snapshot import file_identity, reconcile_commits, unexpired
from reference_impl.spark.columns import canonical_name
from reference_impl.write.hint import schema_json
from reference_impl.write.result import FileRole, WrittenFile
from reference_impl.write.rows import PartialState
from reference_impl.write.sizing import small_rows

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import types as T

    from reference_impl.read.snapshot import Snapshot
    from reference_impl.storage import Location

LAYOUT_TAG = "delta-ckpt.layout"
LAYOUT = "append-v1"  # hash-path-v1/-v2 bucketed by a hash of the path: an append dirtied every bucket
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
        )


@dataclass(frozen=True)
class Decision:
    """Which base sidecars are reused, and why each other one is rewritten."""

    reused: list[BaseSidecar]
    rewritten: dict[str, str]  # sidecar name -> reason: empty, touched, expired, aged, compacted

    def note(self) -> str:
        reasons: dict[str, int] = {}
        for reason in self.rewritten.values():
            reasons[reason] = reasons.get(reason, 0) + 1
        why = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        return f"incremental: {len(self.reused)} sidecar(s) reused, {len(self.rewritten)} rewritten" + (
            f" ({why})" if why else ""
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
    can be reused (then the caller writes the whole state)."""
    base = snap.checkpoint
    if base is None or not base.sidecars:
        return "no base V2 checkpoint with sidecars"
    tags = (base.checkpoint_metadata or {}).get("tags") or {}
    if tags.get(LAYOUT_TAG) != LAYOUT:
        return f"the base checkpoint has layout {tags.get(LAYOUT_TAG)!r}, not {LAYOUT!r}"
    if not _same_schema(tags.get("sidecarFileSchema"), schema_json(schema)):
        return "the base sidecars have another Parquet schema"
    cutoff = snap.now_ms - snap.properties.deleted_file_retention_ms
    commits = read_commits(spark, snap.storage, snap.listing.log_dir, snap.segment.commits)
    if commits is None:
        changed = snap.state_df.limit(0)
        touched = spark.createDataFrame([], "_path string, _dv string")
    else:
        changed = reconcile_commits(commits, snap.table, cutoff)
        touched = commits.where(F.col("add").isNotNull() | F.col("remove").isNotNull()).select(
            *file_identity(snap.table)
        )
        # Few (the change): computed once (an eager local checkpoint), so each join that broadcasts
        # them reads these rows instead of reading and canonicalizing the commits again.
        touched = touched.distinct().localCheckpoint()
    scanned = _scan(spark, snap, list(base.sidecars), schema, touched)
    reuse_after = reuse_cutoff(snap.now_ms, snap.properties.log_retention_ms)
    decision = decide(scanned, cutoff, reuse_after, small_rows(actions_per_sidecar), max_small)
    if not decision.reused:
        return "no sidecar of the base can be listed again"
    carried = None
    if decision.rewritten:
        uris = [s.resolved.path.spark_uri() for s in scanned if s.resolved.name in decision.rewritten]
        rows = _with_hits(_base_rows(spark, uris, schema, whole=True), touched, snap.table)
        carried = rows.where(~F.col(_HIT) & unexpired(cutoff)).select("add", "remove")
    reused = [s.as_reused() for s in decision.reused]
    return PartialState(reused, changed, carried), decision


def _same_identity(left: DataFrame, right: DataFrame) -> Column:
    """Equal identities; the deletion-vector id is null for most files, so it is compared null-safely."""
    return (left["_path"] == right["_path"]) & left["_dv"].eqNullSafe(right["_dv"])


def _scan(
    spark: SparkSession,
    snap: Snapshot,
    sidecars: list[ResolvedSidecar],
    schema: T.StructType,
    touched: DataFrame,
) -> list[BaseSidecar]:
    """Per base sidecar: rows, adds, removes, oldest tombstone and whether a commit touched one of
    its identities — one aggregation over the identity columns (one Spark job besides the broadcasts),
    the touched identities broadcast."""
    keyed = _with_hits(
        _base_rows(spark, [s.path.spark_uri() for s in sidecars], schema, whole=False), touched, snap.table
    )
    counts = keyed.groupBy("_name").agg(
        F.count(F.lit(1)).alias("rows"),
        F.count("add").alias("adds"),
        F.count("remove").alias("removes"),
        F.min("remove.deletionTimestamp").alias("oldest"),
        F.max(F.col(_HIT).cast("int")).alias("hits"),
    )
    spark.sparkContext.setJobDescription(f"delta-ckpt: scan {len(sidecars)} base sidecar(s)")
    found = {r["_name"]: r for r in counts.collect()}
    out = []
    for sidecar in sidecars:
        row = found.get(sidecar.name)
        if row is None:
            out.append(BaseSidecar(sidecar, 0, 0, 0, None, False))
        else:
            oldest = None if row["oldest"] is None else int(row["oldest"])
            counted = (int(row["rows"]), int(row["adds"]), int(row["removes"]))
            out.append(BaseSidecar(sidecar, *counted, oldest, bool(row["hits"])))
    return out


def _base_rows(spark: SparkSession, uris: list[str], schema: T.StructType, *, whole: bool) -> DataFrame:
    """Rows of base sidecars with their file name (``_name``) and :func:`canonical_name` (``_key``);
    unless ``whole``, only the fields the scan needs (Parquet reads only those columns)."""
    rows = spark.read.schema(schema).parquet(*uris)
    add, remove = F.col("add"), F.col("remove")
    if not whole:
        fields = {
            "add": ("path", "deletionVector"),
            "remove": ("path", "deletionVector", "deletionTimestamp"),
        }
        add, remove = (
            F.when(F.col(f"{c}.path").isNotNull(), F.struct(*[F.col(f"{c}.{f}").alias(f) for f in names]))
            for c, names in fields.items()
        )
    key = canonical_name(F.coalesce(F.col("add.path"), F.col("remove.path")))
    return rows.select(
        F.col("_metadata.file_name").alias("_name"),
        add.alias("add"),
        remove.alias("remove"),
        key.alias("_key"),
    )


_HIT = "_hit"


def _with_hits(keyed: DataFrame, touched: DataFrame, root: Location) -> DataFrame:
    """``keyed`` (:func:`_base_rows`) with ``_hit``: whether a row's identity is in ``touched``. Only
    rows whose canonical name a touched file shares (or that have none) are canonicalized and
    compared; both joins broadcast the few touched rows and keep every row of ``keyed``."""
    names = touched.select(F.substring_index("_path", "/", -1).alias("_key")).distinct()
    names = F.broadcast(names.withColumn("_maybe", F.lit(True)))
    maybe = keyed.join(names, "_key", "left")
    candidate = F.col("_maybe").isNotNull() | F.col("_key").isNull()
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
