"""The local file system, with the atomicity the writer and cleaner rely on.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``) and §18 Metadata cleanup.

| operation | how |
|---|---|
| :meth:`LocalStorage.write_new` | temp file + fsync + hard link: a half-written file is never visible and an existing file is never replaced |
| :meth:`LocalStorage.publish_new` | hard link of a complete file to its final name (create-if-absent), then the directory is synced |
| :meth:`LocalStorage.write_replace` | temp file + fsync + atomic rename over the target (``_last_checkpoint``) |
| :meth:`LocalStorage.list_dir` | one listing with sizes and modification times in milliseconds |

Locations are local paths or ``file:`` URIs.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlparse

from reference_impl.errors import StorageError
from reference_impl.storage.base import FileInfo, StorageGuarantees


def temp_name(final_name: str, token: uuid.UUID) -> str:
    """A hidden temp-file name next to ``final_name`` (``.<final>.<uuid>.tmp``, as delta-spark)."""
    return f".{final_name}.{token}.tmp"


class LocalStorage:
    """The local file system (see the module docs)."""

    guarantees = StorageGuarantees(atomic_create=True, atomic_replace=True, consistent_listing=True)

    def resolve(self, location: str | Path) -> Path:
        text = os.fspath(location)
        if text.startswith("file:"):
            return Path(unquote(urlparse(text).path))
        return Path(text)

    def uri(self, path: Path) -> str:
        return path.resolve().as_uri()

    def list_dir(self, directory: Path) -> list[FileInfo]:
        out: list[FileInfo] = []
        for entry in self._scan(directory):
            try:
                if not entry.is_file(follow_symlinks=True):
                    continue
                st = entry.stat()
            except FileNotFoundError:  # deleted between scandir and stat
                continue
            out.append(FileInfo(entry.name, st.st_size, st.st_mtime_ns // 1_000_000))
        out.sort(key=lambda f: f.name)
        return out

    def list_subdirs(self, directory: Path) -> list[str]:
        return sorted(e.name for e in self._scan(directory) if e.is_dir(follow_symlinks=False))

    def _scan(self, directory: Path) -> list[os.DirEntry[str]]:
        try:
            return list(os.scandir(directory))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StorageError(f"cannot list directory: {exc.strerror}", path=str(directory)) from exc

    def stat(self, path: Path) -> FileInfo | None:
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        return FileInfo(path.name, st.st_size, st.st_mtime_ns // 1_000_000)

    def is_dir(self, path: Path) -> bool:
        return path.is_dir()

    def can_write(self, directory: Path) -> bool:
        return os.access(directory, os.W_OK)

    def read_bytes(self, path: Path) -> bytes:
        try:
            return path.read_bytes()
        except OSError as exc:
            raise StorageError(f"cannot read file: {exc.strerror}", path=str(path)) from exc

    def open_read(self, path: Path) -> BinaryIO:
        return open(path, "rb")

    def _write_temp(self, final: Path, data: bytes) -> Path:
        tmp = final.with_name(temp_name(final.name, uuid.uuid4()))
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

    def _published(self, path: Path) -> FileInfo:
        info = self.stat(path)
        if info is None:
            raise StorageError("published file vanished", path=str(path))
        return info

    def write_new(self, path: Path, data: bytes) -> FileInfo:
        return self.publish_new(self._write_temp(path, data), path)

    def publish_new(self, staged: Path, path: Path) -> FileInfo:
        try:
            os.link(staged, path)
        except FileExistsError:
            raise
        except OSError as exc:
            raise StorageError(f"cannot publish: {exc.strerror}", path=str(path)) from exc
        finally:
            staged.unlink(missing_ok=True)
        self._sync_dir(path.parent)
        return self._published(path)

    def write_replace(self, path: Path, data: bytes) -> FileInfo:
        tmp = self._write_temp(path, data)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StorageError(f"cannot replace: {exc.strerror}", path=str(path)) from exc
        self._sync_dir(path.parent)
        return self._published(path)

    def copy(self, source: Path, target: Path) -> None:
        shutil.copyfile(source, target)

    def set_mtime(self, path: Path, mtime_ms: int) -> None:
        ns = mtime_ms * 1_000_000
        os.utime(path, ns=(ns, ns))

    def delete(self, path: Path) -> bool:
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise StorageError(f"cannot delete: {exc.strerror}", path=str(path)) from exc
        return True

    def mkdirs(self, directory: Path) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create directory: {exc.strerror}", path=str(directory)) from exc

    def remove_tree(self, directory: Path) -> None:
        shutil.rmtree(directory, ignore_errors=True)
