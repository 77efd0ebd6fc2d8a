"""The compatibility checkpoint: a classic-named copy of a UUID-named checkpoint, written before deleting.

Spec: ``spec/checkpoints.md`` §13 Compatibility checkpoints (``CKPT-COMPAT-002`` … ``-004``);
delta-spark ``MetadataCleanup.createSinglePartCheckpointForBackwardCompat``.

When the plan deletes at least one commit, checkpoint, checksum or compaction file, and the latest
version's checkpoint is UUID-named with no complete classic-named or multi-part checkpoint at its
version (:func:`decide`), the cleaner first publishes ``n.checkpoint.parquet``: the same
``checkpointMetadata``, the same ``sidecar`` actions (so no sidecar is copied) and the same
non-file actions (``CKPT-COMPAT-003``), written by the writer's own top-level-file path and
published create-if-absent (:func:`write`). It is then verified: read from a listing without the
UUID-named file, the version must use the copy and give the same state (``CKPT-COMPAT-002``); if
not, the copy is removed again and the cleanup fails with nothing deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reference_impl.cleanup.invariants import state_diff
from reference_impl.cleanup.result import CompatAction, CompatCheckpoint
from reference_impl.errors import CheckpointError, CleanupInvariantViolated
from reference_impl.log.listing import LogListing, classify
from reference_impl.log.naming import classic_checkpoint_name, parse_log_file_name
from reference_impl.progress import Progress
from reference_impl.read.snapshot import Snapshot
from reference_impl.write.writer import write_top_level_file
from spec.vocabulary import LogFileKind

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Replays a version from a listing (the cleaner's reader).
ReadVersion = Callable[[int, LogListing], Snapshot]


def decide(latest: Snapshot, listing: LogListing, deletes_log_files: bool) -> CompatCheckpoint:
    """Whether a compatibility checkpoint is needed (``CKPT-COMPAT-004``), and its name."""
    content = latest.checkpoint
    if content is None:
        return CompatCheckpoint(CompatAction.NOT_NEEDED, "the latest version is not read from a checkpoint")
    inst = content.instance
    if inst.kind is not LogFileKind.CHECKPOINT_UUID:
        return CompatCheckpoint(
            CompatAction.NOT_NEEDED,
            f"the newest checkpoint {inst.name} is {inst.kind}-named",
            inst.version,
            source=inst.name,
        )
    existing = [
        c
        for c in listing.checkpoints
        if c.version == inst.version
        and c.kind in (LogFileKind.CHECKPOINT_CLASSIC, LogFileKind.CHECKPOINT_PART)
    ]
    if existing:
        return CompatCheckpoint(
            CompatAction.EXISTS,
            f"{existing[-1].name} already exists at version {inst.version}",
            inst.version,
            existing[-1].name,
            inst.name,
            len(content.sidecars),
        )
    if not deletes_log_files:
        return CompatCheckpoint(
            CompatAction.NOT_NEEDED,
            "no commit, checkpoint, checksum or compaction file is deleted",
            inst.version,
            source=inst.name,
        )
    return CompatCheckpoint(
        CompatAction.WOULD_CREATE,
        f"would write a classic-named copy of {inst.name} referencing the same {len(content.sidecars)} sidecar(s) "
        "before deleting anything (CKPT-COMPAT-004)",
        inst.version,
        classic_checkpoint_name(inst.version),
        inst.name,
        len(content.sidecars),
    )


def write(
    spark: SparkSession,
    latest: Snapshot,
    listing: LogListing,
    decision: CompatCheckpoint,
    read_version: ReadVersion,
    progress: Progress,
) -> None:
    """Write the compatibility checkpoint ``decision`` asks for, verify it, and record what happened."""
    assert decision.version is not None and decision.name is not None
    origin = latest if decision.version == latest.version else read_version(decision.version, listing)
    if origin.checkpoint is None or origin.checkpoint.instance.name != decision.source:
        raise CleanupInvariantViolated(
            f"version {decision.version} is not read from {decision.source}; no compatibility checkpoint written, "
            "nothing was deleted",
            path=str(listing.log_dir),
            rule="CKPT-COMPAT-004",
        )
    decision.action, decision.reason = CompatAction.CREATED, decision.reason.replace("would write", "wrote")
    content = origin.checkpoint
    head: list[dict[str, Any]] = [
        {"checkpointMetadata": content.checkpoint_metadata or {"version": decision.version}}
    ]
    head += [{"sidecar": s.action} for s in content.sidecars]
    head += content.non_file_actions
    inline = content.file_actions if not content.sidecars and content.inline_file_actions else None
    with progress.phase(f"write compatibility checkpoint {decision.name}"):
        written = write_top_level_file(spark, origin, decision.name, head, inline)
    decision.size_in_bytes = written.size_in_bytes
    if written.kept_existing:
        decision.action, decision.reason = CompatAction.EXISTS, f"{decision.name} appeared meanwhile; kept"
    with progress.phase("verify the compatibility checkpoint"):
        problem = _verify(origin, decision, read_version)
    if problem is not None:
        log_dir = listing.log_dir
        if not written.kept_existing:
            origin.storage.delete(log_dir / decision.name)
        raise CleanupInvariantViolated(
            f"compatibility checkpoint {decision.name}: {problem}; removed it, nothing was deleted",
            path=str(log_dir / decision.name),
            rule="CKPT-COMPAT-002",
        )


def _verify(origin: Snapshot, decision: CompatCheckpoint, read_version: ReadVersion) -> str | None:
    """Read the version without its UUID-named file: it must use the copy and give the same state."""
    assert decision.version is not None
    log_dir = origin.listing.log_dir
    files = origin.storage.list_dir(log_dir)
    uuid_names = {
        f.name
        for f in files
        if (p := parse_log_file_name(f.name)).kind is LogFileKind.CHECKPOINT_UUID
        and p.version == decision.version
    }
    view = classify(log_dir, [f for f in files if f.name not in uuid_names])
    try:
        snap = read_version(decision.version, view)
        after = snap.table_state(include_source=False)
        used = snap.checkpoint.instance.name if snap.checkpoint else None
        if used != decision.name:
            return f"without the UUID-named file the reader uses {used}, not {decision.name}"
        before = origin.table_state(include_source=False)
        if before.comparable() != after.comparable():
            return f"it describes another state ({state_diff(before, after)})"
    except CheckpointError as exc:
        return f"it cannot be read: {exc}"
    return None
