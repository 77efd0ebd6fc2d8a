"""Metadata cleanup: delete expired log files, keep a compatibility checkpoint, collect sidecars.

Spec: ``spec/checkpoints.md`` §18 "Metadata cleanup" (``CKPT-CLEAN-001`` … ``CKPT-CLEAN-017``), §13
"Compatibility checkpoints" (``CKPT-COMPAT-001`` … ``-005``), divergences D6, D7, D11, D12;
PROTOCOL.md "Metadata Cleanup"; delta-spark ``MetadataCleanup.scala`` and
``DeltaHistoryManager.BufferingLogDeletionIterator``. The decisions themselves (clocks, cutoffs,
which file goes and why) are pure functions in :mod:`reference_impl.cleanup.plan`.

Links: `§18.1 <spec/checkpoints.md#181-the-algorithm>`_, `§18.2 <spec/checkpoints.md#182-invariants>`_,
`§18.3 <spec/checkpoints.md#183-sidecar-garbage-collection>`_,
`§13 <spec/checkpoints.md#13-compatibility-checkpoints>`_,
`D6 <spec/checkpoints.md#d6-sidecar-garbage-collection-window>`_,
`D7 <spec/checkpoints.md#d7-log-compaction-files-during-cleanup>`_,
`D11 <spec/checkpoints.md#d11-commit-file-at-the-checkpoint-version>`_,
`D12 <spec/checkpoints.md#d12-where-delta-spark-places-the-cleanup-boundary>`_.

Usage::

    result = cleanup("/path/to/table")                                  # the table's own retention
    result = cleanup(path, retention_ms=7 * 86_400_000, dry_run=True)   # show the plan, change nothing
    result.to_json()                                                    # what --json prints

# The algorithm (§18.1)

1. Replay the latest version (the reference reader). If ``delta.enableExpiredLogCleanup`` is false,
   stop: nothing is deleted. If the protocol lists a writer feature this cleaner does not know,
   fail with ``UNSUPPORTED_WRITER_FEATURE`` (``CKPT-CLEAN-011``; ``checkpointProtection`` and the
   catalog-managed / coordinated-commit features are refused on purpose).
2. *Cutoff* = midnight UTC of ``now - delta.logRetentionDuration`` (30 days when unset).
3. *Cutoff commit* = the newest commit whose timestamp (modification time, or in-commit timestamp
   where enabled, made strictly increasing) is not later than the cutoff.
4. *Cutoff checkpoint* = the newest complete checkpoint at or before the cutoff commit whose commit
   file exists and whose version is not above ``_last_checkpoint``'s. None: stop (``CKPT-CLEAN-004``).
5. Plan the deletions, below. Check every invariant. Only then write anything.
6. Write the compatibility checkpoint when needed, verify it, then delete in the order below.

# What is deleted and what is kept

| file in ``_delta_log`` | deleted when | else kept because |
|---|---|---|
| ``n.json`` (commit) | ``n <`` cutoff checkpoint ``c`` | ``n == c``: the commit at the checkpoint (``CKPT-CLEAN-001``, D11); ``n > c`` |
| any checkpoint file (classic, part, UUID-named; also incomplete and 0-byte ones) | ``n < c`` | the cutoff checkpoint, or newer |
| ``n.crc`` (version checksum) | ``n < c`` | newer |
| ``s.e.compacted.json`` | ``s <= c`` (``CKPT-CLEAN-010``) | ``s > c`` |
| ``_sidecars/<name>`` | referenced by no remaining checkpoint **and** modified before the sidecar cutoff | referenced (``CKPT-CLEAN-013``), or too young |
| ``.<name>.crc`` (Hadoop checksum of a file) | together with ``<name>`` | kept with its file |
| ``_last_checkpoint`` | never (``CKPT-CLEAN-007``) | |
| hidden temp files, directories (writer staging ``.delta-ckpt-staging-*``, ``_commits``, …), unknown names | never | |

# Invariants, checked before anything is written or deleted

Any failure raises ``CLEANUP_INVARIANT_VIOLATED`` with nothing written and nothing deleted:

* the plan itself (:func:`reference_impl.cleanup.plan.structural_checks`): ``CKPT-CLEAN-001`` …
  ``-007``, ``-013``, ``-014``;
* every sidecar of every remaining checkpoint exists with its recorded ``sizeInBytes``;
* the state is unchanged: the reader reconstructs each verified version twice, from the real listing
  and from a *view* of it without the planned deletions (``read_snapshot(listing=view)``), and the two
  :class:`~spec.table_state.TableState`\\ s must be equal. Verified versions: the latest
  and the oldest kept one (the cutoff checkpoint's) by default — they bound the segment of every
  kept version — or every kept version with ``verify_all_versions=True`` (two replays per version).

The compatibility checkpoint is verified after it is written: the version it copies, read from a view
without the UUID-named file, must use the copy and give the same state (``CKPT-COMPAT-002``); if
not, the copy is removed again and the cleanup fails with nothing deleted.

# Compatibility checkpoint (§13, ``CKPT-COMPAT-004``)

When the plan deletes at least one commit, checkpoint, checksum or compaction file, and the latest
version's checkpoint is UUID-named with no complete classic-named or multi-part checkpoint at its
version, the cleaner first publishes ``n.checkpoint.parquet``: the same ``checkpointMetadata``, the
same ``sidecar`` actions (so no sidecar is copied) and the same non-file actions
(``CKPT-COMPAT-003``), written by the writer's own top-level-file path
(:func:`reference_impl.write.writer.write_top_level_file`) and published create-if-absent.
This is delta-spark's rule (``MetadataCleanup.createSinglePartCheckpointForBackwardCompat``).

# Deletion order, and why

Log files go in ascending version order, and within a version: compactions starting there, the
checkpoint files, the checksum, the commit. Sidecars go last.

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
and finishes the job (the compatibility checkpoint then already exists). Fault points for tests:
``cleanup:planned``, ``cleanup:compat``, ``cleanup:deleted:<k>``, ``cleanup:log-deleted``,
``cleanup:done`` (:mod:`reference_impl.faults`).

# Sidecar window: the choice and why (D6, ``CKPT-CLEAN-014`` … ``-017``)

Default: the log cutoff (delta-spark's choice, ``CKPT-CLEAN-015``) — a sidecar is at least as old as
the commits deleted with it, so an unreferenced one is never younger than anything else removed,
and a slow writer (which writes its sidecars before its top-level file) is protected for the whole
log retention, not just a day. Configurable (``sidecar_retention_ms``), truncated to midnight UTC
like the log cutoff, but never later than the one-day floor: a configured window shorter than
that fails with ``INVALID_OPTION`` before anything happens (``CKPT-CLEAN-016``); a default
window that would be shorter (a log retention under a day) is clamped to the floor and reported.
Unlike delta-spark, sidecars are collected in every run that found a cutoff checkpoint, not only in
runs that deleted a checkpoint file (D6), so orphans of failed writers are collected too.

# Differences from delta-spark's cleanup

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

import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from reference_impl.cleanup.plan import (
    FileDecision,
    InvariantCheck,
    LogPlan,
    commit_timestamps,
    format_ms,
    log_cutoff,
    plan_log,
    plan_sidecars,
    read_in_commit_timestamp,
    sidecar_floor,
    structural_checks,
    truncate_to_day,
)
from reference_impl.errors import (
    CheckpointCorrupt,
    CheckpointError,
    CleanupInvariantViolated,
    InvalidOption,
    SidecarPathInvalid,
    UnsupportedWriterFeature,
)
from reference_impl.faults import FaultPlan, plan_from_env
from reference_impl.log.naming import SIDECAR_DIR, LogFileKind, classic_checkpoint_name, parse_log_file_name
from reference_impl.log.segment import CheckpointInstance, LogListing, list_log, log_dir_of, read_hint
from reference_impl.log.table_properties import MS_PER_DAY
from reference_impl.progress import Progress, silent
from reference_impl.read.checkpoint import resolve_sidecar
from reference_impl.read.snapshot import Snapshot, read_snapshot, require_table
from reference_impl.storage.local import FileInfo, LocalStorage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spec.table_state import TableState

#: Writer features whose presence does not restrict which log files may be deleted.
SUPPORTED_WRITER_FEATURES: frozenset[str] = frozenset(
    {
        "appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
        "columnMapping", "identityColumns", "deletionVectors", "rowTracking", "timestampNtz",
        "domainMetadata", "v2Checkpoint", "icebergCompatV1", "icebergCompatV2", "icebergCompatV3",
        "icebergWriterCompatV1", "icebergWriterCompatV3", "clustering", "typeWidening",
        "typeWidening-preview", "vacuumProtocolCheck", "variantType", "variantType-preview",
        "variantShredding", "variantShredding-preview", "inCommitTimestamp", "allowColumnDefaults",
        "collations-preview",
    }
)  # fmt: skip
#: Features refused on purpose, and why.
REFUSED_WRITER_FEATURES: dict[str, str] = {
    "checkpointProtection": "it restricts which checkpoints and commits may be removed",
    "catalogManaged": "cleanup of a catalog-managed table needs the catalog's permission",
    "catalogOwned-preview": "cleanup of a catalog-managed table needs the catalog's permission",
    "coordinatedCommits-preview": "unbackfilled commits live outside the published log",
}
MAX_WRITER_VERSION = 7
DEFAULT_RETENTION_MS = 30 * MS_PER_DAY


class _FrozenListing(LocalStorage):
    """A storage whose listing of ``log_dir`` is a fixed list (one listing, or a view of it)."""

    def __init__(self, log_dir: Path, files: Iterable[FileInfo]) -> None:
        self._log_dir = log_dir
        self._files = sorted(files, key=lambda f: f.name)

    def list_dir(self, directory: Path) -> list[FileInfo]:
        if directory == self._log_dir:
            return list(self._files)
        return super().list_dir(directory)


def _view(log_dir: Path, files: Iterable[FileInfo], without: Iterable[str]) -> LogListing:
    gone = set(without)
    return list_log(log_dir, _FrozenListing(log_dir, [f for f in files if f.name not in gone]))


# -- result -------------------------------------------------------------------------------------


@dataclass
class CompatCheckpoint:
    """The compatibility checkpoint decision (and what became of it)."""

    action: str  # "created" | "would-create" | "exists" | "not-needed"
    reason: str
    version: int | None = None
    name: str | None = None
    source: str | None = None
    sidecars: int = 0
    size_in_bytes: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "reason": self.reason,
            "version": self.version,
            "name": self.name,
            "source": self.source,
            "sidecars": self.sidecars,
            "sizeInBytes": self.size_in_bytes,
        }


@dataclass
class CleanupResult:
    """What :func:`cleanup` did or would do (the ``--json`` document of ``delta-ckpt cleanup``)."""

    table: str
    status: str  # "done" | "dry-run" | "disabled" | "nothing-to-delete" | "no-cutoff-checkpoint"
    message: str
    dry_run: bool
    now_ms: int
    latest_version: int | None = None
    retention_ms: int | None = None
    retention_source: str | None = None
    cutoff_ms: int | None = None
    sidecar_cutoff_ms: int | None = None
    sidecar_cutoff_source: str | None = None
    sidecar_floor_ms: int | None = None
    cutoff_commit: dict[str, Any] | None = None
    cutoff_checkpoint: dict[str, Any] | None = None
    last_checkpoint: dict[str, Any] | None = None
    compat: CompatCheckpoint | None = None
    deleted: list[FileDecision] = field(default_factory=list)  # in deletion order
    kept: list[FileDecision] = field(default_factory=list)
    already_gone: list[str] = field(default_factory=list)
    invariants: list[InvariantCheck] = field(default_factory=list)
    verified_versions: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def deleted_log_files(self) -> list[FileDecision]:
        return [d for d in self.deleted if d.kind != "sidecar"]

    @property
    def deleted_sidecars(self) -> list[FileDecision]:
        return [d for d in self.deleted if d.kind == "sidecar"]

    @property
    def kept_sidecars(self) -> list[FileDecision]:
        return [d for d in self.kept if d.kind == "sidecar"]

    def deleted_paths(self, *, with_companions: bool = False) -> list[str]:
        """Names (relative to ``_delta_log``) deleted (or to delete), in order."""
        out = []
        for d in self.deleted:
            out.append(d.name)
            if with_companions:
                out.extend(d.companions)
        return out

    def to_json(self) -> dict[str, Any]:
        def when(ms: int | None) -> dict[str, Any] | None:
            return None if ms is None else {"ms": ms, "utc": format_ms(ms)}

        return {
            "ok": True,
            "table": self.table,
            "status": self.status,
            "message": self.message,
            "dryRun": self.dry_run,
            "now": when(self.now_ms),
            "latestVersion": self.latest_version,
            "retention": None
            if self.retention_ms is None
            else {"ms": self.retention_ms, "source": self.retention_source},
            "cutoff": when(self.cutoff_ms),
            "sidecarCutoff": None
            if self.sidecar_cutoff_ms is None
            else {**(when(self.sidecar_cutoff_ms) or {}), "source": self.sidecar_cutoff_source},
            "sidecarFloor": when(self.sidecar_floor_ms),
            "cutoffCommit": self.cutoff_commit,
            "cutoffCheckpoint": self.cutoff_checkpoint,
            "lastCheckpoint": self.last_checkpoint,
            "compatibilityCheckpoint": self.compat.to_json() if self.compat else None,
            "deleted": [d.to_json() for d in self.deleted_log_files],
            "kept": [d.to_json() for d in self.kept if d.kind != "sidecar"],
            "sidecars": {
                "deleted": [d.to_json() for d in self.deleted_sidecars],
                "kept": [d.to_json() for d in self.kept_sidecars],
            },
            "alreadyGone": self.already_gone,
            "invariants": [c.to_json() for c in self.invariants],
            "verifiedVersions": self.verified_versions,
            "notes": self.notes,
            "timingsSeconds": self.timings,
        }


# -- helpers ------------------------------------------------------------------------------------


def check_writer_features(protocol: dict[str, Any], path: str) -> None:
    """``CKPT-CLEAN-011``: refuse tables whose protocol lists a writer feature we do not support."""
    version = int(protocol.get("minWriterVersion", 1))
    if version > MAX_WRITER_VERSION:
        raise UnsupportedWriterFeature(
            f"minWriterVersion {version} is not supported by the cleaner; nothing was deleted",
            path=path, rule="CKPT-CLEAN-011",
        )  # fmt: skip
    features = protocol.get("writerFeatures") or []
    refused = [f for f in features if f in REFUSED_WRITER_FEATURES]
    unknown = [f for f in features if f not in SUPPORTED_WRITER_FEATURES and f not in REFUSED_WRITER_FEATURES]
    if refused or unknown:
        parts = [f"{f} ({REFUSED_WRITER_FEATURES[f]})" for f in refused] + [f"{f} (unknown)" for f in unknown]
        raise UnsupportedWriterFeature(
            f"the cleaner does not support writer feature(s) {', '.join(parts)}; nothing was deleted",
            path=path, rule="CKPT-CLEAN-011",
        )  # fmt: skip


def _reference_names(raw: str) -> set[str]:
    """Every bare name a ``sidecar.path`` may denote (decoded and literal; delta-spark's ``getName``)."""
    if raw.startswith("file:"):
        return {Path(unquote(urlparse(raw).path)).name}
    last = raw.replace("\\", "/").rsplit("/", 1)[-1]
    return {last, unquote(last)} - {""}


def read_sidecar_actions(log_dir: Path, name: str) -> list[dict[str, Any]]:
    """The ``sidecar`` actions of one top-level checkpoint file, read on the driver (no Spark).

    JSON top-level files line by line; Parquet files through their ``sidecar`` column only.
    """
    path = log_dir / name
    out: list[dict[str, Any]] = []
    try:
        if name.endswith(".json"):
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        action = json.loads(line)
                        if isinstance(action, dict) and isinstance(action.get("sidecar"), dict):
                            out.append(action["sidecar"])
            return out
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(path)
        if "sidecar" not in parquet.schema_arrow.names:
            return []
        column = parquet.read(columns=["sidecar"]).column("sidecar").to_pylist()
        return [row for row in column if isinstance(row, dict) and row.get("path") is not None]
    except Exception as exc:  # json / pyarrow / OS errors: the file cannot be read
        raise CheckpointCorrupt(f"cannot read the sidecar references: {exc}", path=str(path)) from exc


@dataclass
class _References:
    """Sidecar references of the checkpoints that remain after the plan."""

    by_sidecar: dict[str, list[str]] = field(default_factory=dict)  # bare name -> checkpoint files
    actions: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (checkpoint, action)
    unreadable: list[str] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)


def _collect_references(log_dir: Path, remaining: Iterable[FileInfo]) -> _References:
    refs = _References()
    for info in remaining:
        parsed = parse_log_file_name(info.name)
        if parsed.kind not in (LogFileKind.CHECKPOINT_CLASSIC, LogFileKind.CHECKPOINT_UUID) or info.size == 0:
            continue
        refs.checkpoints.append(info.name)
        try:
            actions = read_sidecar_actions(log_dir, info.name)
        except CheckpointCorrupt as exc:
            refs.unreadable.append(f"{info.name}: {exc.message}")
            continue
        for action in actions:
            refs.actions.append((info.name, action))
            for alias in _reference_names(str(action.get("path", ""))):
                refs.by_sidecar.setdefault(alias, []).append(info.name)
    return refs


def _sidecar_existence(log_dir: Path, refs: _References) -> InvariantCheck:
    problems = []
    for checkpoint, action in refs.actions:
        try:
            resolved = resolve_sidecar(log_dir, action)
        except SidecarPathInvalid as exc:
            problems.append(f"{checkpoint}: {exc.message}")
            continue
        info = LocalStorage().stat(resolved.path)
        recorded = action.get("sizeInBytes")
        if info is None:
            problems.append(f"{checkpoint} references {resolved.name}, which does not exist")
        elif recorded is not None and int(recorded) != info.size:
            problems.append(
                f"{checkpoint} references {resolved.name} with sizeInBytes {recorded}, but it has {info.size} bytes"
            )
    ok = not problems
    detail = (
        f"{len(refs.actions)} sidecar reference(s) of {len(refs.checkpoints)} remaining checkpoint file(s) "
        "resolve to existing files of the recorded size"
        if ok
        else "; ".join(problems)
    )
    return InvariantCheck("every sidecar of every remaining checkpoint exists", None, ok, detail)


def _state(
    spark: SparkSession, root: Path, version: int, now_ms: int, listing: LogListing
) -> tuple[Snapshot, TableState]:
    snap = read_snapshot(spark, root, version=version, now_ms=now_ms, listing=listing)
    return snap, snap.table_state(include_source=False)


def _state_diff(before: TableState, after: TableState) -> str:
    a, b = before.comparable(), after.comparable()
    keys = [k for k in a if a.get(k) != b.get(k)]
    return ", ".join(keys)


# -- the cleaner --------------------------------------------------------------------------------


class _Cleaner:
    def __init__(
        self,
        spark: SparkSession,
        root: Path,
        now_ms: int,
        progress: Progress,
        fault: FaultPlan,
    ) -> None:
        self.spark = spark
        self.root = root
        self.log_dir = log_dir_of(root)
        self.now = now_ms
        self.progress = progress
        self.fault = fault
        self.storage = LocalStorage()

    def listing(self) -> tuple[list[FileInfo], list[str], list[FileInfo]]:
        files = self.storage.list_dir(self.log_dir)
        try:
            dirs = sorted(e.name for e in os.scandir(self.log_dir) if e.is_dir(follow_symlinks=False))
        except OSError:
            dirs = []
        sidecars = self.storage.list_dir(self.log_dir / SIDECAR_DIR)
        return files, dirs, sidecars

    def verify_states(
        self, versions: list[int], listing: LogListing, view: LogListing, known: dict[int, TableState]
    ) -> InvariantCheck:
        problems: list[str] = []
        for version in versions:
            with self.progress.phase(f"verify version {version} without the deleted files"):
                before = known.get(version)
                if before is None:
                    try:
                        before = _state(self.spark, self.root, version, self.now, listing)[1]
                    except CheckpointError as exc:
                        problems.append(f"version {version} is not readable before the cleanup: {exc}")
                        continue
                try:
                    after = _state(self.spark, self.root, version, self.now, view)[1]
                except CheckpointError as exc:
                    problems.append(f"version {version} would become unreadable: {exc}")
                    continue
                if before.comparable() != after.comparable():
                    problems.append(f"version {version} would change ({_state_diff(before, after)})")
        ok = not problems
        detail = (
            f"the reader reconstructs the same state at version(s) {versions} with and without the deleted files"
            if ok
            else "; ".join(problems)
        )
        return InvariantCheck("the state of the kept versions is unchanged", None, ok, detail)

    def write_compat(self, source: Snapshot, decision: CompatCheckpoint) -> None:
        from reference_impl.write.writer import write_top_level_file

        content = source.checkpoint
        assert content is not None and decision.name is not None and decision.version is not None
        head: list[dict[str, Any]] = [
            {"checkpointMetadata": content.checkpoint_metadata or {"version": decision.version}}
        ]
        head += [{"sidecar": s.action} for s in content.sidecars]
        head += content.non_file_actions
        inline = content.file_actions if not content.sidecars and content.inline_file_actions else None
        with self.progress.phase(f"write compatibility checkpoint {decision.name}"):
            written = write_top_level_file(self.spark, source, decision.name, head, inline)
        decision.size_in_bytes = written.size_in_bytes
        if written.kept_existing:
            decision.action, decision.reason = "exists", f"{decision.name} appeared meanwhile; kept"
        with self.progress.phase("verify the compatibility checkpoint"):
            files, _, _ = self.listing()
            uuid_names = [
                f.name
                for f in files
                if (p := parse_log_file_name(f.name)).kind is LogFileKind.CHECKPOINT_UUID
                and p.version == decision.version
            ]
            view = _view(self.log_dir, files, uuid_names)
            problem = None
            try:
                snap, after = _state(self.spark, self.root, decision.version, self.now, view)
                used = snap.checkpoint.instance.name if snap.checkpoint else None
                if used != decision.name:
                    problem = f"without the UUID-named file the reader uses {used}, not {decision.name}"
                elif source.table_state(include_source=False).comparable() != after.comparable():
                    problem = f"it describes another state ({_state_diff(source.table_state(include_source=False), after)})"
            except CheckpointError as exc:
                problem = f"it cannot be read: {exc}"
        if problem is not None:
            if not written.kept_existing:
                self.storage.delete(self.log_dir / decision.name)
            raise CleanupInvariantViolated(
                f"compatibility checkpoint {decision.name}: {problem}; removed it, nothing was deleted",
                path=str(self.log_dir / decision.name), rule="CKPT-COMPAT-002",
            )  # fmt: skip

    def delete(self, decisions: list[FileDecision], result: CleanupResult) -> None:
        count = 0
        log_done = False
        with self.progress.phase(f"delete {len(decisions)} file(s)"):
            for decision in decisions:
                if decision.kind == "sidecar" and not log_done:
                    self.fault.reached("cleanup:log-deleted")
                    log_done = True
                if not self.storage.delete(self.log_dir / decision.name):
                    result.already_gone.append(decision.name)
                for companion in decision.companions:
                    self.storage.delete(self.log_dir / companion)
                count += 1
                self.fault.reached(f"cleanup:deleted:{count}")
            if not log_done:
                self.fault.reached("cleanup:log-deleted")
        self.fault.reached("cleanup:done")


def _sidecar_cutoff(
    now_ms: int, floor: int, configured_ms: int | None, log_cut: int
) -> tuple[int, str, str | None]:
    """The sidecar cutoff, its source, and a note when the default was clamped to the floor."""
    if configured_ms is not None:
        value = truncate_to_day(now_ms - configured_ms)
        return value, f"option ({configured_ms} ms, truncated to midnight UTC)", None
    if log_cut > floor:
        note = (
            f"the log cutoff {format_ms(log_cut)} is later than the one-day floor {format_ms(floor)}; "
            "sidecars use the floor (CKPT-CLEAN-014)"
        )
        return floor, "one-day floor (the log cutoff is later)", note
    return log_cut, "log cutoff (CKPT-CLEAN-015)", None


def cleanup(
    table: str | Path,
    *,
    retention_ms: int | None = None,
    now_ms: int | None = None,
    sidecar_retention_ms: int | None = None,
    dry_run: bool = False,
    verify_all_versions: bool = False,
    spark: SparkSession | None = None,
    progress: Progress | None = None,
    fault: FaultPlan | None = None,
) -> CleanupResult:
    """Clean up the metadata of ``table`` (see the module docs); ``dry_run`` changes nothing.

    ``retention_ms`` overrides ``delta.logRetentionDuration``; ``sidecar_retention_ms`` sets the
    sidecar window (default: the log cutoff); ``now_ms`` the clock (default: now).
    """
    started = time.perf_counter()
    progress = progress or silent()
    fault = fault if fault is not None else plan_from_env()
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    root = require_table(table)
    log_dir = log_dir_of(root)
    for label, value in (("retention", retention_ms), ("sidecar retention", sidecar_retention_ms)):
        if value is not None and value < 0:
            raise InvalidOption(f"{label} must not be negative, got {value} ms")
    floor = sidecar_floor(now)
    if sidecar_retention_ms is not None and truncate_to_day(now - sidecar_retention_ms) > floor:
        raise InvalidOption(
            f"sidecar retention of {sidecar_retention_ms} ms gives the cutoff "
            f"{format_ms(truncate_to_day(now - sidecar_retention_ms))}, later than the one-day floor "
            f"{format_ms(floor)}; nothing was deleted",
            path=str(root), rule="CKPT-CLEAN-016",
        )  # fmt: skip
    if spark is None:
        from reference_impl.spark.session import get_spark

        spark = get_spark()
    cleaner = _Cleaner(spark, root, now, progress, fault)
    result = CleanupResult(table=str(root), status="", message="", dry_run=dry_run, now_ms=now,
                           sidecar_floor_ms=floor)  # fmt: skip

    def finish(status: str, message: str) -> CleanupResult:
        result.status, result.message = status, message
        progress.timings["total"] = round(time.perf_counter() - started, 3)
        result.timings = dict(progress.timings)
        return result

    with progress.phase("list the log"):
        files, dirs, sidecar_files = cleaner.listing()
        listing = _view(log_dir, files, ())
    with progress.phase("replay the latest version"):
        latest = read_snapshot(spark, root, now_ms=now, listing=listing)
    result.latest_version = latest.version
    props = latest.properties
    if not props.expired_log_cleanup_enabled:
        return finish("disabled", f"delta.enableExpiredLogCleanup is false at version {latest.version}: "
                                  "nothing was deleted")  # fmt: skip
    check_writer_features(latest.protocol, str(log_dir))

    if retention_ms is None:
        raw = (latest.metadata.get("configuration") or {}).get("delta.logRetentionDuration")
        retention, source = (
            props.log_retention_ms,
            (f"delta.logRetentionDuration = {raw!r}" if raw else "default (30 days)"),
        )
    else:
        retention, source = retention_ms, "option"
    cutoff = log_cutoff(now, retention)
    result.retention_ms, result.retention_source, result.cutoff_ms = retention, source, cutoff
    sc_cutoff, sc_source, sc_note = _sidecar_cutoff(now, floor, sidecar_retention_ms, cutoff)
    result.sidecar_cutoff_ms, result.sidecar_cutoff_source = sc_cutoff, sc_source
    if sc_note:
        result.notes.append(sc_note)

    hint, hint_error = read_hint(log_dir)
    hint_version = (
        hint.version if hint is not None and hint.version <= (listing.latest_version or 0) else None
    )
    result.last_checkpoint = (
        {"version": hint.version, "usedAsCap": hint_version is not None}
        if hint is not None
        else {"version": None, "problem": hint_error or "missing"}
    )

    with progress.phase("plan"):
        config = latest.metadata.get("configuration") or {}
        ict_from: int | None = None
        if str(config.get("delta.enableInCommitTimestamps", "false")).lower() == "true":
            ict_from = int(config.get("delta.inCommitTimestampEnablementVersion", "0"))
        times = commit_timestamps(
            listing.commits, stop_after_ms=cutoff, ict_from_version=ict_from,
            read_ict=lambda v: read_in_commit_timestamp(log_dir / listing.commits[v].name),
        )  # fmt: skip
        plan = plan_log(listing, files, dirs, cutoff_ms=cutoff, commit_times=times, hint_version=hint_version)
    _describe_plan(result, plan)
    if plan.cutoff_checkpoint is None:
        sidecars = plan_sidecars(sidecar_files, {}, cutoff_ms=sc_cutoff, floor_ms=floor, cutoff_source=sc_source,
                                 skipped_reason="no cutoff checkpoint (CKPT-CLEAN-004)")  # fmt: skip
        result.kept = plan.files + sidecars.files
        return finish("no-cutoff-checkpoint", plan.stop_reason or "nothing is deleted")

    log_deletions = plan.deletions
    deleted_names = {d.name for d in log_deletions}
    with progress.phase("read the sidecar references of the remaining checkpoints"):
        refs = _collect_references(log_dir, [f for f in files if f.name not in deleted_names])
    skipped = None
    if refs.unreadable:
        skipped = "cannot read " + "; ".join(refs.unreadable)
        result.notes.append(f"sidecar collection skipped: {skipped}")
    sidecars = plan_sidecars(sidecar_files, refs.by_sidecar, cutoff_ms=sc_cutoff, floor_ms=floor,
                             cutoff_source=sc_source, skipped_reason=skipped)  # fmt: skip
    deletions = log_deletions + sidecars.deletions
    result.deleted = deletions
    result.kept = [f for f in plan.files if not f.delete] + [f for f in sidecars.files if not f.delete]

    compat = _compat_decision(latest, listing, bool(log_deletions))
    result.compat = compat
    if not deletions:
        return finish("nothing-to-delete", "nothing is old enough to delete")

    # -- invariants (nothing written yet) --
    checks = structural_checks(plan, sidecars, listing, refs.by_sidecar)
    checks.append(_sidecar_existence(log_dir, refs))
    result.invariants = checks
    if all(c.ok for c in checks):
        view = _view(log_dir, files, deleted_names)
        c = plan.cutoff_checkpoint.version
        versions = list(range(c, latest.version + 1)) if verify_all_versions else sorted({c, latest.version})
        known = {latest.version: latest.table_state(include_source=False)}
        checks.append(cleaner.verify_states(versions, listing, view, known))
        result.verified_versions = versions
    failed = [c for c in checks if not c.ok]
    if failed:
        first = failed[0]
        raise CleanupInvariantViolated(
            "; ".join(f"{c.name}: {c.detail}" for c in failed) + "; nothing was deleted",
            path=str(log_dir), rule=first.rule or "CKPT-CLEAN-012",
        )  # fmt: skip
    if dry_run:
        return finish("dry-run", f"dry run: would delete {len(deletions)} file(s); nothing was changed")

    fault.reached("cleanup:planned")
    if compat.action == "would-create":
        assert compat.version is not None
        origin = (
            latest
            if compat.version == latest.version
            else _state(spark, root, compat.version, now, listing)[0]
        )
        if origin.checkpoint is None or origin.checkpoint.instance.name != compat.source:
            raise CleanupInvariantViolated(
                f"version {compat.version} is not read from {compat.source}; no compatibility checkpoint written, "
                "nothing was deleted", path=str(log_dir), rule="CKPT-COMPAT-004",
            )  # fmt: skip
        compat.action, compat.reason = "created", compat.reason.replace("would write", "wrote")
        cleaner.write_compat(origin, compat)
    fault.reached("cleanup:compat")
    cleaner.delete(deletions, result)
    return finish("done", f"deleted {len(deletions)} file(s)")


def _describe_plan(result: CleanupResult, plan: LogPlan) -> None:
    if plan.cutoff_commit is not None:
        result.cutoff_commit = plan.cutoff_commit.to_json()
    cp = plan.cutoff_checkpoint
    if cp is not None:
        result.cutoff_checkpoint = {
            "version": cp.version,
            "kind": cp.kind_label,
            "files": [f.name for f in cp.files],
            "cappedByLastCheckpoint": plan.capped_by_hint,
        }
    if plan.capped_by_hint:
        result.notes.append(
            f"_last_checkpoint describes version {plan.hint_version}; the cutoff checkpoint is not newer "
            "(CKPT-CLEAN-006)"
        )


def _compat_decision(latest: Snapshot, listing: LogListing, deletes_log_files: bool) -> CompatCheckpoint:
    content = latest.checkpoint
    if content is None:
        return CompatCheckpoint("not-needed", "the latest version is not read from a checkpoint")
    inst: CheckpointInstance = content.instance
    if inst.kind is not LogFileKind.CHECKPOINT_UUID:
        return CompatCheckpoint("not-needed", f"the newest checkpoint {inst.name} is {inst.kind_label}-named",
                                inst.version, source=inst.name)  # fmt: skip
    existing = [
        c for c in listing.checkpoints
        if c.version == inst.version and c.kind in (LogFileKind.CHECKPOINT_CLASSIC, LogFileKind.CHECKPOINT_PART)
    ]  # fmt: skip
    if existing:
        return CompatCheckpoint("exists", f"{existing[-1].name} already exists at version {inst.version}",
                                inst.version, existing[-1].name, inst.name, len(content.sidecars))  # fmt: skip
    if not deletes_log_files:
        return CompatCheckpoint("not-needed", "no commit, checkpoint, checksum or compaction file is deleted",
                                inst.version, source=inst.name)  # fmt: skip
    name = classic_checkpoint_name(inst.version)
    return CompatCheckpoint(
        "would-create",
        f"would write a classic-named copy of {inst.name} referencing the same {len(content.sidecars)} sidecar(s) "
        "before deleting anything (CKPT-COMPAT-004)",
        inst.version, name, inst.name, len(content.sidecars),
    )  # fmt: skip
