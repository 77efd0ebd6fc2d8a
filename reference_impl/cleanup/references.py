"""Which sidecars the checkpoints that remain after a cleanup still reference.

Spec: ``spec/checkpoints.md`` §18.3 Sidecar garbage collection (``CKPT-CLEAN-013``: a referenced
sidecar is never deleted), §19.1 Sidecar paths. The paths are interpreted by
:mod:`reference_impl.read.sidecars`, the same code the reader uses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reference_impl.errors import CheckpointCorrupt
from reference_impl.log.naming import parse_log_file_name
from reference_impl.read.sidecars import read_sidecar_actions, reference_names
from reference_impl.storage import FileInfo, Location, Storage
from spec.vocabulary import LogFileKind


@dataclass
class References:
    """Sidecar references of the checkpoints that remain after the plan."""

    by_sidecar: dict[str, list[str]] = field(default_factory=dict)  # bare name -> checkpoint files
    actions: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (checkpoint, action)
    unreadable: list[str] = field(default_factory=list)
    checkpoints: list[str] = field(default_factory=list)

    @property
    def skipped_reason(self) -> str | None:
        """Why sidecar collection must be skipped (a remaining checkpoint could not be read), if it must."""
        return "cannot read " + "; ".join(self.unreadable) if self.unreadable else None


def collect_references(storage: Storage, log_dir: Location, remaining: Iterable[FileInfo]) -> References:
    """The ``sidecar`` actions of every remaining classic- or UUID-named top-level file (0-byte ones skipped).

    A file that does not parse is recorded in :attr:`References.unreadable`; the store failing to read
    one raises its ``STORAGE_ERROR`` naming the file (the cleaner reads these before it deletes anything).
    """
    refs = References()
    for info in remaining:
        parsed = parse_log_file_name(info.name)
        if parsed.kind not in (LogFileKind.CHECKPOINT_CLASSIC, LogFileKind.CHECKPOINT_UUID) or info.size == 0:
            continue
        refs.checkpoints.append(info.name)
        try:
            actions = read_sidecar_actions(storage, log_dir, info.name)
        except CheckpointCorrupt as exc:
            refs.unreadable.append(f"{info.name}: {exc.message}")
            continue
        for action in actions:
            refs.actions.append((info.name, action))
            for alias in reference_names(str(action.get("path", ""))):
                refs.by_sidecar.setdefault(alias, []).append(info.name)
    return refs
