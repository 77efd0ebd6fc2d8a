"""The storage contract: the few file operations the reader, writer and cleaner need, and their guarantees.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``: a top-level file appears
atomically and never replaces an existing one), §18 Metadata cleanup (listings with sizes and
modification times) and §19.4 Stores.

Every file operation of ``reference_impl`` goes through a :class:`Storage`, chosen for a table
location by :func:`reference_impl.storage.factory.storage_for`. Checkpoint parts and other staged
files are written by Spark executors straight to the table's store, which they reach through
:meth:`~reference_impl.storage.location.Location.spark_uri` (with :meth:`Storage.spark_conf`);
sidecars by the writer's Spark tasks through the store's :meth:`Storage.task_sink`
(:mod:`~reference_impl.storage.sinks`); everything the driver does itself is here. No operation uses the driver's local disk for a file
of a table on another store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, BinaryIO, Protocol

from reference_impl.storage.location import Location

if TYPE_CHECKING:
    from reference_impl.storage.sinks import TaskSink


@dataclass(frozen=True)
class FileInfo:
    """A file seen in a listing: bare name, byte length, modification time (ms since epoch)."""

    name: str
    size: int
    mtime_ms: int


@dataclass(frozen=True)
class StorageGuarantees:
    """What a store promises. The writer refuses a store that cannot publish safely (``CKPT-WRITE-006``).

    * ``atomic_create`` — :meth:`Storage.write_new` and :meth:`Storage.publish_new` make a complete
      file appear at once and never replace an existing one (create-if-absent);
    * ``atomic_replace`` — :meth:`Storage.write_replace` shows readers the old or the new file, never
      a mix (``_last_checkpoint``);
    * ``consistent_listing`` — a listing shows every file whose creation finished before it began;
    * ``partial_writes_visible`` — a file being written can be seen at its name before it is complete
      (HDFS), so nothing is ever written at a final name directly;
    * ``rename`` — :meth:`Storage.publish_new` is a metadata operation; without it a staged file is
      copied (server-side where the store can) or re-uploaded;
    * ``mtime_resolution_ms`` — the granularity of listed modification times (1,000 on S3: equal
      times are common, and a time is the start of its second).
    """

    atomic_create: bool
    atomic_replace: bool
    consistent_listing: bool
    partial_writes_visible: bool = False
    rename: bool = True
    mtime_resolution_ms: int = 1


class Storage(Protocol):
    """File operations on one kind of store (local files, Hadoop file systems, S3-compatible object stores).

    Locations are :class:`~reference_impl.storage.location.Location`\\ s of this store. Errors of the
    store (unreachable, denied, missing bucket, …) are :class:`~reference_impl.errors.StorageError`\\ s
    naming the location; "not there" is not an error (``None``, ``[]``, ``False``).
    """

    guarantees: StorageGuarantees
    #: Whether :meth:`delete_many` deletes in one request what :meth:`delete` would in many (an object
    #: store's DeleteObjects), so the cleaner deletes in batches (:func:`reference_impl.cleanup.cleaner._batches`).
    batched_deletes: bool

    def spark_conf(self) -> Mapping[str, str]:
        """Hadoop configuration Spark needs to reach this store (e.g. ``fs.s3a.*`` from the storage options)."""
        ...

    def list_dir(self, directory: Location) -> list[FileInfo]:
        """Files (not directories) directly in ``directory``, sorted by name; ``[]`` if it is missing.

        A symbolic link is listed only when its target is directly in ``directory`` too
        (``CKPT-READ-025``): no caller ever reads or deletes a file elsewhere through a listing.
        """
        ...

    def list_subdirs(self, directory: Location) -> list[str]:
        """Names of the directories directly in ``directory``, sorted; ``[]`` if it is missing."""
        ...

    def list_tree(self, directory: Location) -> list[FileInfo]:
        """Every file under ``directory`` at any depth, named relative to it (``a/b.parquet``), sorted by name.

        What :meth:`remove_tree` would delete (``CKPT-CLEAN-025``): directory links are not entered
        (:func:`walk_tree`); on an object store only objects count — a prefix with no object under it
        is no file.
        """
        ...

    def stat(self, location: Location) -> FileInfo | None:
        """The file at ``location``, or ``None`` when there is none (a directory, or a symbolic link whose
        target is not directly in ``location``'s own directory, is no file there: ``CKPT-READ-025``)."""
        ...

    def dir_mtime(self, directory: Location) -> int | None:
        """When the directory ``directory`` last changed (an entry created or removed directly in it), in
        milliseconds; ``None`` when it is no directory, and always on an object store (a directory is a
        name prefix there, with no time of its own)."""
        ...

    def real(self, location: Location) -> Location:
        """Where ``location`` really is: symbolic links resolved (itself on a store without links)."""
        ...

    def is_dir(self, location: Location) -> bool:
        """Whether ``location`` is a directory (on an object store: whether any key is under it)."""
        ...

    def can_write(self, directory: Location) -> bool:
        """Whether files can be created in ``directory`` (an object store tries it with a hidden probe)."""
        ...

    def read_bytes(self, location: Location) -> bytes: ...

    def open_read(self, location: Location) -> BinaryIO:
        """A seekable binary stream (for Parquet footers); the caller closes it."""
        ...

    def write_new(self, location: Location, data: bytes) -> FileInfo:
        """Publish ``data`` at ``location`` only if nothing is there (atomic create-if-absent).

        Raises :class:`FileExistsError` if ``location`` exists; never replaces it.
        """
        ...

    def publish_new(self, staged: Location, target: Location, *, unique_name: bool = False) -> FileInfo:
        """Move the complete file ``staged`` to ``target`` unless ``target`` exists (:class:`FileExistsError`).

        ``unique_name``: the caller vouches that no other writer uses ``target`` (a UUID-named
        top-level file), so a store without an atomic copy-if-absent may copy the file
        server-side after checking that ``target`` is free, instead of re-uploading it.
        """
        ...

    def task_sink(self, directory: Location) -> TaskSink:
        """Where Spark tasks create files in ``directory`` at their final names, create-if-absent
        (:mod:`~reference_impl.storage.sinks`); a ``StorageError`` on a store that has no sink."""
        ...

    def write_replace(self, location: Location, data: bytes) -> FileInfo:
        """Atomically replace ``location`` with ``data`` (readers see the old or the new file)."""
        ...

    def copy(self, source: Location, target: Location) -> None: ...

    def set_mtime(self, location: Location, mtime_ms: int) -> None:
        """Set a file's modification time (deterministic fixtures); a ``StorageError`` where the store cannot."""
        ...

    def delete(self, location: Location) -> bool:
        """Delete ``location``; ``False`` if it was already gone."""
        ...

    def delete_many(self, locations: Iterable[Location]) -> None:
        """Delete files in no particular order, batched where the store can; missing ones are no error."""
        ...

    def mkdirs(self, directory: Location) -> None: ...

    def remove_tree(self, directory: Location) -> None:
        """Remove ``directory`` and everything under it (what :meth:`list_tree` lists); no error if it is gone."""
        ...


def newest_dir_mtime(storage: Storage, directory: Location) -> int | None:
    """The newest :meth:`Storage.dir_mtime` of ``directory`` and of every directory under it (links not
    entered); ``None`` when any of them has none — a store without directory times (``CKPT-CLEAN-025``)."""
    times: list[int | None] = []
    todo = [directory]
    while todo:
        where = todo.pop()
        times.append(storage.dir_mtime(where))
        todo += [where / d for d in storage.list_subdirs(where)]
    return None if None in times else max(t for t in times if t is not None)


def walk_tree(storage: Storage, directory: Location) -> list[FileInfo]:
    """:meth:`Storage.list_tree` through :meth:`~Storage.list_dir` and :meth:`~Storage.list_subdirs`.

    A directory link is not listed by ``list_subdirs``, so never entered.
    """
    out: list[FileInfo] = []
    todo = [""]
    while todo:
        sub = todo.pop()
        where = directory / sub if sub else directory
        out += [replace(f, name=f"{sub}/{f.name}" if sub else f.name) for f in storage.list_dir(where)]
        todo += [f"{sub}/{d}" if sub else d for d in storage.list_subdirs(where)]
    return sorted(out, key=lambda f: f.name)
