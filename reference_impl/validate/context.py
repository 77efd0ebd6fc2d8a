"""The table as the checks see it: one listing of ``_delta_log`` and ``_sidecars``, read once.

Spec: ``spec/checkpoints.md`` §4 File naming, §12 Sidecar files, §14 The last-checkpoint file.

:class:`TableView` lists the log and the sidecar directory once, classifies the log with the
reader's own :func:`~reference_impl.log.listing.classify`, and reads each checkpoint file at most
once (:meth:`TableView.summary`), so checks of different areas share the reads. Nothing here writes.
With a ``version`` (``delta-ckpt validate --version N``) the per-checkpoint checks see only the
checkpoints of that version (:attr:`TableView.checkpoints`, :meth:`TableView.in_scope`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from reference_impl.errors import CheckpointError
from reference_impl.log.listing import CheckpointInstance, LogListing, classify
from reference_impl.log.naming import LAST_CHECKPOINT, SIDECAR_DIR, name_set_owner
from reference_impl.log.table import Table
from reference_impl.read.sidecars import ResolvedSidecar, resolve_sidecar, sidecars_dir_is_own
from reference_impl.storage import FileInfo, Location, SessionSource
from reference_impl.validate.files import FileSummary, summarise
from spec.error_codes import ErrorCode
from spec.vocabulary import LogFileKind


def log_path(name: str) -> str:
    """A file of ``_delta_log`` as findings name it (relative to the table root)."""
    return f"_delta_log/{name}"


def sidecar_path(name: str) -> str:
    return f"_delta_log/{SIDECAR_DIR}/{name}"


@dataclass(frozen=True)
class SidecarReference:
    """One ``sidecar`` action of a checkpoint: resolved to a file, or why it cannot be."""

    action: dict[str, Any]
    resolved: ResolvedSidecar | None
    error: CheckpointError | None
    info: FileInfo | None  # the file, when it exists


@dataclass
class TableView:
    """One listing of a table's log, and the checkpoint files read on demand."""

    table: Table
    log_files: list[FileInfo]
    sidecar_files: list[FileInfo]
    session: SessionSource | None = None  # Spark, for the state check only
    sidecars_linked_out: bool = False  # _sidecars is a symbolic link leading out of _delta_log/
    version: int | None = None  # only the checkpoints of this version are checked (None: all)
    states_compared: int = 0
    _summaries: dict[str, FileSummary] = field(default_factory=dict)
    _references: dict[str, list[SidecarReference]] = field(default_factory=dict)

    @classmethod
    def scan(
        cls, table: Table, session: SessionSource | None = None, version: int | None = None
    ) -> TableView:
        """List ``_delta_log`` and ``_sidecars`` once; a ``_sidecars`` linked out of the table is not listed."""
        storage, log_dir = table.storage, table.log_dir
        own = sidecars_dir_is_own(storage, log_dir)
        sidecars = storage.list_dir(log_dir / SIDECAR_DIR) if own else []
        return cls(
            table, storage.list_dir(log_dir), sidecars, session, sidecars_linked_out=not own, version=version
        )

    @property
    def log_dir(self) -> Location:
        return self.table.log_dir

    @cached_property
    def listing(self) -> LogListing:
        return classify(self.log_dir, self.log_files)

    def in_scope(self, version: int | None) -> bool:
        """Whether a checkpoint file of ``version`` is checked (every one without :attr:`version`)."""
        return self.version is None or version == self.version

    @property
    def checkpoints(self) -> tuple[CheckpointInstance, ...]:
        """The complete checkpoints the per-checkpoint checks look at, ascending."""
        return tuple(c for c in self.listing.checkpoints if self.in_scope(c.version))

    @cached_property
    def sidecars_in_scope(self) -> list[FileInfo]:
        """The files of ``_sidecars/`` checked on their own: all, or with :attr:`version` those its
        checkpoints reference."""
        if self.version is None:
            return self.sidecar_files
        named = {r.resolved.name for c in self.checkpoints for r in self.sidecar_references(c) if r.resolved}
        return [f for f in self.sidecar_files if f.name in named]

    @property
    def sidecar_file_count(self) -> int:
        """How many of :attr:`sidecars_in_scope` are sidecar files: not hidden (a Hadoop ``.crc``), not a
        name set (``<sidecar>.names``, ``CKPT-INC-007``)."""
        return sum(
            1 for f in self.sidecars_in_scope if not f.name.startswith(".") and name_set_owner(f.name) is None
        )

    @cached_property
    def last_checkpoint_text(self) -> bytes | None:
        """The bytes of ``_last_checkpoint`` (``None`` when there is none)."""
        if self.listing.last_checkpoint_file is None:
            return None
        return self.table.storage.read_bytes(self.log_dir / LAST_CHECKPOINT)

    def summary(self, info: FileInfo, *, sidecar: bool = False) -> FileSummary:
        """The file ``info`` of ``_delta_log`` (or of ``_sidecars`` with ``sidecar``), read once."""
        key = sidecar_path(info.name) if sidecar else log_path(info.name)
        if key not in self._summaries:
            directory = self.log_dir / SIDECAR_DIR if sidecar else self.log_dir
            self._summaries[key] = summarise(self.table.storage, directory / info.name, info)
        return self._summaries[key]

    def top_level(self, instance: CheckpointInstance) -> list[FileSummary]:
        """The top-level file (or every part) of ``instance``."""
        return [self.summary(f) for f in instance.files]

    def non_file_actions(self, instance: CheckpointInstance) -> list[dict[str, Any]]:
        return [a for s in self.top_level(instance) for a in s.non_file_actions]

    def sidecar_references(self, instance: CheckpointInstance) -> list[SidecarReference]:
        """The ``sidecar`` actions of ``instance``'s top-level file(s), resolved as the reader resolves them (once)."""
        if instance.name not in self._references:
            self._references[instance.name] = self._resolve_references(instance)
        return self._references[instance.name]

    def _resolve_references(self, instance: CheckpointInstance) -> list[SidecarReference]:
        out = []
        for action in self.non_file_actions(instance):
            if "sidecar" not in action:
                continue
            body = action["sidecar"]
            try:
                resolved = resolve_sidecar(self.table.storage, self.log_dir, body)
            except CheckpointError as exc:
                out.append(SidecarReference(body, None, exc, None))
                continue
            info = self.table.storage.stat(resolved.path)
            out.append(SidecarReference(body, resolved, None, info))
        return out

    def is_v2(self, instance: CheckpointInstance) -> bool:
        """Whether ``instance`` follows the V2 spec: UUID-named, or holding a ``checkpointMetadata`` action."""
        if instance.kind is LogFileKind.CHECKPOINT_UUID:
            return True
        return any("checkpointMetadata" in a for a in self.non_file_actions(instance))

    def unreadable(self, instance: CheckpointInstance) -> bool:
        return any(s.error for s in self.top_level(instance))

    def protocol(self, instance: CheckpointInstance) -> dict[str, Any] | None:
        """The checkpoint's own ``protocol`` action (the first, if it has several)."""
        found = [a["protocol"] for a in self.non_file_actions(instance) if "protocol" in a]
        return found[0] if found else None


def feature_list(protocol: dict[str, Any], key: str) -> list[str]:
    """``protocol[key]`` (``readerFeatures`` or ``writerFeatures``) as a list of names; anything else is empty."""
    value = protocol.get(key)
    return [str(v) for v in value] if isinstance(value, list) else []


def supports_v2(protocol: dict[str, Any] | None) -> bool:
    """Whether a protocol action supports the ``v2Checkpoint`` table feature."""
    if protocol is None:
        return False
    return "v2Checkpoint" in [
        *feature_list(protocol, "readerFeatures"),
        *feature_list(protocol, "writerFeatures"),
    ]


#: The reader's error code for a file that cannot be read as a checkpoint file.
UNREADABLE = ErrorCode.CHECKPOINT_CORRUPT
