"""Choose the :class:`~reference_impl.storage.base.Storage` of a table location by its URI scheme.

| scheme | storage |
|---|---|
| none (a local path), ``file:`` | :class:`~reference_impl.storage.local.LocalStorage` |

Any other scheme is a ``STORAGE_ERROR`` naming the supported ones.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from reference_impl.errors import StorageError
from reference_impl.storage.base import Storage
from reference_impl.storage.local import LocalStorage

#: URI scheme ("" for a plain path) -> the storage for it.
STORAGES: dict[str, Callable[[], Storage]] = {"": LocalStorage, "file": LocalStorage}


def scheme_of(location: str | os.PathLike[str]) -> str:
    """The URI scheme of ``location``, lower-case; ``""`` for a plain path."""
    text = os.fspath(location)
    if text.startswith("file:"):
        return "file"
    head, sep, _ = text.partition("://")
    return head.lower() if sep else ""


def storage_for(location: str | Path) -> Storage:
    """The storage that serves ``location`` (a path or a URI)."""
    scheme = scheme_of(location)
    factory = STORAGES.get(scheme)
    if factory is None:
        supported = ", ".join(f"{s}:" if s else "local paths" for s in STORAGES)
        raise StorageError(
            f"no storage for the URI scheme {scheme!r}; supported: {supported}", path=os.fspath(location)
        )
    return factory()
