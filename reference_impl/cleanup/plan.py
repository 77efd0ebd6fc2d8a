"""The pure part of metadata cleanup: clocks, cutoffs, and the decision for every file.

Spec: ``spec/checkpoints.md`` §18.1 The algorithm and §18.3 Sidecar garbage collection
(``CKPT-CLEAN-001`` … ``CKPT-CLEAN-017``, ``-027``, ``-028``). Nothing here reads a table's state or touches Spark;
:mod:`reference_impl.cleanup.cleaner` feeds it one listing of ``_delta_log`` (and of
``_delta_log/_sidecars``), the sidecar references of the checkpoints that remain, and executes
what it returns. Keeping the decisions pure makes them testable on synthetic listings and lets
``--dry-run`` show exactly what a real run would do.

Clock rules (§18.1):

* *cutoff* = midnight UTC of ``now - retention`` (:func:`log_cutoff`, ``CKPT-CLEAN-008``);
* *one-day floor* = midnight UTC of ``now - 24 h`` (:func:`sidecar_floor`);
* *sidecar cutoff* = the log cutoff, or a configured window truncated to midnight UTC, never later
  than the floor (:func:`sidecar_cutoff`);
* commit timestamps (:func:`commit_timestamps`) are the commit files' modification times — or the
  in-commit timestamps from the version where ``delta.enableInCommitTimestamps`` took effect —
  made strictly increasing in version order: a commit not newer than its predecessor counts as one
  millisecond newer than it.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from reference_impl.errors import InvalidOption, LogCorrupt, StorageError
from reference_impl.log.listing import CheckpointInstance, LogListing
from reference_impl.log.naming import (
    SIDECAR_DIR,
    checksum_owner,
    hadoop_checksum_name,
    is_sidecar_temp_name,
    is_staging_dir_name,
    parse_log_file_name,
)
from reference_impl.log.table_properties import MS_PER_DAY
from reference_impl.storage import FileInfo, Location, Storage
from spec.vocabulary import LogFileKind

#: Deletion order inside one version: what summarises commits goes before the commits themselves.
_RANK = {LogFileKind.COMPACTION: 0, LogFileKind.CRC: 2, LogFileKind.COMMIT: 3}
_CHECKPOINT_RANK = 1


# -- clocks -------------------------------------------------------------------------------------


def truncate_to_day(ms: int) -> int:
    """Midnight UTC of the day containing ``ms`` (ms since the epoch)."""
    return ms - ms % MS_PER_DAY


def log_cutoff(now_ms: int, retention_ms: int) -> int:
    """The cutoff timestamp of §18.1 step 1: midnight UTC of ``now - retention``."""
    return truncate_to_day(now_ms - retention_ms)


def sidecar_floor(now_ms: int) -> int:
    """The one-day floor of §18.3: midnight UTC of the day containing ``now - 24 h``."""
    return truncate_to_day(now_ms - MS_PER_DAY)


def format_ms(ms: int) -> str:
    """``2024-05-01T00:00:00.000Z``."""
    moment = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class SidecarCutoff:
    """The sidecar cutoff of §18.3, where it comes from, and a note when the default was clamped."""

    cutoff_ms: int
    source: str
    note: str | None = None


def sidecar_cutoff(
    now_ms: int, floor_ms: int, configured_ms: int | None, log_cutoff_ms: int
) -> SidecarCutoff:
    """The configured window truncated to midnight UTC, else the log cutoff — clamped to the floor."""
    if configured_ms is not None:
        value = truncate_to_day(now_ms - configured_ms)
        return SidecarCutoff(value, f"option ({configured_ms} ms, truncated to midnight UTC)")
    if log_cutoff_ms > floor_ms:
        note = (
            f"the log cutoff {format_ms(log_cutoff_ms)} is later than the one-day floor {format_ms(floor_ms)}; "
            "sidecars use the floor (CKPT-CLEAN-014)"
        )
        return SidecarCutoff(floor_ms, "one-day floor (the log cutoff is later)", note)
    return SidecarCutoff(log_cutoff_ms, "log cutoff (CKPT-CLEAN-015)")


class TimestampSource(enum.StrEnum):
    """Where a commit's timestamp for cleanup comes from (§18.1)."""

    MTIME = "mtime"
    IN_COMMIT_TIMESTAMP = "inCommitTimestamp"


@dataclass(frozen=True)
class CommitTime:
    """A commit's timestamp for cleanup: ``raw_ms`` as found, ``timestamp_ms`` after adjustment."""

    version: int
    raw_ms: int
    timestamp_ms: int
    source: TimestampSource

    @property
    def adjusted(self) -> bool:
        return self.timestamp_ms != self.raw_ms

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "timestamp": self.timestamp_ms,
            "timestampUtc": format_ms(self.timestamp_ms),
            "source": self.source,
            "adjusted": self.adjusted,
            "raw": self.raw_ms,
        }


def read_in_commit_timestamp(storage: Storage, path: Location) -> int:
    """``commitInfo.inCommitTimestamp`` of the first action of a commit file (PROTOCOL: it comes first)."""
    try:
        with storage.open_read(path) as handle:
            first = handle.readline().decode("utf-8")
        value = json.loads(first)["commitInfo"]["inCommitTimestamp"]
    except (StorageError, OSError, ValueError, KeyError, TypeError) as exc:
        raise LogCorrupt(
            "in-commit timestamps are enabled but the commit's first action has no "
            f"commitInfo.inCommitTimestamp ({type(exc).__name__})",
            path=str(path),
        ) from exc
    if not isinstance(value, int):
        raise LogCorrupt(f"commitInfo.inCommitTimestamp is not an integer: {value!r}", path=str(path))
    return value


def commit_timestamps(
    commits: Mapping[int, FileInfo],
    *,
    stop_after_ms: int | None = None,
    ict_from_version: int | None = None,
    read_ict: Callable[[int], int] | None = None,
) -> list[CommitTime]:
    """Commit timestamps in version order (see the module docs), made strictly increasing.

    With ``stop_after_ms``, stops after the first commit whose timestamp is later than it (every
    later one is later too). ``read_ict(version)`` supplies in-commit timestamps for versions
    ``>= ict_from_version``.
    """
    out: list[CommitTime] = []
    previous: int | None = None
    for version in sorted(commits):
        if ict_from_version is not None and read_ict is not None and version >= ict_from_version:
            raw, source = read_ict(version), TimestampSource.IN_COMMIT_TIMESTAMP
        else:
            raw, source = commits[version].mtime_ms, TimestampSource.MTIME
        stamp = raw if previous is None or raw > previous else previous + 1
        out.append(CommitTime(version, raw, stamp, source))
        previous = stamp
        if stop_after_ms is not None and stamp > stop_after_ms:
            break
    return out


# -- decisions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileDecision:
    """One file (or directory) under ``_delta_log`` and what cleanup does with it, and why.

    ``name`` is relative to ``_delta_log`` (``_sidecars/<name>`` for sidecars). ``companions`` are
    hidden Hadoop checksum files (``.<name>.crc``) deleted together with the file.
    """

    name: str
    kind: LogFileKind
    version: int | None
    size: int
    mtime_ms: int
    delete: bool
    reason: str
    rule: str | None = None
    companions: tuple[str, ...] = ()
    referenced_by: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The kind as reports name it: every checkpoint kind is ``checkpoint``, a ``.crc`` a ``checksum``,
        a writer's sidecar temporary in ``_sidecars`` (``CKPT-CLEAN-027``) a ``temporary``."""
        if self.kind is LogFileKind.SIDECAR and is_sidecar_temp_name(self.name.rsplit("/", 1)[-1]):
            return "temporary"
        if self.kind.is_checkpoint:
            return "checkpoint"
        return "checksum" if self.kind is LogFileKind.CRC else str(self.kind)

    def order_key(self) -> tuple[int, int, int, str]:
        """Deletion order: log files by version (compactions, checkpoints, checksums, commit), sidecars, staging."""
        if self.kind is LogFileKind.SIDECAR:
            return (1, 0, 0, self.name)
        if self.kind is LogFileKind.STAGING:
            return (2, 0, 0, self.name)
        rank = _CHECKPOINT_RANK if self.kind.is_checkpoint else _RANK.get(self.kind, 9)
        return (0, self.version if self.version is not None else -1, rank, self.name)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "kind": self.label,
            "version": self.version,
            "sizeInBytes": self.size,
            "modificationTime": self.mtime_ms,
            "reason": self.reason,
        }
        if self.rule:
            out["rule"] = self.rule
        if self.companions:
            out["companions"] = list(self.companions)
        if self.referenced_by:
            out["referencedBy"] = list(self.referenced_by)
        return out


@dataclass
class LogPlan:
    """What to do with the files directly in ``_delta_log`` (§18.1 steps 1-4)."""

    cutoff_ms: int
    commit_times: list[CommitTime]
    cutoff_commit: CommitTime | None
    cutoff_checkpoint: CheckpointInstance | None
    hint_version: int | None
    capped_by_hint: bool
    files: list[FileDecision] = field(default_factory=list)
    stop_reason: str | None = None

    @property
    def deletions(self) -> list[FileDecision]:
        return sorted((f for f in self.files if f.delete), key=FileDecision.order_key)


def choose_cutoff_checkpoint(
    listing: LogListing, cutoff_commit: int, hint_version: int | None
) -> tuple[CheckpointInstance | None, bool]:
    """§18.1 step 3: the newest complete checkpoint at or before the cutoff commit.

    Two restrictions keep the MUSTs of §18.2 satisfiable: the checkpoint's own commit file must be
    present (``CKPT-CLEAN-001``: the oldest remaining commit is at a complete checkpoint), and its
    version must not exceed ``_last_checkpoint``'s (``CKPT-CLEAN-006``: the checkpoint the hint
    describes is never deleted — delta-spark caps deletions the same way). Returns the checkpoint
    and whether the hint lowered the choice.
    """
    limit = cutoff_commit if hint_version is None else min(cutoff_commit, hint_version)
    usable = [c for c in listing.checkpoints if c.version <= limit and c.version in listing.commits]
    chosen = usable[-1] if usable else None
    unrestricted = [
        c for c in listing.checkpoints if c.version <= cutoff_commit and c.version in listing.commits
    ]
    capped = bool(unrestricted) and (chosen is None or unrestricted[-1].version > chosen.version)
    return chosen, capped


def plan_log(
    listing: LogListing,
    files: Iterable[FileInfo],
    directories: Iterable[str],
    *,
    cutoff_ms: int,
    commit_times: list[CommitTime],
    hint_version: int | None,
) -> LogPlan:
    """Decide, for every entry of ``_delta_log``, whether it is deleted and why (§18.1 steps 2-4)."""
    entries = list(files)
    not_later = [c for c in commit_times if c.timestamp_ms <= cutoff_ms]
    cutoff_commit = not_later[-1] if not_later else None
    checkpoint: CheckpointInstance | None = None
    capped = False
    stop: str | None = None
    if cutoff_commit is None:
        stop = f"no commit is at or before the cutoff {format_ms(cutoff_ms)}: nothing is deleted"
    else:
        checkpoint, capped = choose_cutoff_checkpoint(listing, cutoff_commit.version, hint_version)
        if checkpoint is None:
            stop = (
                f"no complete checkpoint (with its commit file) at or before the cutoff commit "
                f"{cutoff_commit.version}"
                + (f" and _last_checkpoint's version {hint_version}" if capped else "")
                + ": nothing is deleted"
            )
    plan = LogPlan(cutoff_ms, commit_times, cutoff_commit, checkpoint, hint_version, capped, stop_reason=stop)
    cutoff_files = {f.name for f in checkpoint.files} if checkpoint else set()
    c = checkpoint.version if checkpoint else None
    names = {e.name for e in entries}
    deleted_names: set[str] = set()
    decisions: list[FileDecision] = []
    for info in entries:
        parsed = parse_log_file_name(info.name)
        kind = parsed.kind
        version = parsed.version
        if kind is LogFileKind.HIDDEN:
            continue  # decided below (companion of a deleted file, or kept)
        delete, reason, rule = False, "", None
        if kind is LogFileKind.LAST_CHECKPOINT:
            reason, rule = "_last_checkpoint is never deleted", "CKPT-CLEAN-028"
        elif kind is LogFileKind.OTHER:
            reason, rule = "not a commit, checkpoint, checksum or log compaction file", "CKPT-CLEAN-028"
        elif c is None:
            reason, rule = stop or "nothing is deleted", "CKPT-CLEAN-004"
        elif kind is LogFileKind.COMPACTION:
            assert version is not None
            if version <= c:
                delete, rule = True, "CKPT-CLEAN-010"
                reason = f"log compaction starting at {version} <= cutoff checkpoint {c} (delta-spark keeps these: D7)"
            else:
                reason = f"log compaction starting at {version} > cutoff checkpoint {c}"
        else:
            assert version is not None
            if version < c:
                delete, rule = True, "CKPT-CLEAN-009"
                what = (
                    "checkpoint file"
                    if kind.is_checkpoint
                    else {LogFileKind.CRC: "checksum file"}.get(kind, kind)
                )
                extra = ""
                if kind.is_checkpoint and info.size == 0:
                    extra = " (0 bytes)"
                elif info.name in listing.incomplete:
                    extra = " (part of an incomplete multi-part checkpoint)"
                reason = f"{what} of version {version} < cutoff checkpoint {c}{extra}"
            elif info.name in cutoff_files:
                reason, rule = "the cutoff checkpoint", "CKPT-CLEAN-009"
            elif kind is LogFileKind.COMMIT and version == c:
                reason, rule = "commit at the cutoff checkpoint's version (D11)", "CKPT-CLEAN-001"
            else:
                reason, rule = f"version {version} >= cutoff checkpoint {c}", "CKPT-CLEAN-003"
        companion = hadoop_checksum_name(info.name)
        companions = (companion,) if delete and companion in names else ()
        if delete:
            deleted_names.add(info.name)
        decisions.append(
            FileDecision(info.name, kind, version, info.size, info.mtime_ms, delete, reason, rule, companions)
        )
    for info in entries:
        if parse_log_file_name(info.name).kind is not LogFileKind.HIDDEN:
            continue
        owner = checksum_owner(info.name)
        if owner is not None and owner in deleted_names:
            continue  # deleted with its file
        reason = (
            f"Hadoop checksum of {owner}, kept with it"
            if owner is not None and owner in names
            else "hidden file (temporary file of a writer, or a checksum): never deleted on its own"
        )
        decisions.append(
            FileDecision(
                info.name, LogFileKind.HIDDEN, None, info.size, info.mtime_ms, False, reason, "CKPT-CLEAN-028"
            )
        )
    for directory in sorted(directories):
        if directory == SIDECAR_DIR or is_staging_dir_name(directory):
            continue  # planned by plan_sidecars and plan_staging
        decisions.append(
            FileDecision(
                directory + "/",
                LogFileKind.DIRECTORY,
                None,
                0,
                0,
                False,
                "directory: never entered (writer staging, commit directories, …)",
                "CKPT-CLEAN-028",
            )
        )
    plan.files = decisions
    return plan


# -- sidecars -----------------------------------------------------------------------------------


@dataclass
class SidecarPlan:
    """What to do with the files in ``_delta_log/_sidecars`` (§18.1 step 5, §18.3)."""

    cutoff_ms: int
    floor_ms: int
    cutoff_source: str
    files: list[FileDecision] = field(default_factory=list)
    skipped_reason: str | None = None

    @property
    def deletions(self) -> list[FileDecision]:
        return sorted((f for f in self.files if f.delete), key=FileDecision.order_key)


def plan_sidecars(
    entries: Iterable[FileInfo],
    referenced: Mapping[str, Iterable[str]],
    *,
    cutoff_ms: int,
    floor_ms: int,
    cutoff_source: str,
    skipped_reason: str | None = None,
) -> SidecarPlan:
    """Decide for each file of ``_sidecars``: delete iff unreferenced and modified before the cutoff.

    Hidden files are never sidecars: a writer's sidecar temporary (``.<sidecar>.<uuid>.tmp``,
    :func:`~reference_impl.log.naming.is_sidecar_temp_name`) is deleted when modified before the
    cutoff (``CKPT-CLEAN-027``), and planned as a sidecar, so that it is reported, protected by the
    floor and deleted like one; every other hidden file is kept (``CKPT-CLEAN-028``) unless it is the
    Hadoop checksum of a file deleted. ``referenced`` maps a bare sidecar name to the checkpoint files
    (that remain) referencing it.
    With ``skipped_reason`` (cleanup stopped, or a remaining checkpoint could not be read, so the
    reference set is unknown) nothing is deleted.
    """
    if cutoff_ms > floor_ms:  # CKPT-CLEAN-014; callers clamp or reject before this point
        raise InvalidOption(
            f"sidecar cutoff {format_ms(cutoff_ms)} is later than the one-day floor {format_ms(floor_ms)}",
            rule="CKPT-CLEAN-016",
        )
    plan = SidecarPlan(cutoff_ms, floor_ms, cutoff_source, skipped_reason=skipped_reason)
    listed = list(entries)
    names = {e.name for e in listed}
    deleted: set[str] = set()
    for info in listed:
        temporary = is_sidecar_temp_name(info.name)
        if info.name.startswith(".") and not temporary:
            continue
        name = f"{SIDECAR_DIR}/{info.name}"
        users = tuple(sorted(set(referenced.get(info.name, ()))))
        delete, rule = False, "CKPT-CLEAN-017"
        if users:
            reason, rule = f"referenced by {len(users)} remaining checkpoint(s)", "CKPT-CLEAN-013"
        elif temporary:
            rule = "CKPT-CLEAN-027"
            delete, reason = _temporary_decision(info, cutoff_ms, skipped_reason)
        elif skipped_reason is not None:
            reason = f"sidecar collection skipped: {skipped_reason}"
        elif info.mtime_ms >= cutoff_ms:
            reason = (
                f"unreferenced, but modified {format_ms(info.mtime_ms)}, not before the sidecar cutoff "
                f"{format_ms(cutoff_ms)} (it may belong to a checkpoint being written)"
            )
            rule = "CKPT-CLEAN-014" if info.mtime_ms >= floor_ms else "CKPT-CLEAN-015"
        else:
            delete = True
            reason = (
                f"referenced by no remaining checkpoint and modified {format_ms(info.mtime_ms)}, "
                f"before the sidecar cutoff {format_ms(cutoff_ms)}"
            )
        companion = hadoop_checksum_name(info.name)
        companions = (f"{SIDECAR_DIR}/{companion}",) if delete and companion in names else ()
        if delete:
            deleted.add(info.name)
        plan.files.append(
            FileDecision(
                name,
                LogFileKind.SIDECAR,
                None,
                info.size,
                info.mtime_ms,
                delete,
                reason,
                rule,
                companions,
                users,
            )
        )
    for info in listed:
        if not info.name.startswith(".") or is_sidecar_temp_name(info.name):
            continue  # planned above
        owner = checksum_owner(info.name)
        if owner is not None and owner in deleted:
            continue
        plan.files.append(
            FileDecision(
                f"{SIDECAR_DIR}/{info.name}",
                LogFileKind.HIDDEN,
                None,
                info.size,
                info.mtime_ms,
                False,
                f"Hadoop checksum of {owner}, kept with it"
                if owner is not None and owner in names
                else "hidden file in _sidecars, not a writer's sidecar temporary: never deleted on its own",
                "CKPT-CLEAN-028",
            )
        )
    return plan


def _temporary_decision(info: FileInfo, cutoff_ms: int, skipped_reason: str | None) -> tuple[bool, str]:
    """``CKPT-CLEAN-027``: (delete, reason) for a writer's sidecar temporary nothing references."""
    what = "a writer's sidecar temporary (left by a killed task, or still being written)"
    if skipped_reason is not None:
        return False, f"{what}; sidecar collection skipped: {skipped_reason}"
    old = info.mtime_ms < cutoff_ms
    when = "before" if old else "not before"
    return (
        old,
        f"{what}, modified {format_ms(info.mtime_ms)}, {when} the sidecar cutoff {format_ms(cutoff_ms)}",
    )


# -- writer staging -----------------------------------------------------------------------------


def staging_cutoff(log_cutoff_ms: int, floor_ms: int) -> int:
    """``CKPT-CLEAN-025``: the log cutoff, but never later than the one-day floor."""
    return min(log_cutoff_ms, floor_ms)


@dataclass
class StagingPlan:
    """What to do with the writer staging directories in ``_delta_log`` (``CKPT-CLEAN-025``)."""

    cutoff_ms: int
    files: list[FileDecision] = field(default_factory=list)

    @property
    def deletions(self) -> list[FileDecision]:
        return [f for f in self.files if f.delete]


def plan_staging(
    directories: Mapping[str, Iterable[FileInfo]],
    changed: Mapping[str, int | None],
    *,
    cutoff_ms: int,
    skipped_reason: str | None = None,
) -> StagingPlan:
    """Decide for each writer staging directory (``CKPT-CLEAN-025``): delete iff all it holds is old.

    ``directories`` maps a staging directory's name (directly in ``_delta_log``, see
    :func:`~reference_impl.log.naming.is_staging_dir_name`) to every file in it at any depth
    (object-store directory markers included); ``changed`` maps one that holds no file to the last
    change of it or of a directory in it (None: the store keeps no directory times). The decision's
    size is the files' total and its time the newest file's (an empty one's: its last change). With
    ``skipped_reason`` (cleanup stopped) nothing is deleted.
    """
    plan = StagingPlan(cutoff_ms)
    for name in sorted(directories):
        files = list(directories[name])
        last_change = None if files else changed.get(name)
        newest = max((f.mtime_ms for f in files), default=last_change or 0)
        what = f"writer staging with {len(files)} file(s)"
        delete = False
        if skipped_reason is not None:
            reason = f"{what}; not collected: {skipped_reason}"
        elif not files and last_change is None:
            reason = f"{what}: no modification time to judge by (a writer may just have created it)"
        elif not files and newest >= cutoff_ms:
            reason = (
                f"{what}, last changed {format_ms(newest)}, not before the staging cutoff "
                f"{format_ms(cutoff_ms)} (a writer may just have created it)"
            )
        elif not files:
            delete = True
            reason = (
                f"abandoned {what}, last changed {format_ms(newest)}, before the staging cutoff "
                f"{format_ms(cutoff_ms)}"
            )
        elif newest >= cutoff_ms:
            reason = (
                f"{what}, the newest modified {format_ms(newest)}, not before the staging cutoff "
                f"{format_ms(cutoff_ms)} (its writer may still be running)"
            )
        else:
            delete = True
            reason = (
                f"abandoned {what}, the newest modified {format_ms(newest)}, before the staging cutoff "
                f"{format_ms(cutoff_ms)}"
            )
        size = sum(f.size for f in files)
        plan.files.append(
            FileDecision(
                name + "/", LogFileKind.STAGING, None, size, newest, delete, reason, "CKPT-CLEAN-025"
            )
        )
    return plan


CHECKPOINT_PROTECTION = "checkpointProtection"


def protect_history(plan: LogPlan, protected_before: int) -> LogPlan:
    """``CKPT-CLEAN-021`` (``checkpointProtection``): the history before *P* = ``protected_before`` goes
    whole or not at all.

    The plan deletes every commit and checkpoint below its cutoff checkpoint, so it removes all the
    history before *P* exactly when that checkpoint is at or after *P*. Otherwise no file of a version
    below *P* is deleted: every such decision becomes a keep with the reason (sidecars are planned
    separately and still collected).
    """
    c = plan.cutoff_checkpoint
    if protected_before <= 0 or c is None or c.version >= protected_before:
        return plan
    reason = (
        f"checkpointProtection: the history before version {protected_before} must go in one run, "
        f"but the cutoff checkpoint is {c.version}"
    )
    files = [
        replace(f, delete=False, reason=reason, rule="CKPT-CLEAN-021")
        if f.delete and f.version is not None and f.version < protected_before
        else f
        for f in plan.files
    ]
    return replace(plan, files=files)
