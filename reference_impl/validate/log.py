"""LOG checks: the commits that remain form one run, starting at 0 or at a complete checkpoint; known reader features.

Spec: ``spec/checkpoints.md`` §18 Metadata cleanup (``CKPT-CLEAN-001``: the oldest remaining
commit is at a complete checkpoint's version; ``CKPT-CLEAN-002``: no gap). A gap is what a reader
reports as ``LOG_GAP`` (``CKPT-READ-006``) for every version past it. §7 (``CKPT-FEAT-006``): a
reader feature the reference reader does not implement stops every state check.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from reference_impl.errors import CheckpointError
from reference_impl.log.naming import commit_name
from reference_impl.read.snapshot import SUPPORTED_READER_FEATURES
from reference_impl.validate.context import TableView, feature_list, log_path
from reference_impl.validate.finding import Finding
from spec.error_codes import ErrorCode


def check_commit_run(view: TableView) -> Iterator[Finding]:
    """No missing commit between the oldest and the newest; the oldest is 0 or a complete checkpoint's version."""
    versions = sorted(view.listing.commits)
    if not versions:
        return
    missing = sorted(set(range(versions[0], versions[-1] + 1)) - set(versions))
    if missing:
        yield Finding(
            "LOG",
            "CKPT-CLEAN-002",
            log_path(commit_name(missing[0])),
            "absent"
            if len(missing) == 1
            else f"absent, with {len(missing) - 1} more up to version {missing[-1]}",
            f"commits {versions[0]}..{versions[-1]} have a gap: versions after it cannot be read",
            ErrorCode.LOG_GAP,
        )
    oldest = versions[0]
    if oldest > 0 and not any(c.version == oldest for c in view.listing.checkpoints):
        yield Finding(
            "LOG",
            "CKPT-CLEAN-001",
            log_path(commit_name(oldest)),
            f"oldest commit {oldest}",
            "after commits were deleted, the oldest remaining one must be at the version of a complete checkpoint",
        )


def latest_protocol(view: TableView) -> tuple[str, dict[str, Any]] | None:
    """The newest ``protocol`` action and the file it is in: from the commits after the newest
    readable complete checkpoint (newest first), else from that checkpoint; ``None`` if there is none."""
    readable = [c for c in view.listing.checkpoints if not view.unreadable(c)]
    start = readable[-1].version + 1 if readable else 0
    for version in sorted((v for v in view.listing.commits if v >= start), reverse=True):
        try:
            text = view.table.storage.read_bytes(view.log_dir / commit_name(version)).decode("utf-8")
        except (UnicodeDecodeError, CheckpointError):
            continue
        for line in reversed(text.splitlines()):
            if '"protocol"' not in line:
                continue
            try:
                action = json.loads(line)
            except ValueError:
                continue
            if isinstance(action, dict) and isinstance(action.get("protocol"), dict):
                return log_path(commit_name(version)), action["protocol"]
    if readable:
        protocol = view.protocol(readable[-1])
        if protocol is not None:
            return log_path(readable[-1].name), protocol
    return None


def check_reader_features(view: TableView) -> Iterator[Finding]:
    """The latest protocol lists only reader features the reference reader implements (else the state
    of the table cannot be checked, and every reader without the feature must refuse it)."""
    found = latest_protocol(view)
    if found is None:
        return
    where, protocol = found
    unknown = sorted(set(feature_list(protocol, "readerFeatures")) - SUPPORTED_READER_FEATURES)
    if unknown:
        yield Finding(
            "LOG",
            "CKPT-FEAT-006",
            where,
            ", ".join(unknown),
            "the reference reader does not implement these reader features: the table cannot be read or its state checked",
            ErrorCode.UNSUPPORTED_READER_FEATURE,
        )
