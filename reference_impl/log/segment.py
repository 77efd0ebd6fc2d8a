"""Choose the files that reconstruct a version: a checkpoint (if any) plus the commits after it.

Spec: ``spec/checkpoints.md`` §16 Reader rules (``CKPT-READ-*``); PROTOCOL.md "Checkpoints",
"Last Checkpoint File"; delta-spark ``SnapshotManagement.getLogSegmentForVersion``.

Algorithm, for a requested version ``V`` (or the latest), given one classified listing
(:mod:`reference_impl.log.listing`) and ``_last_checkpoint``:

1. ``_last_checkpoint`` is a *hint* only. A missing, empty, corrupt (bad JSON, duplicate keys,
   wrong checksum), stale, dangling or too-new hint never fails a read: the listing decides
   (:class:`HintState` records what became of it).
2. Take the newest complete checkpoint at or below ``V``.
3. The commits after the checkpoint must be contiguous up to ``V`` (:class:`LogGap` otherwise);
   without a checkpoint they must start at 0.

:func:`segments_newest_first` yields the chosen segment and then the fallbacks (older checkpoints,
then commits only) that the reader tries when a checkpoint turns out to be unreadable.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from reference_impl.errors import LogGap, TableNotFound, VersionNotFound
from reference_impl.log.last_checkpoint import LastCheckpoint
from reference_impl.log.listing import CheckpointInstance, LogListing
from reference_impl.storage import FileInfo, Location
from spec.vocabulary import LogFileKind


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
class LogSegment:
    """The files that reconstruct ``version``."""

    log_dir: Location
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
    listing: LogListing,
    hint: LastCheckpoint | None,
    why_corrupt: str | None,
    chosen: CheckpointInstance | None,
    requested: int | None,
) -> Hint:
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
