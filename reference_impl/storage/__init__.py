"""Storage: every file operation of the reference implementation, behind one small contract.

Modules, in the order a newcomer reads them:

| module | holds |
|---|---|
| :mod:`~reference_impl.storage.base` | :class:`~reference_impl.storage.base.Storage` (the protocol), :class:`~reference_impl.storage.base.StorageGuarantees`, :class:`~reference_impl.storage.base.FileInfo` |
| :mod:`~reference_impl.storage.local` | :class:`~reference_impl.storage.local.LocalStorage`: local paths and ``file:`` URIs |
| :mod:`~reference_impl.storage.factory` | :func:`~reference_impl.storage.factory.storage_for`: the storage of a location, by URI scheme |

Storage is the bottom layer: it imports only :mod:`reference_impl.errors`.
"""

from reference_impl.storage.base import FileInfo, Storage, StorageGuarantees
from reference_impl.storage.factory import storage_for

__all__ = ["FileInfo", "Storage", "StorageGuarantees", "storage_for"]
