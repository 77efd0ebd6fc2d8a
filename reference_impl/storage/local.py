"""File operations on a table's location, with the atomicity the writer and cleaner rely on.

Spec: ``spec/checkpoints.md`` § Writer rules (``CKPT-WRITE-*``: publication is atomic and never
replaces an existing file) and § Metadata cleanup.

| operation | guarantee |
|---|---|
| :meth:`LocalStorage.write_new` | create-if-absent: temp file + fsync + hard link; a half-written file is never visible and an existing file is never replaced |
| :meth:`LocalStorage.write_replace` | temp file + fsync + atomic rename over the target (``_last_checkpoint``) |
| :meth:`LocalStorage.list_dir` | one listing with sizes and modification times in milliseconds |

Paths are local paths or ``file:`` URIs. Data files and sidecars are written by Spark executors
(which reach any Hadoop file system); the driver-side operations here are local-file-system only —
a remote object store would need another implementation of the same few methods.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from reference_impl.errors import StorageError
from reference_impl.log.naming import temp_name


@dataclass(frozen=True)
class FileInfo:
    """A file seen in a listing: bare name, byte length, modification time (ms since epoch)."""

    name: str
    size: int
    mtime_ms: int


def to_local_path(location: str | os.PathLike[str]) -> Path:
    """A local path for a table location given as a path or a ``file:`` URI."""
    text = os.fspath(location)
    if text.startswith("file:"):
        parsed = urlparse(text)
        return Path(unquote(parsed.path))
    if "://" in text:
        raise StorageError(
            f"only local paths and file: URIs are supported by the driver, got {text!r}", path=text
        )
    return Path(text)


def to_uri(path: Path) -> str:
    """The ``file:`` URI Spark should read ``path`` with (absolute, percent-encoded)."""
    return path.resolve().as_uri()


class LocalStorage:
    """The local file system."""

    def list_dir(self, directory: Path) -> list[FileInfo]:
        """Files (not directories) in ``directory``; an empty list if it does not exist."""
        out: list[FileInfo] = []
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StorageError(f"cannot list directory: {exc.strerror}", path=str(directory)) from exc
        for entry in entries:
            try:
                if not entry.is_file(follow_symlinks=True):
                    continue
                st = entry.stat()
            except FileNotFoundError:  # deleted between scandir and stat
                continue
            out.append(FileInfo(entry.name, st.st_size, st.st_mtime_ns // 1_000_000))
        out.sort(key=lambda f: f.name)
        return out

    def stat(self, path: Path) -> FileInfo | None:
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        return FileInfo(path.name, st.st_size, st.st_mtime_ns // 1_000_000)

    def read_bytes(self, path: Path) -> bytes:
        try:
            return path.read_bytes()
        except OSError as exc:
            raise StorageError(f"cannot read file: {exc.strerror}", path=str(path)) from exc

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

    def write_new(self, path: Path, data: bytes) -> FileInfo:
        """Publish ``data`` at ``path`` only if nothing is there (atomic, create-if-absent).

        Raises :class:`FileExistsError` if ``path`` exists; never replaces it.
        """
        self.publish_new(self._write_temp(path, data), path)
        info = self.stat(path)
        assert info is not None
        return info

    def publish_new(self, tmp: Path, path: Path) -> None:
        """Move an already written (and synced) temp file to ``path`` unless ``path`` exists."""
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError as exc:
            raise StorageError(f"cannot publish: {exc.strerror}", path=str(path)) from exc
        finally:
            tmp.unlink(missing_ok=True)
        self._sync_dir(path.parent)

    def write_replace(self, path: Path, data: bytes) -> FileInfo:
        """Atomically replace ``path`` with ``data`` (readers see the old or the new file)."""
        tmp = self._write_temp(path, data)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StorageError(f"cannot replace: {exc.strerror}", path=str(path)) from exc
        self._sync_dir(path.parent)
        info = self.stat(path)
        assert info is not None
        return info

    def delete(self, path: Path) -> bool:
        """Delete ``path``; False if it was already gone."""
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise StorageError(f"cannot delete: {exc.strerror}", path=str(path)) from exc
        return True

    def ensure_dir(self, directory: Path) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create directory: {exc.strerror}", path=str(directory)) from exc
