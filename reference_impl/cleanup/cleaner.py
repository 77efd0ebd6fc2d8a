"""Metadata cleanup: delete expired log files, keep a compatibility checkpoint, collect sidecars.

Spec: ``spec/checkpoints.md`` §18 "Metadata cleanup" (``CKPT-CLEAN-001`` … ``CKPT-CLEAN-028``), §13
"Compatibility checkpoints" (``CKPT-COMPAT-001`` … ``-005``), divergences D6, D7, D11, D12;
PROTOCOL.md "Metadata Cleanup"; delta-spark ``MetadataCleanup.scala`` and
``DeltaHistoryManager.BufferingLogDeletionIterator``. The decisions themselves (clocks, cutoffs,
which file goes and why) are pure functions in :mod:`reference_impl.cleanup.plan`; the invariants
are :mod:`reference_impl.cleanup.invariants`; the compatibility checkpoint is
:mod:`reference_impl.cleanup.compat`. This module runs the steps in order.

Usage::

    result = cleanup("/path/to/table")                                  # the table's own retention
    result = cleanup(path, retention_ms=7 * 86_400_000, dry_run=True)   # show the plan, change nothing
    result.to_json()                                                    # what --json prints

The algorithm (§18.1):

1. Replay the latest version (the reference reader). If ``delta.enableExpiredLogCleanup`` is false,
   stop: nothing is deleted. If the protocol lists a writer feature this cleaner does not know,
   fail with ``UNSUPPORTED_WRITER_FEATURE`` (``CKPT-CLEAN-011``; the catalog-managed and
   coordinated-commit features are refused on purpose, ``CKPT-CLEAN-019``). With
   ``checkpointProtection``, the history before ``delta.requireCheckpointProtectionBeforeVersion``
   is deleted whole or not at all (``CKPT-CLEAN-021``).
2. *Cutoff* = midnight UTC of ``now - delta.logRetentionDuration`` (30 days when unset).
3. *Cutoff commit* = the newest commit whose timestamp (modification time, or in-commit timestamp
   where enabled, made strictly increasing) is not later than the cutoff.
4. *Cutoff checkpoint* = the newest complete checkpoint at or before the cutoff commit whose commit
   file exists and whose version is not above ``_last_checkpoint``'s. None: stop (``CKPT-CLEAN-004``).
5. Plan the deletions, below. Check every invariant. Only then write anything.
6. Write the compatibility checkpoint when needed, verify it, then delete in the order below.

What is deleted and what is kept:

| file in ``_delta_log`` | deleted when | else kept because |
|---|---|---|
| ``n.json`` (commit) | ``n <`` cutoff checkpoint ``c`` | ``n == c``: the commit at the checkpoint (``CKPT-CLEAN-001``, D11); ``n > c`` |
| any checkpoint file (classic, part, UUID-named; also incomplete and 0-byte ones) | ``n < c`` | the cutoff checkpoint, or newer |
| ``n.crc`` (version checksum) | ``n < c`` | newer |
| ``s.e.compacted.json`` | ``s <= c`` (``CKPT-CLEAN-010``) | ``s > c`` |
| ``_sidecars/<name>`` | referenced by no remaining checkpoint **and** modified before the sidecar cutoff | referenced (``CKPT-CLEAN-013``), or too young |
| ``.<name>.crc`` (Hadoop checksum of a file) | together with ``<name>`` | kept with its file |
| ``.delta-ckpt-staging-<uuid>/`` (a writer's staging, with everything in it) | every file in it is modified before the staging cutoff: the log cutoff, never later than the one-day floor (``CKPT-CLEAN-025``); with no file in it, it and every directory in it last changed before that cutoff | a file too young, or an empty one changed since (or on a store without directory times): its writer may still run |
| ``_sidecars/.<sidecar>.<uuid>.tmp`` (a task's sidecar temporary) | modified before the sidecar cutoff (``CKPT-CLEAN-027``) | too young: its task may still write it |
| ``_last_checkpoint`` | never (``CKPT-CLEAN-028``) | |
| other hidden files (temporaries in ``_delta_log`` itself), other directories (``_commits``, …), unknown names | never (``CKPT-CLEAN-028``) | |

Invariants, checked before anything is written or deleted:

Any failure raises ``CLEANUP_INVARIANT_VIOLATED`` with nothing written and nothing deleted:

* the plan itself (:func:`reference_impl.cleanup.invariants.structural_checks`): ``CKPT-CLEAN-001`` …
  ``-006``, ``-013``, ``-014``, ``-025``, ``-028``;
* every sidecar of every remaining checkpoint exists with its recorded ``sizeInBytes``;
* the state is unchanged: the reader reconstructs each verified version twice, from the real listing
  and from the same listing without the planned deletions (``read_snapshot(listing=...)``), and the two
  :class:`~spec.table_state.TableState`\\ s must be equal. Verified versions: the latest
  and the oldest kept one (the cutoff checkpoint's) by default — they bound the segment of every
  kept version — or every kept version with ``verify_all_versions=True`` (two replays per version).

The compatibility checkpoint is verified after it is written: the version it copies, read from a view
without the UUID-named file, must use the copy and give the same state (``CKPT-COMPAT-002``); if
not, the copy is removed again and the cleanup fails with nothing deleted.

Compatibility checkpoint (§13, ``CKPT-COMPAT-004``):

When the plan deletes at least one commit, checkpoint, checksum or compaction file, and the latest
version's checkpoint is UUID-named with no complete classic-named or multi-part checkpoint at its
version, the cleaner first publishes ``n.checkpoint.parquet``: the same ``checkpointMetadata``, the
same ``sidecar`` actions (so no sidecar is copied) and the same non-file actions
(``CKPT-COMPAT-003``), written by the writer's own top-level-file path
(:func:`reference_impl.write.writer.write_top_level_file`) and published create-if-absent
(:mod:`reference_impl.cleanup.compat`).
This is delta-spark's rule (``MetadataCleanup.createSinglePartCheckpointForBackwardCompat``).

Deletion order, and why:

Log files go in ascending version order, and within a version: compactions starting there, the
checkpoint files, the checksum, the commit. Sidecars go next, abandoned writer staging last (each
directory with one recursive delete of the store, :meth:`~reference_impl.storage.Storage.remove_tree`,
which deletes what :meth:`~reference_impl.storage.Storage.list_tree` lists — the files the decision
was made on: on an object store the objects under its prefix, S3A's directory markers included; a
prefix with no object under it holds no file, so it is kept, never reported deleted: spec §19.4).

On an object store (:attr:`~reference_impl.storage.Storage.batched_deletes`) the same order is kept
batch by batch (:func:`_batches`): a checkpoint's files are one batch, each commit starts one (with
the checksums and compactions that follow it in plan order), each deleted with one DeleteObjects
request after the previous batch succeeded. The store deletes a batch's keys in its own order and
may stop part-way, so a batch holds at most one commit: whatever part of it is gone, the remaining
commits stay contiguous, the commits below a checkpoint are gone before it (``CKPT-CLEAN-022``)
and a checkpoint goes before its commit. A failed batch is one ``STORAGE_ERROR`` saying which of
its files are gone and that nothing after it was deleted.

* Ascending versions: every intermediate log is the log a smaller cleanup would have left — the
  remaining commits stay contiguous (``CKPT-CLEAN-002`` holds at every step), and each old version
  either still reconstructs correctly or fails cleanly (``VERSION_NOT_FOUND``); no reader ever
  sees a gap it would have to bridge. Deleting newest-first would open gaps.
* Checkpoint before the commit of its version: a checkpoint never exists without its commit, which
  delta-spark needs to use it (D11).
* Compactions before the commits they summarise, so a compaction never outlives its commits.
* Sidecars last: a sidecar is unreferenced only once every checkpoint that used it is gone; deleting
  it earlier would break a checkpoint a reader may still pick.
* Nothing at or after the cutoff checkpoint's version is ever touched, so the latest version and
  every kept version read the same files throughout.

A crash (or error) anywhere leaves such an intermediate log; a re-run plans again from the listing
and finishes the job (the compatibility checkpoint then already exists). The publication points
``cleanup:planned``, ``cleanup:compat``, ``cleanup:deleted`` (k), ``cleanup:log-deleted`` and
``cleanup:done`` are reported to the caller's :class:`~reference_impl.hooks.Hooks` (the crash tests
stop the process there).

Sidecar window: the choice and why (D6, ``CKPT-CLEAN-014`` … ``-017``):

Default: the log cutoff (delta-spark's choice, ``CKPT-CLEAN-015``) — a sidecar is at least as old as
the commits deleted with it, so an unreferenced one is never younger than anything else removed,
and a slow writer (which writes its sidecars before its top-level file) is protected for the whole
log retention, not just a day. Configurable (``sidecar_retention_ms``), truncated to midnight UTC
like the log cutoff, but never later than the one-day floor: a configured window shorter than
that fails with ``INVALID_OPTION`` before anything happens (``CKPT-CLEAN-016``); a default
window that would be shorter (a log retention under a day) is clamped to the floor and reported.
Unlike delta-spark, sidecars are collected in every run that found a cutoff checkpoint, not only in
runs that deleted a checkpoint file (D6), so orphans of failed writers are collected too.

Differences from delta-spark's cleanup:

* D12: delta-spark may also delete the cutoff commit and the checkpoint before it (it deletes up to
  the first checkpoint whose preceding file is older than the cutoff); this cleaner keeps the
  newest checkpoint at or before the cutoff commit and everything after it.
* D7: log compaction files are deleted here (``CKPT-CLEAN-010``); delta-spark never deletes them.
* D6: sidecar collection runs in every round (see above).
* delta-spark deletes nothing when ``_last_checkpoint`` is missing; this cleaner only uses the
  hint as a cap (``CKPT-CLEAN-006``).
* Timestamps: delta-spark makes modification times increasing over *all* listed files (commits,
  checksums, checkpoints) and never uses in-commit timestamps; this cleaner follows §18.1 (commits
  only, in-commit timestamps where enabled). delta-spark also keeps a buffer so a deletion never
  removes the anchor of an adjusted timestamp; this cleaner does not (a later run may therefore see
  earlier timestamps for the commits it kept).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reference_impl.cleanup import compat
from reference_impl.cleanup.invariants import (
    InvariantCheck,
    sidecars_exist,
    state_unchanged,
    structural_checks,
)
from reference_impl.cleanup.plan import (
    CHECKPOINT_PROTECTION,
    FileDecision,
    LogPlan,
    SidecarCutoff,
    SidecarPlan,
    StagingPlan,
    commit_timestamps,
    format_ms,
    log_cutoff,
    plan_log,
    plan_sidecars,
    plan_staging,
    protect_history,
    read_in_commit_timestamp,
    sidecar_cutoff,
    sidecar_floor,
    staging_cutoff,
    truncate_to_day,
)
from reference_impl.cleanup.references import References, collect_references
from reference_impl.cleanup.result import CleanupResult, CleanupStatus, CompatAction, CompatCheckpoint
from reference_impl.errors import CleanupInvariantViolated, InvalidOption, StorageError
from reference_impl.hooks import NO_HOOKS, Hooks, PublicationPoint
from reference_impl.log.features import check_writer_features
from reference_impl.log.last_checkpoint import read_last_checkpoint
from reference_impl.log.listing import LogListing, classify
from reference_impl.log.naming import SIDECAR_DIR, is_staging_dir_name
from reference_impl.log.table import Table, open_table
from reference_impl.progress import Progress, silent
from reference_impl.read.sidecars import sidecars_dir_is_own
from reference_impl.read.snapshot import Snapshot, read_snapshot
from reference_impl.spark.session import session_source
from reference_impl.storage import FileInfo, Location, SessionSource, Storage
from reference_impl.storage.base import newest_dir_mtime
from spec.table_state import TableState
from spec.vocabulary import LogFileKind

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class _Clocks:
    """The clocks of one run (§18.1, §18.3): now, the log cutoff, the sidecar cutoff and floor."""

    now_ms: int
    retention_ms: int
    retention_source: str
    cutoff_ms: int
    floor_ms: int
    sidecars: SidecarCutoff


@dataclass(frozen=True)
class _Log:
    """One listing of ``_delta_log``, of ``_delta_log/_sidecars`` and of the writer staging directories."""

    files: list[FileInfo]
    directories: list[str]
    sidecars: list[FileInfo]
    listing: LogListing
    staging: dict[str, list[FileInfo]]
    #: An empty staging directory's last change (:func:`~reference_impl.storage.base.newest_dir_mtime`).
    staging_changed: dict[str, int | None]

    def without(self, names: set[str]) -> LogListing:
        """The listing as it will be once ``names`` are deleted."""
        return classify(self.listing.log_dir, [f for f in self.files if f.name not in names])


class _Table:
    """The table being cleaned: where it is, and how this run reads it."""

    def __init__(self, spark: SparkSession, table: Table, now_ms: int, progress: Progress) -> None:
        self.spark = spark
        self.table = table
        self.root = table.root
        self.storage: Storage = table.storage
        self.log_dir = table.log_dir
        self.now_ms = now_ms
        self.progress = progress

    def list(self) -> _Log:
        files = self.storage.list_dir(self.log_dir)
        directories = self.storage.list_subdirs(self.log_dir)
        staging = {d: self.storage.list_tree(self.log_dir / d) for d in directories if is_staging_dir_name(d)}
        return _Log(
            files,
            directories,
            # _sidecars/ as a symbolic link out of _delta_log/ is never listed, so never collected (CKPT-CLEAN-024).
            self.storage.list_dir(self.log_dir / SIDECAR_DIR)
            if sidecars_dir_is_own(self.storage, self.log_dir)
            else [],
            classify(self.log_dir, files),
            staging,
            {d: newest_dir_mtime(self.storage, self.log_dir / d) for d, held in staging.items() if not held},
        )

    def read(self, version: int | None, listing: LogListing) -> Snapshot:
        return read_snapshot(self.spark, self.table, version=version, now_ms=self.now_ms, listing=listing)

    def state(self, version: int, listing: LogListing) -> TableState:
        return self.read(version, listing).table_state(include_source=False)


def _clocks(
    now_ms: int, latest: Snapshot, retention_ms: int | None, sidecar_retention_ms: int | None
) -> _Clocks:
    props = latest.properties
    if retention_ms is None:
        retention, source = props.log_retention_ms, props.log_retention_source
    else:
        retention, source = retention_ms, "option"
    cutoff = log_cutoff(now_ms, retention)
    floor = sidecar_floor(now_ms)
    return _Clocks(
        now_ms, retention, source, cutoff, floor, sidecar_cutoff(now_ms, floor, sidecar_retention_ms, cutoff)
    )


def _check_options(
    table: Table, now_ms: int, retention_ms: int | None, sidecar_retention_ms: int | None
) -> None:
    """Bad options fail before anything is read (``CKPT-CLEAN-016``: no sidecar window under a day)."""
    for label, value in (("retention", retention_ms), ("sidecar retention", sidecar_retention_ms)):
        if value is not None and value < 0:
            raise InvalidOption(f"{label} must not be negative, got {value} ms")
    floor = sidecar_floor(now_ms)
    if sidecar_retention_ms is not None and truncate_to_day(now_ms - sidecar_retention_ms) > floor:
        raise InvalidOption(
            f"sidecar retention of {sidecar_retention_ms} ms gives the cutoff "
            f"{format_ms(truncate_to_day(now_ms - sidecar_retention_ms))}, later than the one-day floor "
            f"{format_ms(floor)}; nothing was deleted",
            path=str(table),
            rule="CKPT-CLEAN-016",
        )


def _plan_log(
    table: _Table, log: _Log, latest: Snapshot, clocks: _Clocks, hint_version: int | None
) -> LogPlan:
    """§18.1 steps 2-4: commit timestamps, the cutoff commit and checkpoint, a decision per file."""
    listing = log.listing
    times = commit_timestamps(
        listing.commits,
        stop_after_ms=clocks.cutoff_ms,
        ict_from_version=latest.properties.in_commit_timestamps_from,
        read_ict=lambda v: read_in_commit_timestamp(table.storage, table.log_dir / listing.commits[v].name),
    )
    return plan_log(
        listing,
        log.files,
        log.directories,
        cutoff_ms=clocks.cutoff_ms,
        commit_times=times,
        hint_version=hint_version,
    )


def _plan_sidecars(log: _Log, clocks: _Clocks, refs: References | None, skipped: str | None) -> SidecarPlan:
    return plan_sidecars(
        log.sidecars,
        refs.by_sidecar if refs is not None else {},
        cutoff_ms=clocks.sidecars.cutoff_ms,
        floor_ms=clocks.floor_ms,
        cutoff_source=clocks.sidecars.source,
        skipped_reason=skipped,
    )


def _check_invariants(
    table: _Table,
    log: _Log,
    latest: Snapshot,
    plans: tuple[LogPlan, SidecarPlan, StagingPlan],
    refs: References,
    verify_all_versions: bool,
) -> tuple[list[InvariantCheck], list[int]]:
    """§18.2, before anything is written: the plan, the sidecars, then the state of the kept versions."""
    plan, sidecars, staging = plans
    checks = structural_checks(plan, sidecars, log.listing, refs.by_sidecar, staging)
    checks.append(sidecars_exist(table.storage, table.log_dir, refs))
    versions: list[int] = []
    if all(c.ok for c in checks):
        assert plan.cutoff_checkpoint is not None
        c = plan.cutoff_checkpoint.version
        versions = list(range(c, latest.version + 1)) if verify_all_versions else sorted({c, latest.version})
        view = log.without({d.name for d in plan.deletions})
        known = {latest.version: latest.table_state(include_source=False)}

        def before(v: int) -> TableState:
            return known[v] if v in known else table.state(v, log.listing)

        checks.append(state_unchanged(versions, before, lambda v: table.state(v, view), table.progress))
    failed = [c for c in checks if not c.ok]
    if failed:
        raise CleanupInvariantViolated(
            "; ".join(f"{c.name}: {c.detail}" for c in failed) + "; nothing was deleted",
            path=str(table.log_dir),
            rule=failed[0].rule or "CKPT-CLEAN-012",
        )
    return checks, versions


def _batches(decisions: list[FileDecision], batched: bool) -> list[list[FileDecision]]:
    """The plan's deletions in order, grouped into the batches they are deleted in.

    One file a batch, unless the store deletes in batches (an object store's DeleteObjects, which
    deletes a batch's keys in any order and may stop part-way): then a new batch starts at each
    checkpoint version and at each commit, at the sidecars, and at each staging directory. So a
    batch holds at most one commit, and whatever part of it is gone, no commit is gone while a
    lower one is kept (``CKPT-CLEAN-002``), every commit below a checkpoint is gone before the
    checkpoint's files (``CKPT-CLEAN-022``), and a checkpoint's files go before its commit.
    """
    out: list[list[FileDecision]] = []
    previous: FileDecision | None = None
    for decision in decisions:
        starts = (
            not batched
            or previous is None
            or decision.kind is LogFileKind.STAGING
            or decision.kind is LogFileKind.COMMIT
            or (decision.kind is LogFileKind.SIDECAR and previous.kind is not LogFileKind.SIDECAR)
            or (
                decision.kind.is_checkpoint
                and not (previous.kind.is_checkpoint and previous.version == decision.version)
            )
        )
        if starts:
            out.append([])
        out[-1].append(decision)
        previous = decision
    return out


def _present(table: _Table, decisions: list[FileDecision]) -> set[str]:
    """Names (relative to ``_delta_log``) of the files there now: one listing of each directory involved."""
    names = {f.name for f in table.storage.list_dir(table.log_dir)}
    if any(d.kind is LogFileKind.SIDECAR for d in decisions):
        names |= {f"{SIDECAR_DIR}/{f.name}" for f in table.storage.list_dir(table.log_dir / SIDECAR_DIR)}
    return names


def _delete_batch(table: _Table, batch: list[FileDecision], present: set[str], done: list[str]) -> None:
    """Delete one batch (and its Hadoop checksums) at once; a failure says exactly what is gone."""
    names = [n for d in batch for n in (d.name, *d.companions) if n in present]
    try:
        table.storage.delete_many(table.log_dir / name for name in names)
    except StorageError as exc:
        try:
            left = _present(table, batch)
        except StorageError:  # the store failed again: say so, keep the first error
            of_batch = f"which of its files are gone is unknown (listing failed too): {names}"
        else:
            gone = [d.name for d in batch if d.name in present and d.name not in left]
            kept = [d.name for d in batch if d.name in left]
            of_batch = f"gone {gone or 'none'}, still there {kept}"
        raise StorageError(
            f"{exc.message}; deleted before this batch: {len(done)} planned file(s)"
            + (f" (the last {done[-1]})" if done else "")
            + f"; of this batch: {of_batch}; nothing after it was deleted",
            path=exc.path,
            rule=exc.rule,
        ) from None


def _delete(table: _Table, decisions: list[FileDecision], hooks: Hooks) -> list[str]:
    """Delete in plan order (log files by version, sidecars, staging), with Hadoop checksums; returns the already gone.

    On a store that deletes in batches, each :func:`_batches` batch is one request (up to 1,000
    keys) sent only after the previous one succeeded, and what was already gone is read from one
    listing taken before the first; elsewhere, one file at a time.
    """
    storage = table.storage
    present = _present(table, decisions) if storage.batched_deletes else None
    gone: list[str] = []
    done: list[str] = []
    log_done = False
    with table.progress.phase(f"delete {len(decisions)} file(s)"):
        for batch in _batches(decisions, present is not None):
            if batch[0].kind in (LogFileKind.SIDECAR, LogFileKind.STAGING) and not log_done:
                hooks.reached(PublicationPoint.LOG_FILES_DELETED)
                log_done = True
            if batch[0].kind is LogFileKind.STAGING:  # CKPT-CLEAN-025: the directory with everything in it
                storage.remove_tree(table.log_dir / batch[0].name.removesuffix("/"))
            elif present is not None:
                gone += [d.name for d in batch if d.name not in present]
                _delete_batch(table, batch, present, done)
            else:
                if not storage.delete(table.log_dir / batch[0].name):
                    gone.append(batch[0].name)
                for companion in batch[0].companions:
                    storage.delete(table.log_dir / companion)
            for decision in batch:
                done.append(decision.name)
                hooks.reached(PublicationPoint.FILE_DELETED, len(done))
        if not log_done:
            hooks.reached(PublicationPoint.LOG_FILES_DELETED)
    hooks.reached(PublicationPoint.CLEANUP_DONE)
    return gone


@dataclass
class _Report:
    """What the run found so far; :meth:`result` makes the :class:`CleanupResult` of an exit."""

    table: _Table
    dry_run: bool
    started: float
    latest: Snapshot | None = None
    clocks: _Clocks | None = None
    hint: dict[str, object] | None = None
    plan: LogPlan | None = None
    sidecars: SidecarPlan | None = None
    staging: StagingPlan | None = None
    compat: CompatCheckpoint | None = None
    skipped_sidecars: str | None = None
    invariants: list[InvariantCheck] = field(default_factory=list)
    verified_versions: list[int] = field(default_factory=list)
    already_gone: list[str] = field(default_factory=list)

    def result(self, status: CleanupStatus, message: str) -> CleanupResult:
        progress = self.table.progress
        progress.timings["total"] = round(time.perf_counter() - self.started, 3)
        clocks, plan, sidecars = self.clocks, self.plan, self.sidecars
        notes = [clocks.sidecars.note] if clocks is not None and clocks.sidecars.note else []
        cutoff_checkpoint = None
        if plan is not None and plan.cutoff_checkpoint is not None:
            cp = plan.cutoff_checkpoint
            cutoff_checkpoint = {
                "version": cp.version,
                "kind": cp.kind,
                "files": [f.name for f in cp.files],
                "cappedByLastCheckpoint": plan.capped_by_hint,
            }
        if plan is not None and plan.capped_by_hint:
            notes.append(
                f"_last_checkpoint describes version {plan.hint_version}; the cutoff checkpoint is not newer "
                "(CKPT-CLEAN-006)"
            )
        if self.skipped_sidecars:
            notes.append(f"sidecar collection skipped: {self.skipped_sidecars}")
        staging = self.staging.files if self.staging is not None else []
        decisions = (plan.files if plan is not None else []) + (sidecars.files if sidecars else []) + staging
        deleting = plan is not None and plan.cutoff_checkpoint is not None
        deleted = sorted((d for d in decisions if d.delete), key=FileDecision.order_key) if deleting else []
        return CleanupResult(
            table=str(self.table.root),
            status=status,
            message=message,
            dry_run=self.dry_run,
            now_ms=self.table.now_ms,
            latest_version=self.latest.version if self.latest is not None else None,
            retention_ms=clocks.retention_ms if clocks else None,
            retention_source=clocks.retention_source if clocks else None,
            cutoff_ms=clocks.cutoff_ms if clocks else None,
            sidecar_cutoff_ms=clocks.sidecars.cutoff_ms if clocks else None,
            sidecar_cutoff_source=clocks.sidecars.source if clocks else None,
            sidecar_floor_ms=sidecar_floor(self.table.now_ms),
            cutoff_commit=plan.cutoff_commit.to_json() if plan and plan.cutoff_commit else None,
            cutoff_checkpoint=cutoff_checkpoint,
            last_checkpoint=self.hint,
            compat=self.compat,
            deleted=deleted,
            kept=[d for d in decisions if not d.delete] if deleting else decisions,
            already_gone=list(self.already_gone),
            invariants=list(self.invariants),
            verified_versions=list(self.verified_versions),
            notes=notes,
            timings=dict(progress.timings),
        )


def _hint(table: _Table, listing: LogListing) -> tuple[int | None, dict[str, object]]:
    """``_last_checkpoint``'s version as a cap (``CKPT-CLEAN-006``), if it is usable, and how it was used."""
    hint, problem = read_last_checkpoint(table.storage, table.log_dir)
    if hint is None:
        return None, {"version": None, "problem": problem or "missing"}
    cap = hint.version if hint.version <= (listing.latest_version or 0) else None
    return cap, {"version": hint.version, "usedAsCap": cap is not None}


def cleanup(
    table: str | os.PathLike[str] | Location | Table,
    *,
    retention_ms: int | None = None,
    now_ms: int | None = None,
    sidecar_retention_ms: int | None = None,
    dry_run: bool = False,
    verify_all_versions: bool = False,
    spark: SparkSession | SessionSource | None = None,
    progress: Progress | None = None,
    hooks: Hooks = NO_HOOKS,
    storage_options: Mapping[str, str] | None = None,
) -> CleanupResult:
    """Clean up the metadata of ``table`` (see the module docs); ``dry_run`` changes nothing.

    ``retention_ms`` overrides ``delta.logRetentionDuration``; ``sidecar_retention_ms`` sets the
    sidecar window (default: the log cutoff); ``now_ms`` the clock (default: now).
    ``storage_options`` configure the table's store (:mod:`reference_impl.storage.options`).
    """
    report = _Report(
        _start(table, storage_options, now_ms, spark, progress, retention_ms, sidecar_retention_ms),
        dry_run,
        time.perf_counter(),
    )
    t = report.table
    with t.progress.phase("list the log"):
        log = t.list()
    with t.progress.phase("replay the latest version"):
        latest = report.latest = t.read(None, log.listing)
    if not latest.properties.expired_log_cleanup_enabled:
        message = f"delta.enableExpiredLogCleanup is false at version {latest.version}: nothing was deleted"
        return report.result(CleanupStatus.DISABLED, message)
    check_writer_features(latest.protocol, str(t.log_dir), role="cleaner")
    clocks = report.clocks = _clocks(t.now_ms, latest, retention_ms, sidecar_retention_ms)
    hint_version, report.hint = _hint(t, log.listing)
    with t.progress.phase("plan"):
        plan = _plan_log(t, log, latest, clocks, hint_version)
        if CHECKPOINT_PROTECTION in latest.writer_features:
            plan = protect_history(plan, latest.properties.checkpoint_protection_version)
        report.plan = plan
    staging_at = staging_cutoff(clocks.cutoff_ms, clocks.floor_ms)
    if plan.cutoff_checkpoint is None:
        stopped = "no cutoff checkpoint (CKPT-CLEAN-004)"
        report.sidecars = _plan_sidecars(log, clocks, None, stopped)
        report.staging = plan_staging(
            log.staging, log.staging_changed, cutoff_ms=staging_at, skipped_reason=stopped
        )
        return report.result(CleanupStatus.NO_CUTOFF_CHECKPOINT, plan.stop_reason or "nothing is deleted")
    with t.progress.phase("read the sidecar references of the remaining checkpoints"):
        deleted_names = {d.name for d in plan.deletions}
        refs = collect_references(t.storage, t.log_dir, [f for f in log.files if f.name not in deleted_names])
    report.skipped_sidecars = refs.skipped_reason
    sidecars = report.sidecars = _plan_sidecars(log, clocks, refs, refs.skipped_reason)
    staging = report.staging = plan_staging(log.staging, log.staging_changed, cutoff_ms=staging_at)
    report.compat = compat.decide(latest, log.listing, bool(plan.deletions))
    if (
        not dry_run
        and report.compat.action is CompatAction.WOULD_CREATE
        and not t.storage.guarantees.atomic_create
    ):
        raise StorageError(
            "this store cannot create a file only if it is absent, so the compatibility checkpoint "
            f"{report.compat.name} cannot be published safely; nothing was written or deleted",
            path=str(t.log_dir),
            rule="CKPT-WRITE-006",
        )
    deletions = plan.deletions + sidecars.deletions + staging.deletions
    if not deletions:
        return report.result(CleanupStatus.NOTHING_TO_DELETE, "nothing is old enough to delete")
    report.invariants, report.verified_versions = _check_invariants(
        t, log, latest, (plan, sidecars, staging), refs, verify_all_versions
    )
    if dry_run:
        message = f"dry run: would delete {len(deletions)} file(s); nothing was changed"
        return report.result(CleanupStatus.DRY_RUN, message)
    hooks.reached(PublicationPoint.CLEANUP_PLANNED)
    if report.compat.action is CompatAction.WOULD_CREATE:
        compat.write(t.spark, latest, log.listing, report.compat, t.read, t.progress)
    hooks.reached(PublicationPoint.COMPAT_WRITTEN)
    report.already_gone = _delete(t, deletions, hooks)
    return report.result(CleanupStatus.DONE, f"deleted {len(deletions)} file(s)")


def _start(
    table: str | os.PathLike[str] | Location | Table,
    storage_options: Mapping[str, str] | None,
    now_ms: int | None,
    spark: SparkSession | SessionSource | None,
    progress: Progress | None,
    retention_ms: int | None,
    sidecar_retention_ms: int | None,
) -> _Table:
    """Check the table and the options, then start Spark (nothing is read before the options are valid)."""
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    session = session_source(spark)
    opened = open_table(table, storage_options, session=session)
    _check_options(opened, now, retention_ms, sidecar_retention_ms)
    return _Table(session(), opened, now, progress or silent())
