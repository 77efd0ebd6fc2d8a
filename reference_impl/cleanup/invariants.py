"""The invariants a cleanup plan must satisfy before anything is written or deleted: one function per rule.

Spec: ``spec/checkpoints.md`` §18.2 Invariants (``CKPT-CLEAN-001`` … ``-006``, ``-013``, ``-014``, ``-025``, ``-028``)
and ``CKPT-CLEAN-012`` (a cleanup never changes what a reader sees). Each function returns an
:class:`InvariantCheck`; :func:`structural_checks` runs the ones that need the listing alone, in
rule order. :func:`sidecars_exist` reads the storage, :func:`state_unchanged` replays versions.
Any failed check makes the cleaner raise ``CLEANUP_INVARIANT_VIOLATED`` with nothing written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reference_impl.cleanup.plan import LogPlan, SidecarPlan, StagingPlan, format_ms
from reference_impl.cleanup.references import References
from reference_impl.errors import CheckpointError, SidecarPathInvalid
from reference_impl.log.listing import LogListing
from reference_impl.log.naming import SIDECAR_DIR, is_sidecar_temp_name, is_staging_dir_name
from reference_impl.progress import Progress
from reference_impl.read.sidecars import resolve_sidecar
from reference_impl.storage import Location, Storage
from spec.table_state import TableState
from spec.vocabulary import LogFileKind


@dataclass(frozen=True)
class InvariantCheck:
    """One check made before anything is deleted."""

    name: str
    rule: str | None
    ok: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"check": self.name, "rule": self.rule, "ok": self.ok, "detail": self.detail}


def _deleted_commits(plan: LogPlan) -> list[int]:
    return sorted(d.version for d in plan.deletions if d.kind is LogFileKind.COMMIT and d.version is not None)


def _kept_commits(plan: LogPlan, listing: LogListing) -> list[int]:
    deleted = {d.name for d in plan.deletions}
    return sorted(v for v, info in listing.commits.items() if info.name not in deleted)


def oldest_kept_version_has_checkpoint(plan: LogPlan, listing: LogListing) -> InvariantCheck:
    """CKPT-CLEAN-001: after deleting commits, the oldest remaining one is at a complete checkpoint."""
    name, rule = "oldest kept version has a complete checkpoint", "CKPT-CLEAN-001"
    if not _deleted_commits(plan):
        return InvariantCheck(name, rule, True, "no commit is deleted")
    deleted = {d.name for d in plan.deletions}
    kept_checkpoints = [c for c in listing.checkpoints if not any(f.name in deleted for f in c.files)]
    kept = _kept_commits(plan, listing)
    oldest = kept[0] if kept else None
    ok = oldest is not None and any(c.version == oldest for c in kept_checkpoints)
    detail = (
        f"oldest remaining commit {oldest} has a complete checkpoint"
        if ok
        else f"oldest remaining commit {oldest} has no complete checkpoint at its version"
    )
    return InvariantCheck(name, rule, ok, detail)


def no_gap_in_kept_commits(plan: LogPlan, listing: LogListing) -> InvariantCheck:
    """CKPT-CLEAN-002: no deleted commit is newer than a kept one."""
    kept = _kept_commits(plan, listing)
    gap = [v for v in _deleted_commits(plan) if kept and v > kept[0]]
    detail = (
        "remaining commits start after every deleted one"
        if not gap
        else f"deleted {gap} but keep older commits"
    )
    return InvariantCheck("no deleted commit is newer than a kept one", "CKPT-CLEAN-002", not gap, detail)


def nothing_after_cutoff_commit(plan: LogPlan) -> InvariantCheck:
    """CKPT-CLEAN-003: nothing newer than the cutoff commit is deleted."""
    cutoff_commit = plan.cutoff_commit
    versioned = (LogFileKind.COMMIT, LogFileKind.CRC)
    too_new = [
        d.name
        for d in plan.deletions
        if (d.kind in versioned or d.kind.is_checkpoint)
        and (cutoff_commit is None or d.version is None or d.version > cutoff_commit.version)
    ]
    too_new += [
        f"{v}.json"
        for v in _deleted_commits(plan)
        if any(c.version == v and c.timestamp_ms > plan.cutoff_ms for c in plan.commit_times)
    ]
    detail = (
        "every deleted commit, checkpoint and checksum file is at or before version "
        f"{cutoff_commit.version if cutoff_commit else None}"
        if not too_new
        else f"would delete {too_new}"
    )
    return InvariantCheck(
        "nothing newer than the cutoff commit is deleted", "CKPT-CLEAN-003", not too_new, detail
    )


def nothing_deleted_without_cutoff_checkpoint(plan: LogPlan) -> InvariantCheck:
    """CKPT-CLEAN-004: with no cutoff checkpoint, nothing is deleted."""
    deleted = plan.deletions
    detail = "nothing is deleted" if not deleted else f"would delete {len(deleted)} file(s)"
    return InvariantCheck("no cutoff checkpoint: nothing deleted", "CKPT-CLEAN-004", not deleted, detail)


def cutoff_checkpoint_is_complete(plan: LogPlan, listing: LogListing) -> InvariantCheck:
    """CKPT-CLEAN-005: the cutoff checkpoint is complete."""
    cp = plan.cutoff_checkpoint
    assert cp is not None
    complete = cp in listing.checkpoints and all(f.size > 0 for f in cp.files)
    detail = f"{cp.name} ({cp.kind}, {len(cp.files)} file(s))"
    return InvariantCheck("the cutoff checkpoint is complete", "CKPT-CLEAN-005", complete, detail)


def hinted_checkpoint_is_kept(plan: LogPlan) -> InvariantCheck:
    """CKPT-CLEAN-006: the checkpoint ``_last_checkpoint`` describes is kept."""
    hit = [
        d.name
        for d in plan.deletions
        if plan.hint_version is not None and d.kind.is_checkpoint and d.version == plan.hint_version
    ]
    detail = f"no file of version {plan.hint_version} is deleted" if not hit else f"would delete {hit}"
    return InvariantCheck("_last_checkpoint's checkpoint is kept", "CKPT-CLEAN-006", not hit, detail)


def only_log_files_are_deleted(
    plan: LogPlan, sidecars: SidecarPlan, staging: StagingPlan | None = None
) -> InvariantCheck:
    """CKPT-CLEAN-028: only commit, checkpoint, checksum, compaction and sidecar files are deleted
    — and writer staging directories (``CKPT-CLEAN-025``) and sidecar temporaries (``CKPT-CLEAN-027``)
    by their exact names; no other hidden file of ``_sidecars``."""
    allowed = (LogFileKind.COMMIT, LogFileKind.CRC, LogFileKind.COMPACTION)
    foreign = [
        d.name for d in plan.deletions if not (d.kind in allowed or d.kind.is_checkpoint) or "/" in d.name
    ]
    foreign += [
        d.name
        for d in sidecars.deletions
        if d.kind is not LogFileKind.SIDECAR
        or (d.name.startswith(f"{SIDECAR_DIR}/.") and not is_sidecar_temp_name(d.name.split("/", 1)[1]))
    ]
    foreign += [
        d.name
        for d in (staging.deletions if staging is not None else [])
        if d.kind is not LogFileKind.STAGING or not is_staging_dir_name(d.name.removesuffix("/"))
    ]
    return InvariantCheck(
        "only commit, checkpoint, checksum, compaction and sidecar files, staging and sidecar temporaries go",
        "CKPT-CLEAN-028",
        not foreign,
        "ok" if not foreign else f"would delete {foreign}",
    )


def referenced_sidecars_are_kept(
    sidecars: SidecarPlan, referenced: Mapping[str, Iterable[str]]
) -> InvariantCheck:
    """CKPT-CLEAN-013: no sidecar a remaining checkpoint references is deleted."""
    refs = {name for name, users in referenced.items() if list(users)}
    wrong = [d.name for d in sidecars.deletions if d.name.split("/", 1)[1] in refs]
    detail = f"{len(refs)} referenced sidecar name(s) kept" if not wrong else f"would delete {wrong}"
    return InvariantCheck("no referenced sidecar is deleted", "CKPT-CLEAN-013", not wrong, detail)


def young_sidecars_are_kept(sidecars: SidecarPlan) -> InvariantCheck:
    """CKPT-CLEAN-014: no sidecar modified at or after the one-day floor is deleted."""
    young = [d.name for d in sidecars.deletions if d.mtime_ms >= sidecars.floor_ms]
    detail = f"floor {format_ms(sidecars.floor_ms)}" if not young else f"would delete {young}"
    return InvariantCheck(
        "no sidecar modified at or after the one-day floor is deleted", "CKPT-CLEAN-014", not young, detail
    )


def young_staging_is_kept(staging: StagingPlan) -> InvariantCheck:
    """CKPT-CLEAN-025: no staging directory with a file modified at or after the staging cutoff is deleted."""
    young = [d.name for d in staging.deletions if d.mtime_ms >= staging.cutoff_ms]
    detail = f"cutoff {format_ms(staging.cutoff_ms)}" if not young else f"would delete {young}"
    return InvariantCheck(
        "no writer staging with a file at or after the staging cutoff is deleted",
        "CKPT-CLEAN-025",
        not young,
        detail,
    )


def structural_checks(
    plan: LogPlan,
    sidecars: SidecarPlan,
    listing: LogListing,
    referenced: Mapping[str, Iterable[str]],
    staging: StagingPlan | None = None,
) -> list[InvariantCheck]:
    """``CKPT-CLEAN-001``…``-007``, ``-013``, ``-014``, ``-025`` on the plan, from the listing alone."""
    return [
        oldest_kept_version_has_checkpoint(plan, listing),
        no_gap_in_kept_commits(plan, listing),
        nothing_after_cutoff_commit(plan),
        nothing_deleted_without_cutoff_checkpoint(plan)
        if plan.cutoff_checkpoint is None
        else cutoff_checkpoint_is_complete(plan, listing),
        hinted_checkpoint_is_kept(plan),
        only_log_files_are_deleted(plan, sidecars, staging),
        referenced_sidecars_are_kept(sidecars, referenced),
        young_sidecars_are_kept(sidecars),
        *([young_staging_is_kept(staging)] if staging is not None else []),
    ]


def sidecars_exist(storage: Storage, log_dir: Location, refs: References) -> InvariantCheck:
    """Every sidecar of every remaining checkpoint exists with its recorded ``sizeInBytes``."""
    problems = []
    for checkpoint, action in refs.actions:
        try:
            resolved = resolve_sidecar(storage, log_dir, action)
        except SidecarPathInvalid as exc:
            problems.append(f"{checkpoint}: {exc.message}")
            continue
        info = storage.stat(resolved.path)
        recorded = action.get("sizeInBytes")
        if info is None:
            problems.append(f"{checkpoint} references {resolved.name}, which does not exist")
        elif recorded is not None and int(recorded) != info.size:
            problems.append(
                f"{checkpoint} references {resolved.name} with sizeInBytes {recorded}, but it has {info.size} bytes"
            )
    detail = (
        f"{len(refs.actions)} sidecar reference(s) of {len(refs.checkpoints)} remaining checkpoint file(s) "
        "resolve to existing files of the recorded size"
        if not problems
        else "; ".join(problems)
    )
    return InvariantCheck("every sidecar of every remaining checkpoint exists", None, not problems, detail)


def _compare(
    version: int, before: Callable[[int], TableState], after: Callable[[int], TableState]
) -> str | None:
    try:
        old = before(version)
    except CheckpointError as exc:
        return f"version {version} is not readable before the cleanup: {exc}"
    try:
        new = after(version)
    except CheckpointError as exc:
        return f"version {version} would become unreadable: {exc}"
    if old.comparable() != new.comparable():
        return f"version {version} would change ({state_diff(old, new)})"
    return None


def state_diff(before: TableState, after: TableState) -> str:
    """The top-level fields in which two states differ."""
    a, b = before.comparable(), after.comparable()
    return ", ".join(k for k in a if a.get(k) != b.get(k))


def state_unchanged(
    versions: list[int],
    before: Callable[[int], TableState],
    after: Callable[[int], TableState],
    progress: Progress,
) -> InvariantCheck:
    """CKPT-CLEAN-012: each version reads the same with and without the planned deletions.

    ``before(v)`` / ``after(v)`` replay version ``v`` from the real listing / from the listing
    without the deleted files; a :class:`~reference_impl.errors.CheckpointError` is a failed check.
    """
    problems: list[str] = []
    for version in versions:
        with progress.phase(f"verify version {version} without the deleted files"):
            problem = _compare(version, before, after)
        if problem is not None:
            problems.append(problem)
    detail = (
        f"the reader reconstructs the same state at version(s) {versions} with and without the deleted files"
        if not problems
        else "; ".join(problems)
    )
    return InvariantCheck("the state of the kept versions is unchanged", None, not problems, detail)
