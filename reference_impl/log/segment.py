"""Choose the files that reconstruct a version: a checkpoint (if any) plus the commits after it.

Spec: ``spec/checkpoints.md`` § Reader rules (``CKPT-READ-*``); PROTOCOL.md "Checkpoints",
"Last Checkpoint File"; delta-spark ``SnapshotManagement.getLogSegmentForVersion`` and
``Checkpoints.getLatestCompleteCheckpointFromList``.

Algorithm, for a requested version ``V`` (or the latest):

1. Read ``_last_checkpoint`` as a *hint* only. A missing, empty, corrupt (bad JSON, duplicate keys,
   wrong checksum), stale, dangling or too-new hint never fails a read: the listing decides.
2. List ``_delta_log``. Ignore hidden files (``.``-prefixed temp and ``.crc`` files of Hadoop),
   0-byte checkpoint files and names no rule recognises.
3. Group checkpoint files into instances. Complete instances: a classic or UUID-named file alone; a
   multi-part checkpoint whose part numbers are exactly ``1..p``.
4. Order instances as delta-spark does — ``(version, format, numParts, fileName)`` with format
   ``classic < multi-part < UUID-named`` — and take the newest at or below ``V``.
5. The commits after the checkpoint must be contiguous up to ``V`` (:class:`LogGap` otherwise);
   without a checkpoint they must start at 0.

:func:`segments_newest_first` yields the chosen segment and then the fallbacks (older checkpoints,
then commits only) that the reader tries when a checkpoint turns out to be unreadable.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reference_impl.errors import LastCheckpointCorrupt, LogGap, TableNotFound, VersionNotFound
from reference_impl.log.last_checkpoint import LastCheckpoint, parse_last_checkpoint
from reference_impl.log.naming import (
    DELTA_LOG,
    LAST_CHECKPOINT,
    LogFileKind,
    LogFileName,
    parse_log_file_name,
)
from reference_impl.storage.local import FileInfo, LocalStorage

#: delta-spark ``CheckpointInstance.Format`` ordinals used for same-version preference.
_FORMAT_ORDINAL = {
    LogFileKind.CHECKPOINT_CLASSIC: 0,
    LogFileKind.CHECKPOINT_PART: 1,
    LogFileKind.CHECKPOINT_UUID: 2,
}


@dataclass(frozen=True)
class CheckpointInstance:
    """One complete checkpoint: its version, naming kind and file(s) (parts in order)."""

    version: int
    kind: LogFileKind
    files: tuple[FileInfo, ...]
    num_parts: int | None = None

    @property
    def name(self) -> str:
        """The file name (the first part for multi-part checkpoints)."""
        return self.files[0].name

    @property
    def size_in_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def kind_label(self) -> str:
        return self.kind.value

    def sort_key(self) -> tuple[int, int, int, str]:
        # delta-spark compares (version, format, numParts, fileName); Option None sorts first.
        name = self.name if self.kind is LogFileKind.CHECKPOINT_UUID else ""
        return (self.version, _FORMAT_ORDINAL[self.kind], self.num_parts or 0, name)


class HintState(enum.Enum):
    """What became of ``_last_checkpoint`` when choosing a segment."""

    MISSING = "missing"
    CORRUPT = "corrupt"
    USED = "used"  # names the chosen checkpoint
    STALE = "stale"  # a newer checkpoint exists
    DANGLING = "dangling"  # its checkpoint is gone or incomplete
    AHEAD = "ahead"  # newer than anything in the log
    NOT_APPLICABLE = "not-applicable"  # time travel below the hint


@dataclass(frozen=True)
class Hint:
    state: HintState
    last_checkpoint: LastCheckpoint | None = None
    detail: str | None = None


@dataclass(frozen=True)
class LogListing:
    """One listing of ``_delta_log``, classified."""

    log_dir: Path
    commits: dict[int, FileInfo]
    checkpoints: tuple[CheckpointInstance, ...]  # complete only, ascending
    incomplete: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    crcs: dict[int, FileInfo] = field(default_factory=dict)
    compactions: tuple[tuple[LogFileName, FileInfo], ...] = ()
    last_checkpoint_file: FileInfo | None = None

    @property
    def latest_version(self) -> int | None:
        versions = [*self.commits, *(c.version for c in self.checkpoints)]
        return max(versions) if versions else None


@dataclass(frozen=True)
class LogSegment:
    """The files that reconstruct ``version``."""

    log_dir: Path
    version: int
    checkpoint: CheckpointInstance | None
    commits: tuple[tuple[int, FileInfo], ...]  # versions checkpoint+1 .. version
    hint: Hint
    fallback_from: tuple[str, ...] = ()  # checkpoints skipped because they were unreadable

    @property
    def found_by(self) -> str:
        if self.checkpoint is None:
            return "commits"
        return "hint" if self.hint.state is HintState.USED else "listing"


def log_dir_of(table: Path) -> Path:
    return table / DELTA_LOG


def list_log(log_dir: Path, storage: LocalStorage | None = None) -> LogListing:
    """List and classify ``log_dir`` (see the module docs for what is ignored)."""
    storage = storage or LocalStorage()
    commits: dict[int, FileInfo] = {}
    crcs: dict[int, FileInfo] = {}
    compactions: list[tuple[LogFileName, FileInfo]] = []
    groups: dict[tuple[int, LogFileKind, int | None, str], list[tuple[LogFileName, FileInfo]]] = {}
    ignored: list[str] = []
    last_file: FileInfo | None = None
    for info in storage.list_dir(log_dir):
        parsed = parse_log_file_name(info.name)
        kind = parsed.kind
        if kind is LogFileKind.COMMIT:
            assert parsed.version is not None
            commits[parsed.version] = info
        elif kind.is_checkpoint:
            if info.size == 0:
                ignored.append(info.name)
                continue
            assert parsed.version is not None
            key_name = info.name if kind is LogFileKind.CHECKPOINT_UUID else ""
            groups.setdefault((parsed.version, kind, parsed.num_parts, key_name), []).append((parsed, info))
        elif kind is LogFileKind.CRC:
            assert parsed.version is not None
            crcs[parsed.version] = info
        elif kind is LogFileKind.COMPACTION:
            compactions.append((parsed, info))
        elif kind is LogFileKind.LAST_CHECKPOINT:
            last_file = info
        else:
            ignored.append(info.name)
    complete: list[CheckpointInstance] = []
    incomplete: list[str] = []
    for (version, kind, num_parts, _), members in groups.items():
        if kind is LogFileKind.CHECKPOINT_PART:
            assert num_parts is not None
            parts = sorted(members, key=lambda m: m[0].part or 0)
            if [m[0].part for m in parts] != list(range(1, num_parts + 1)):
                incomplete.extend(m[1].name for m in parts)
                continue
            complete.append(CheckpointInstance(version, kind, tuple(m[1] for m in parts), num_parts))
        else:
            complete.append(CheckpointInstance(version, kind, (members[0][1],)))
    complete.sort(key=CheckpointInstance.sort_key)
    return LogListing(
        log_dir=log_dir,
        commits=dict(sorted(commits.items())),
        checkpoints=tuple(complete),
        incomplete=tuple(sorted(incomplete)),
        ignored=tuple(sorted(ignored)),
        crcs=crcs,
        compactions=tuple(compactions),
        last_checkpoint_file=last_file,
    )


def read_hint(log_dir: Path, storage: LocalStorage | None = None) -> tuple[LastCheckpoint | None, str | None]:
    """Read ``_last_checkpoint``: ``(parsed, None)``, ``(None, None)`` if absent, or ``(None, why)``."""
    storage = storage or LocalStorage()
    path = log_dir / LAST_CHECKPOINT
    if storage.stat(path) is None:
        return None, None
    try:
        return parse_last_checkpoint(
            storage.read_bytes(path).decode("utf-8", errors="replace"), path=str(path)
        ), None
    except LastCheckpointCorrupt as exc:
        return None, exc.message


def _hint_names(instance: CheckpointInstance, hint: LastCheckpoint) -> bool:
    """Does the hint describe exactly this checkpoint instance?"""
    if hint.version != instance.version:
        return False
    if instance.kind is LogFileKind.CHECKPOINT_UUID:
        return hint.v2_checkpoint is not None and hint.v2_checkpoint.path == instance.name
    if instance.kind is LogFileKind.CHECKPOINT_PART:
        return hint.parts == instance.num_parts and hint.v2_checkpoint is None
    return hint.parts in (None, 1) and hint.v2_checkpoint is None


def _classify_hint(
    listing: LogListing, hint: LastCheckpoint | None, why_corrupt: str | None,
    chosen: CheckpointInstance | None, requested: int | None,
) -> Hint:  # fmt: skip
    if hint is None:
        return Hint(HintState.CORRUPT, None, why_corrupt) if why_corrupt else Hint(HintState.MISSING)
    latest = listing.latest_version
    if latest is None or hint.version > latest:
        return Hint(HintState.AHEAD, hint, f"hint version {hint.version} > latest version {latest}")
    if requested is not None and requested < hint.version:
        return Hint(HintState.NOT_APPLICABLE, hint)
    if chosen is not None and _hint_names(chosen, hint):
        return Hint(HintState.USED, hint)
    if not any(_hint_names(c, hint) for c in listing.checkpoints):
        return Hint(
            HintState.DANGLING, hint, f"no complete checkpoint matches the hint at version {hint.version}"
        )
    return Hint(HintState.STALE, hint, "a newer or preferred checkpoint exists")


def _contiguous_commits(listing: LogListing, start: int, version: int) -> tuple[tuple[int, FileInfo], ...]:
    missing = [v for v in range(start, version + 1) if v not in listing.commits]
    if missing:
        raise LogGap(
            f"commits {start}..{version} are needed but {_ranges(missing)} missing",
            path=str(listing.log_dir),
            rule="CKPT-READ-006",
        )
    return tuple((v, listing.commits[v]) for v in range(start, version + 1))


def _ranges(values: list[int]) -> str:
    if len(values) == 1:
        return f"version {values[0]} is"
    return f"versions {values[0]}..{values[-1]} ({len(values)} files) are"


def _target_version(listing: LogListing, requested: int | None) -> int:
    latest = listing.latest_version
    if latest is None:
        raise TableNotFound("no commit or checkpoint in the log", path=str(listing.log_dir))
    if requested is None:
        return latest
    if requested < 0 or requested > latest:
        raise VersionNotFound(
            f"version {requested} does not exist (latest is {latest})", path=str(listing.log_dir)
        )
    return requested


def segments_newest_first(
    listing: LogListing,
    hint: LastCheckpoint | None,
    *,
    hint_error: str | None = None,
    version: int | None = None,
) -> Iterator[LogSegment]:
    """The segment for ``version`` (newest usable checkpoint first), then each fallback.

    The first yielded segment is what a reader uses; callers move to the next one only when the
    checkpoint of the previous one turns out to be unreadable. Raises :class:`LogGap` /
    :class:`VersionNotFound` when no segment at all can reach the version.
    """
    target = _target_version(listing, version)
    candidates = [c for c in reversed(listing.checkpoints) if c.version <= target]
    first_error: LogGap | None = None
    yielded = False
    skipped: list[str] = []
    hint_info = _classify_hint(listing, hint, hint_error, candidates[0] if candidates else None, version)
    for checkpoint in candidates:
        try:
            commits = _contiguous_commits(listing, checkpoint.version + 1, target)
        except LogGap as gap:
            first_error = first_error or gap
            skipped.append(checkpoint.name)
            continue
        yield LogSegment(listing.log_dir, target, checkpoint, commits, hint_info, tuple(skipped))
        yielded = True
        skipped.append(checkpoint.name)
    try:
        commits = _contiguous_commits(listing, 0, target)
    except LogGap as gap:
        if yielded:
            return
        if version is not None and not candidates:
            earliest = _earliest_reconstructable(listing)
            raise VersionNotFound(
                f"version {version} can no longer be reconstructed: no checkpoint at or below it and "
                f"commit 0 is gone (earliest reconstructable version: {earliest})",
                path=str(listing.log_dir),
            ) from None
        raise first_error or gap from None
    yield LogSegment(listing.log_dir, target, None, commits, hint_info, tuple(skipped))


def _earliest_reconstructable(listing: LogListing) -> int | None:
    """The oldest version with a checkpoint (or commit 0) to start from; None if there is none."""
    starts = [c.version for c in listing.checkpoints]
    if 0 in listing.commits:
        starts.append(0)
    return min(starts) if starts else None
