"""What a cleanup did, or would do: :class:`CleanupResult` (the ``--json`` document of ``delta-ckpt cleanup``).

The JSON keys and values keep their published names; the enums below give the closed sets of
values their types.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from reference_impl.cleanup.invariants import InvariantCheck
from reference_impl.cleanup.plan import FileDecision, format_ms
from spec.vocabulary import LogFileKind

#: Kinds reported in their own section, not among the log files.
_OWN_SECTIONS = (LogFileKind.SIDECAR, LogFileKind.STAGING)


class CleanupStatus(enum.StrEnum):
    """How a cleanup ended."""

    DONE = "done"
    DRY_RUN = "dry-run"
    DISABLED = "disabled"
    NOTHING_TO_DELETE = "nothing-to-delete"
    NO_CUTOFF_CHECKPOINT = "no-cutoff-checkpoint"


class CompatAction(enum.StrEnum):
    """What became of the compatibility checkpoint (spec §13)."""

    CREATED = "created"
    WOULD_CREATE = "would-create"
    EXISTS = "exists"
    NOT_NEEDED = "not-needed"


@dataclass
class CompatCheckpoint:
    """The compatibility checkpoint decision (and what became of it)."""

    action: CompatAction
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
    """What :func:`~reference_impl.cleanup.cleaner.cleanup` did or would do."""

    table: str
    status: CleanupStatus
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
        return [d for d in self.deleted if d.kind not in _OWN_SECTIONS]

    @property
    def kept_log_files(self) -> list[FileDecision]:
        return [d for d in self.kept if d.kind not in _OWN_SECTIONS]

    @property
    def deleted_sidecars(self) -> list[FileDecision]:
        return [d for d in self.deleted if d.kind is LogFileKind.SIDECAR]

    @property
    def kept_sidecars(self) -> list[FileDecision]:
        return [d for d in self.kept if d.kind is LogFileKind.SIDECAR]

    @property
    def deleted_staging(self) -> list[FileDecision]:
        """Abandoned writer staging directories deleted, each with everything in it (``CKPT-CLEAN-025``)."""
        return [d for d in self.deleted if d.kind is LogFileKind.STAGING]

    @property
    def kept_staging(self) -> list[FileDecision]:
        return [d for d in self.kept if d.kind is LogFileKind.STAGING]

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
            "kept": [d.to_json() for d in self.kept_log_files],
            "sidecars": {
                "deleted": [d.to_json() for d in self.deleted_sidecars],
                "kept": [d.to_json() for d in self.kept_sidecars],
            },
            "staging": {
                "deleted": [d.to_json() for d in self.deleted_staging],
                "kept": [d.to_json() for d in self.kept_staging],
            },
            "alreadyGone": self.already_gone,
            "invariants": [c.to_json() for c in self.invariants],
            "verifiedVersions": self.verified_versions,
            "notes": self.notes,
            "timingsSeconds": self.timings,
        }
