"""File-tree snapshots: what is on disk before and after an implementation ran, to compare.

Spec: ``spec/checkpoints.md`` ``CKPT-WRITE-007`` (a writer modifies no existing file),
``CKPT-CLEAN-028`` (a cleaner touches nothing outside ``_delta_log``), ``CKPT-WRITE-003`` (bad input
changes nothing). The one listing mechanism of the suite and of the project's tests.

| function | gives |
|---|---|
| :func:`files` | every file under a directory (hidden ones included): relative path → ``(size, mtime_ns)`` |
| :func:`tree` | every file *and directory* (a directory's own mtime shows a file created and removed inside it) |
| :func:`diff` | the differences of two :func:`tree` (or :func:`files`) snapshots, one line each |
| :func:`digest` | one hash of every file under a directory: relative path, size, mtime and bytes |
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

Files = dict[str, tuple[int, int]]


def files(root: Path, *, exclude: str | None = None) -> Files:
    """Every file under ``root`` (recursively): relative path → ``(size, mtime_ns)``.

    ``exclude`` names a top-level directory of ``root`` whose files are left out (``_delta_log``,
    to see the data files of a table only). A missing ``root`` has no files.
    """
    out: Files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if exclude is not None and Path(dirpath) == root and exclude in dirnames:
            dirnames.remove(exclude)
        for name in filenames:
            path = Path(dirpath) / name
            st = path.stat()
            out[path.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


def digest(root: Path) -> str:
    """A SHA-256 of every file under ``root`` (hidden ones included): relative path, size, mtime and bytes.

    Two directories with the same digest hold the same files with the same contents and modification
    times, wherever they are."""
    out = hashlib.sha256()
    for name, (size, mtime_ns) in sorted(files(root).items()):
        content = hashlib.sha256((root / name).read_bytes()).hexdigest()
        out.update(f"{name}\0{size}\0{mtime_ns}\0{content}\n".encode())
    return out.hexdigest()


def tree(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file and directory under ``root`` (hidden ones included): ``relpath -> (kind, size, mtime_ns)``."""
    out: dict[str, tuple[str, int, int]] = {".": ("dir", 0, root.stat().st_mtime_ns)}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            path = Path(dirpath) / name
            out[path.relative_to(root).as_posix()] = ("dir", 0, path.stat().st_mtime_ns)
        for name in filenames:
            path = Path(dirpath) / name
            st = path.stat()
            out[path.relative_to(root).as_posix()] = ("file", st.st_size, st.st_mtime_ns)
    return out


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Human-readable differences of two snapshots (``[]`` when equal)."""
    out = [f"created: {k}" for k in sorted(set(after) - set(before))]
    out += [f"deleted: {k}" for k in sorted(set(before) - set(after))]
    out += [
        f"changed: {k} {before[k]} -> {after[k]}"
        for k in sorted(set(before) & set(after))
        if before[k] != after[k]
    ]
    return out
