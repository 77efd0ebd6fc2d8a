"""A table on its store: the root location, the storage that serves it, and its ``_delta_log``.

Spec: ``spec/checkpoints.md`` §3 Terminology (table, log directory), §19.4 Stores.

:func:`open_table` is where every command starts: it parses the location (a local path or a URI),
chooses the storage by scheme with the caller's storage options, and checks that ``_delta_log``
exists — before Spark starts, for local and S3 tables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from reference_impl.errors import TableNotFound
from reference_impl.log.naming import DELTA_LOG
from reference_impl.storage import Location, SessionSource, Storage, open_location


@dataclass(frozen=True)
class Table:
    """A table location and its storage."""

    root: Location
    storage: Storage

    @property
    def log_dir(self) -> Location:
        return self.root / DELTA_LOG

    def __str__(self) -> str:
        return str(self.root)


def open_table(
    table: str | os.PathLike[str] | Location | Table,
    storage_options: Mapping[str, str] | None = None,
    *,
    session: SessionSource | None = None,
) -> Table:
    """The table at ``table``, after checking it has a ``_delta_log`` directory (``TABLE_NOT_FOUND`` if not)."""
    if isinstance(table, Table):
        return table
    root, storage = open_location(table, storage_options, session=session)
    opened = Table(root, storage)
    if not storage.is_dir(opened.log_dir):
        raise TableNotFound("no _delta_log directory", path=str(opened.log_dir))
    return opened
