"""Names and file-tree snapshots of a table, for the tests' before/after comparisons.

The mechanism is :mod:`conformance.decode.files` (the suite uses it too); these are the shapes the
tests ask for.
"""

from __future__ import annotations

from pathlib import Path

from conformance.decode.files import Files, diff, files, tree
from conformance.decode.names import DELTA_LOG
from conformance.tables.real_writers import checkpoint_files, sidecar_files

tree_listing = tree
listing_diff = diff


def log_dir(table: Path) -> Path:
    return table / DELTA_LOG


def checkpoint_names(table: Path) -> list[str]:
    """Every (non-hidden) checkpoint file name directly in ``_delta_log``."""
    return list(checkpoint_files(log_dir(table)))


def sidecar_names(table: Path) -> list[str]:
    """Every (non-hidden) file name in ``_delta_log/_sidecars``."""
    return sidecar_files(log_dir(table))


def snapshot_files(table: Path) -> Files:
    """Every file under the table (relative path → size and mtime), to prove nothing changed."""
    return files(table)


def log_files(table: Path, *, hidden: bool = True) -> set[str]:
    """Files under ``_delta_log`` (relative to it), optionally without hidden ones."""
    names = set(files(log_dir(table)))
    return names if hidden else {n for n in names if not n.rsplit("/", 1)[-1].startswith(".")}
