"""What a checkpoint write did: the published files and the ``_last_checkpoint`` document.

:class:`CheckpointResult` is also the ``--json`` output of ``delta-ckpt checkpoint``; its keys keep
their published names (``manifest`` is the top-level file format of a UUID-named checkpoint).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from spec.vocabulary import CheckpointNaming, CheckpointSpec, TopLevelFormat


class FileRole(enum.StrEnum):
    """What a written file is in its checkpoint."""

    TOP_LEVEL = "top-level"
    PART = "part"
    SIDECAR = "sidecar"


@dataclass(frozen=True)
class WrittenFile:
    """A published file: name relative to ``_delta_log``, size, mtime, and its action counts."""

    name: str
    role: FileRole
    size_in_bytes: int
    modification_time: int
    rows: int
    adds: int
    removes: int
    kept_existing: bool = False
    #: Sidecars: the least ``remove.deletionTimestamp`` in the file (None: no tombstone has one).
    oldest_tombstone: int | None = None
    #: Sidecars of an incremental checkpoint: the tag value of the file's name set (None: it has none;
    #: :mod:`~reference_impl.write.name_sets`).
    name_set: str | None = None

    @property
    def base_name(self) -> str:
        """The bare file name (a sidecar's ``name`` is ``_sidecars/<base name>``)."""
        return self.name.rsplit("/", 1)[-1]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "role": self.role,
            "sizeInBytes": self.size_in_bytes,
            "modificationTime": self.modification_time,
            "rows": self.rows,
            "adds": self.adds,
            "removes": self.removes,
        }
        if self.kept_existing:
            out["keptExisting"] = True
        return out


@dataclass
class CheckpointResult:
    """What :func:`~reference_impl.write.writer.write_checkpoint` did."""

    table: str
    version: int
    spec: CheckpointSpec
    naming: CheckpointNaming
    top_level_format: TopLevelFormat | None  # UUID-named checkpoints only
    files: list[WrittenFile]
    num_add_files: int
    num_remove_files: int
    num_non_file_actions: int
    last_checkpoint: dict[str, Any] | None
    last_checkpoint_skipped: str | None
    timings: dict[str, float]

    @property
    def top_level(self) -> list[WrittenFile]:
        return [f for f in self.files if f.role is not FileRole.SIDECAR]

    @property
    def sidecars(self) -> list[WrittenFile]:
        return [f for f in self.files if f.role is FileRole.SIDECAR]

    @property
    def num_actions(self) -> int:
        return sum(f.rows for f in self.files)

    @property
    def size_in_bytes(self) -> int:
        return sum(f.size_in_bytes for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "version": self.version,
            "spec": self.spec,
            "naming": self.naming,
            "manifest": self.top_level_format,
            "numActions": self.num_actions,
            "numAddFiles": self.num_add_files,
            "numRemoveFiles": self.num_remove_files,
            "numNonFileActions": self.num_non_file_actions,
            "sizeInBytes": self.size_in_bytes,
            "files": [f.to_json() for f in self.files],
            "lastCheckpoint": self.last_checkpoint,
            "lastCheckpointSkipped": self.last_checkpoint_skipped,
            "timingsSeconds": self.timings,
        }
