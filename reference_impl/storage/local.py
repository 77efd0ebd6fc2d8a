"""The local file system, with the atomicity the writer and cleaner rely on.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``) and §18 Metadata cleanup.

| operation | how |
|---|---|
| :meth:`LocalStorage.write_new` | temp file + fsync + hard link: a half-written file is never visible and an existing file is never replaced |
| :meth:`LocalStorage.publish_new` | hard link of a complete file to its final name (create-if-absent), then the directory is synced |
| :meth:`LocalStorage.write_replace` | temp file + fsync + atomic rename over the target (``_last_checkpoint``) |
| :meth:`LocalStorage.list_dir` | one listing with sizes and modification times in milliseconds |
| :meth:`LocalStorage.stat`, :meth:`LocalStorage.list_dir` | a symbolic link whose target is not directly in the link's own directory, and a directory, are no file there (``CKPT-READ-025``) |

Locations are ``file:`` :class:`~reference_impl.storage.location.Location`\\ s. A local table on a
cluster must be on a file system every executor mounts at the same path.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from stat import S_ISDIR
from typing import TYPE_CHECKING, BinaryIO

from reference_impl.errors import StorageError
from reference_impl.storage.base import FileInfo, StorageGuarantees, walk_tree
from reference_impl.storage.location import Location

if TYPE_CHECKING:
    from reference_impl.storage.sinks import TaskSink


def temp_name(final_name: str, token: uuid.UUID) -> str:
    """A hidden temp-file name next to ``final_name`` (``.<final>.<uuid>.tmp``, as delta-spark): the one
    name of every store that writes a file under a temporary first (this module,
    :mod:`~reference_impl.storage.hadoop`, :mod:`~reference_impl.storage.sinks`); in ``_sidecars`` a
    cleaner collects an old one (:func:`reference_impl.log.naming.is_sidecar_temp_name`, ``CKPT-CLEAN-027``)."""
    return f".{final_name}.{token}.tmp"


def is_temp_of(file_name: str, final_name: str) -> bool:
    """Whether ``file_name`` is a :func:`temp_name` of ``final_name`` (any token)."""
    return file_name.startswith(f".{final_name}.") and file_name.endswith(".tmp")


def _escapes(path: Path) -> bool:
    """Whether ``path`` is a symbolic link whose target is not directly in ``path``'s own directory."""
    if not path.is_symlink():
        return False
    return os.path.dirname(os.path.realpath(path)) != os.path.realpath(path.parent)


def _path(location: Location) -> Path:
    if not location.is_local:
        raise StorageError("not a local location", path=str(location))
    return Path(location.path)


class LocalStorage:
    """The local file system (see the module docs)."""

    guarantees = StorageGuarantees(atomic_create=True, atomic_replace=True, consistent_listing=True)
    batched_deletes = False

    def spark_conf(self) -> Mapping[str, str]:
        return {}

    def list_dir(self, directory: Location) -> list[FileInfo]:
        out: list[FileInfo] = []
        for entry in self._scan(directory):
            try:
                if not entry.is_file(follow_symlinks=True) or (
                    entry.is_symlink() and _escapes(Path(entry.path))
                ):
                    continue
                st = entry.stat()
            except FileNotFoundError:  # deleted between scandir and stat
                continue
            out.append(FileInfo(entry.name, st.st_size, st.st_mtime_ns // 1_000_000))
        out.sort(key=lambda f: f.name)
        return out

    def list_subdirs(self, directory: Location) -> list[str]:
        return sorted(e.name for e in self._scan(directory) if e.is_dir(follow_symlinks=False))

    def _scan(self, directory: Location) -> list[os.DirEntry[str]]:
        try:
            return list(os.scandir(_path(directory)))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StorageError(f"cannot list directory: {exc.strerror}", path=str(directory)) from exc

    def list_tree(self, directory: Location) -> list[FileInfo]:
        return walk_tree(self, directory)

    def stat(self, location: Location) -> FileInfo | None:
        path = _path(location)
        try:
            if not path.is_file() or _escapes(path):
                return None
            st = path.stat()
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:  # a name too long, a NUL byte, a component that is a file
            raise StorageError(f"cannot read the metadata: {exc}", path=str(location)) from exc
        return FileInfo(location.name, st.st_size, st.st_mtime_ns // 1_000_000)

    def dir_mtime(self, directory: Location) -> int | None:
        try:
            st = os.lstat(_path(directory))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StorageError(f"cannot read the metadata: {exc}", path=str(directory)) from exc
        return st.st_mtime_ns // 1_000_000 if S_ISDIR(st.st_mode) else None

    def real(self, location: Location) -> Location:
        return Location("file", "", os.path.realpath(_path(location)))

    def is_dir(self, location: Location) -> bool:
        return _path(location).is_dir()

    def can_write(self, directory: Location) -> bool:
        return os.access(_path(directory), os.W_OK)

    def read_bytes(self, location: Location) -> bytes:
        try:
            return _path(location).read_bytes()
        except OSError as exc:
            raise StorageError(f"cannot read file: {exc.strerror}", path=str(location)) from exc

    def open_read(self, location: Location) -> BinaryIO:
        try:
            return open(_path(location), "rb")
        except OSError as exc:
            raise StorageError(f"cannot read file: {exc.strerror}", path=str(location)) from exc

    def _write_temp(self, final: Location, data: bytes) -> Path:
        target = _path(final)
        tmp = target.with_name(temp_name(target.name, uuid.uuid4()))
        try:
            with open(tmp, "xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StorageError(f"cannot write: {exc.strerror}", path=str(final)) from exc
        return tmp

    def _sync_dir(self, directory: Path) -> None:
        try:
            fd = os.open(directory, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    def _published(self, location: Location) -> FileInfo:
        info = self.stat(location)
        if info is None:
            raise StorageError("published file vanished", path=str(location))
        return info

    def write_new(self, location: Location, data: bytes) -> FileInfo:
        return self._link(self._write_temp(location, data), location)

    def publish_new(self, staged: Location, target: Location, *, unique_name: bool = False) -> FileInfo:
        return self._link(_path(staged), target)

    def _link(self, staged: Path, target: Location) -> FileInfo:
        final = _path(target)
        try:
            os.link(staged, final)
        except FileExistsError:
            raise
        except OSError as exc:
            raise StorageError(f"cannot publish: {exc.strerror}", path=str(target)) from exc
        finally:
            staged.unlink(missing_ok=True)
        self._sync_dir(final.parent)
        return self._published(target)

    def task_sink(self, directory: Location) -> TaskSink:
        from reference_impl.storage.sinks import LocalSink

        _path(directory)
        return LocalSink(directory)

    def write_replace(self, location: Location, data: bytes) -> FileInfo:
        tmp = self._write_temp(location, data)
        try:
            os.replace(tmp, _path(location))
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StorageError(f"cannot replace: {exc.strerror}", path=str(location)) from exc
        self._sync_dir(tmp.parent)
        return self._published(location)

    def copy(self, source: Location, target: Location) -> None:
        try:
            shutil.copyfile(_path(source), _path(target))
        except OSError as exc:
            raise StorageError(f"cannot copy {source}: {exc.strerror}", path=str(target)) from exc

    def set_mtime(self, location: Location, mtime_ms: int) -> None:
        ns = mtime_ms * 1_000_000
        os.utime(_path(location), ns=(ns, ns))

    def delete(self, location: Location) -> bool:
        try:
            _path(location).unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise StorageError(f"cannot delete: {exc.strerror}", path=str(location)) from exc
        return True

    def delete_many(self, locations: Iterable[Location]) -> None:
        for location in locations:
            self.delete(location)

    def mkdirs(self, directory: Location) -> None:
        try:
            _path(directory).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create directory: {exc.strerror}", path=str(directory)) from exc

    def remove_tree(self, directory: Location) -> None:
        shutil.rmtree(_path(directory), ignore_errors=True)
