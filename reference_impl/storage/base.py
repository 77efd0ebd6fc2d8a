"""The storage contract: the few file operations the reader, writer and cleaner need, and their guarantees.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``: a top-level file appears
atomically and never replaces an existing one) and §18 Metadata cleanup (listings with sizes and
modification times).

Every file operation of ``reference_impl`` goes through a :class:`Storage`, chosen for a table
location by :func:`reference_impl.storage.factory.storage_for`. Data files, checkpoint parts and
sidecars are written by Spark executors, which reach any Hadoop file system through a URI
(:meth:`Storage.uri`); everything the driver does itself is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol


@dataclass(frozen=True)
class FileInfo:
    """A file seen in a listing: bare name, byte length, modification time (ms since epoch)."""

    name: str
    size: int
    mtime_ms: int


@dataclass(frozen=True)
class StorageGuarantees:
    """What a storage promises; the writer refuses a storage that cannot publish safely.

    * ``atomic_create`` — :meth:`Storage.publish_new` and :meth:`Storage.write_new` make a complete
      file appear at once, and never replace an existing one (create-if-absent);
    * ``atomic_replace`` — :meth:`Storage.write_replace` shows readers the old or the new file, never
      a mix (``_last_checkpoint``);
    * ``consistent_listing`` — a listing shows every file whose creation finished before it began.
    """

    atomic_create: bool
    atomic_replace: bool
    consistent_listing: bool


class Storage(Protocol):
    """File operations on one kind of location (local paths, later object stores)."""

    guarantees: StorageGuarantees

    def resolve(self, location: str | Path) -> Path:
        """The path of a table location given as this storage's path or URI."""
        ...

    def uri(self, path: Path) -> str:
        """The URI Spark reads or writes ``path`` with."""
        ...

    def list_dir(self, directory: Path) -> list[FileInfo]:
        """Files (not directories) directly in ``directory``, sorted by name; ``[]`` if it is missing."""
        ...

    def list_subdirs(self, directory: Path) -> list[str]:
        """Names of the directories directly in ``directory``, sorted; ``[]`` if it is missing."""
        ...

    def stat(self, path: Path) -> FileInfo | None:
        """The file at ``path``, or ``None`` when there is none."""
        ...

    def is_dir(self, path: Path) -> bool: ...

    def can_write(self, directory: Path) -> bool:
        """Whether files can be created in ``directory``."""
        ...

    def read_bytes(self, path: Path) -> bytes: ...

    def open_read(self, path: Path) -> BinaryIO:
        """A seekable binary stream (for Parquet footers); the caller closes it."""
        ...

    def write_new(self, path: Path, data: bytes) -> FileInfo:
        """Publish ``data`` at ``path`` only if nothing is there (atomic create-if-absent).

        Raises :class:`FileExistsError` if ``path`` exists; never replaces it.
        """
        ...

    def publish_new(self, staged: Path, path: Path) -> FileInfo:
        """Move a complete file (written by Spark or by :meth:`write_new`'s temp step) to ``path``
        unless ``path`` exists (:class:`FileExistsError`); returns the published file."""
        ...

    def write_replace(self, path: Path, data: bytes) -> FileInfo:
        """Atomically replace ``path`` with ``data`` (readers see the old or the new file)."""
        ...

    def copy(self, source: Path, target: Path) -> None: ...

    def set_mtime(self, path: Path, mtime_ms: int) -> None: ...

    def delete(self, path: Path) -> bool:
        """Delete ``path``; ``False`` if it was already gone."""
        ...

    def mkdirs(self, directory: Path) -> None: ...

    def remove_tree(self, directory: Path) -> None:
        """Remove ``directory`` and everything under it; no error if it is gone."""
        ...
