"""Incremental V2 checkpoints: list the previous checkpoint's sidecars again for buckets no commit touched.

Spec: ``spec/checkpoints.md`` §12.1 Sidecar reuse (``CKPT-INC-*``); design and correctness sketch in
``docs/incremental-v2-checkpoints.md``.

**Layout.** With ``incremental`` the writer records a bucket layout: file action ``a`` goes to bucket
``pmod(murmur3(key), N)`` where ``key`` is the canonical path of ``coalesce(add.path, remove.path)``
(``CKPT-CONTENT-014``) relative to the table root when it lies under it (else the whole canonical
path: a moved or copied table keeps its layout) — the Spark partition ``repartition(N, key)`` puts it
in, so one task writes one bucket — and one sidecar holds one bucket. The layout is written
into the checkpoint itself (never only into ``_last_checkpoint``, which any writer replaces):

| where | tag | value |
|---|---|---|
| ``checkpointMetadata.tags`` | :data:`LAYOUT_TAG` | :data:`LAYOUT` |
| ``checkpointMetadata.tags`` | :data:`BUCKETS_TAG` | ``N`` |
| ``sidecar.tags`` | :data:`BUCKET_TAG` | the bucket the sidecar holds |
| ``sidecar.tags`` | :data:`MIN_DELETION_TAG` | the smallest ``deletionTimestamp`` of its tombstones (absent: none) |

**Reuse.** The next checkpoint with ``incremental`` starts from the checkpoint its replay used (the
*base*). It reuses base sidecars only when the base has this layout with every bucket at most once,
the same ``N`` (kept while buckets hold at most twice the per-sidecar cap on average), and the
same sidecar Parquet schema (``sidecarFileSchema``) the new rows have. A bucket is *dirty* when a commit after the base holds
a file action whose key falls into it (decided exactly, from the keys, not from ``dataChange``), or
when its oldest tombstone has expired by the new cutoff, or when its base sidecar has no rows.
Dirty buckets are rewritten from the state; the others' sidecar actions are listed again,
unchanged. Anything else means a full write (the reason is reported as the ``incremental`` phase's
note).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from reference_impl.read.commits import read_commits
from reference_impl.spark.columns import canonical_path
from reference_impl.write.sizing import DELTA_SPARK_ACTIONS_PER_SIDECAR

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

    from reference_impl.read.snapshot import Snapshot
    from reference_impl.storage import Location

LAYOUT_TAG = "delta-ckpt.layout"
LAYOUT = "hash-path-v2"  # v1 hashed the absolute canonical path: a moved table's buckets changed
BUCKETS_TAG = "delta-ckpt.buckets"
BUCKET_TAG = "delta-ckpt.bucket"
MIN_DELETION_TAG = "delta-ckpt.minDeletionTimestamp"


def file_key(root: Location) -> Column:
    """The bucketing key of a file action row: its canonical path (``CKPT-CONTENT-014``), so that every
    spelling of one logical file falls into one bucket, relative to the table root when under it."""
    key = canonical_path(F.coalesce(F.col("add.path"), F.col("remove.path")), root)
    prefix = F.regexp_replace(canonical_path(F.lit("x"), root), "x$", "")  # the canonical root, with "/"
    return F.when(key.startswith(prefix), key.substr(F.length(prefix) + 1, F.length(key))).otherwise(key)


def bucket_of(buckets: int, root: Location) -> Column:
    """The bucket of a file action row: the partition ``repartition(buckets, file_key(root))`` gives it."""
    return F.pmod(F.hash(file_key(root)), F.lit(buckets))


@dataclass(frozen=True)
class ReusePlan:
    """``buckets`` buckets; ``reused`` bucket -> the base's ``sidecar`` action (JSON form) listed again."""

    buckets: int
    reused: dict[int, dict[str, Any]]
    dirty: frozenset[int]


def bucket_tags(bucket: int, oldest_tombstone: int | None) -> dict[str, str]:
    """The ``sidecar.tags`` of a sidecar holding ``bucket``."""
    tags = {BUCKET_TAG: str(bucket)}
    if oldest_tombstone is not None:
        tags[MIN_DELETION_TAG] = str(oldest_tombstone)
    return tags


def layout_buckets(snap: Snapshot, wanted: int, total_actions: int, per_bucket: int | None) -> int:
    """The bucket count: the base's when it has our layout and its buckets hold at most twice the
    cap (``per_bucket``, else delta-spark's 50,000) on average, else ``wanted`` (layout drift)."""
    base = snap.checkpoint
    tags = ((base.checkpoint_metadata or {}).get("tags") or {}) if base is not None else {}
    if tags.get(LAYOUT_TAG) != LAYOUT:
        return wanted
    try:
        kept = int(tags[BUCKETS_TAG])
    except (KeyError, ValueError):
        return wanted
    cap = per_bucket or DELTA_SPARK_ACTIONS_PER_SIDECAR
    return kept if kept > 0 and total_actions <= 2 * cap * kept else wanted


def plan_reuse(
    spark: SparkSession, snap: Snapshot, buckets: int, sidecar_schema: str, min_tombstone_ms: int
) -> ReusePlan | str:
    """Which buckets the base's sidecars still hold exactly; a string says why nothing can be reused."""
    base = snap.checkpoint
    if base is None or not base.sidecars:
        return "no base V2 checkpoint with sidecars"
    tags = (base.checkpoint_metadata or {}).get("tags") or {}
    if tags.get(LAYOUT_TAG) != LAYOUT or tags.get(BUCKETS_TAG) != str(buckets):
        return (
            f"the base checkpoint has layout {tags.get(LAYOUT_TAG)!r} with {tags.get(BUCKETS_TAG)!r} buckets"
        )
    if not _same_schema(tags.get("sidecarFileSchema"), sidecar_schema):
        return "the base sidecars have another Parquet schema"
    by_bucket: dict[int, dict[str, Any]] = {}
    for sidecar in base.sidecars:
        action = sidecar.action
        bucket = (action.get("tags") or {}).get(BUCKET_TAG)
        if bucket is None or not bucket.isdigit() or int(bucket) >= buckets or int(bucket) in by_bucket:
            return f"sidecar {sidecar.name} has no usable {BUCKET_TAG} tag ({bucket!r})"
        by_bucket[int(bucket)] = action
    dirty = set(_touched_buckets(spark, snap, buckets))
    for bucket, action in by_bucket.items():
        oldest = (action.get("tags") or {}).get(MIN_DELETION_TAG)
        if oldest is not None and int(oldest) <= min_tombstone_ms:
            dirty.add(bucket)  # a tombstone in it has expired: rewrite it without
    reused = {b: a for b, a in by_bucket.items() if b not in dirty}
    return ReusePlan(buckets, reused, frozenset(dirty))


def _same_schema(recorded: str | None, wanted: str) -> bool:
    if recorded is None:
        return False
    try:
        return bool(json.loads(recorded) == json.loads(wanted))
    except ValueError:
        return False


def _touched_buckets(spark: SparkSession, snap: Snapshot, buckets: int) -> list[int]:
    """The buckets of every file action in the commits after the base checkpoint (one small scan)."""
    commits = read_commits(spark, snap.storage, snap.listing.log_dir, snap.segment.commits)
    if commits is None:
        return []
    rows = (
        commits.where(F.col("add").isNotNull() | F.col("remove").isNotNull())
        .select(bucket_of(buckets, snap.table).alias("bucket"))
        .distinct()
        .collect()
    )
    return sorted(int(r["bucket"]) for r in rows)
