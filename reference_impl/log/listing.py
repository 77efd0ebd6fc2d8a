"""One listing of ``_delta_log``, classified: commits, complete checkpoints, and what is ignored.

Spec: ``spec/checkpoints.md`` §4.2 Names readers recognise and §16.2 Finding and choosing a
checkpoint (``CKPT-READ-*``); delta-spark ``Checkpoints.getLatestCompleteCheckpointFromList``.

Classification (:func:`classify`) is a pure function of a list of
:class:`~reference_impl.storage.base.FileInfo`:

* hidden files (``.``-prefixed temp and Hadoop ``.crc`` files), 0-byte checkpoint files and names
  no rule recognises are ignored;
* checkpoint files are grouped into instances. Complete instances: a classic or UUID-named file
  alone; a multi-part checkpoint whose part numbers are exactly ``1..p``;
* instances are ordered as delta-spark orders them — ``(version, format, numParts, fileName)``
  with format ``classic < multi-part < UUID-named``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from reference_impl.log.naming import LogFileName, parse_log_file_name
from reference_impl.storage import FileInfo, Location, Storage
from spec.vocabulary import LogFileKind

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

    def sort_key(self) -> tuple[int, int, int, str]:
        # delta-spark compares (version, format, numParts, fileName); Option None sorts first.
        name = self.name if self.kind is LogFileKind.CHECKPOINT_UUID else ""
        return (self.version, _FORMAT_ORDINAL[self.kind], self.num_parts or 0, name)


@dataclass(frozen=True)
class LogListing:
    """One listing of ``_delta_log``, classified."""

    log_dir: Location
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


def classify(log_dir: Location, files: Iterable[FileInfo]) -> LogListing:
    """Classify the files of one listing of ``log_dir`` (see the module docs for what is ignored).

    A pure function of the listing: the cleaner proves its plan by classifying the same listing
    without the files it plans to delete.
    """
    commits: dict[int, FileInfo] = {}
    crcs: dict[int, FileInfo] = {}
    compactions: list[tuple[LogFileName, FileInfo]] = []
    groups: dict[tuple[int, LogFileKind, int | None, str], list[tuple[LogFileName, FileInfo]]] = {}
    ignored: list[str] = []
    last_file: FileInfo | None = None
    for info in files:
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


def list_log(storage: Storage, log_dir: Location) -> LogListing:
    """List ``log_dir`` once and classify it."""
    return classify(log_dir, storage.list_dir(log_dir))
