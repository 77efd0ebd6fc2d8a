"""Stores with weaker guarantees than the bundled ones, for the refusals that no bundled store triggers.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``), §19.4 Stores. The store is the
real :class:`~reference_impl.storage.local.LocalStorage`; only what it declares changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import BinaryIO

import pytest

from reference_impl.errors import StorageError
from reference_impl.storage import FileInfo, Location, factory
from reference_impl.storage.local import LocalStorage


def local_store_without_atomic_create(monkeypatch: pytest.MonkeyPatch) -> None:
    """Local paths (and ``file:`` URIs) get a local store that declares no atomic create-if-absent, as
    ``s3a://`` and unverified Hadoop connectors do (:data:`reference_impl.storage.hadoop.GUARANTEES`)."""

    def without_atomic_create(*args: object) -> LocalStorage:
        storage = LocalStorage()
        storage.guarantees = replace(storage.guarantees, atomic_create=False)
        return storage

    monkeypatch.setitem(factory.STORAGES, "file", without_atomic_create)


def local_store_failing_a_delete_batch(
    monkeypatch: pytest.MonkeyPatch, fail_at: str, *, listing_fails_after: bool = False
) -> None:
    """Local paths get a local store that deletes in batches, as an object store does, and fails the
    batch holding the file named ``fail_at`` after deleting only that file of the batch (a store
    that stopped part-way, having deleted in its own order); with ``listing_fails_after`` every
    listing fails from then on too."""

    class FailingBatches(LocalStorage):
        batched_deletes = True
        failed = False

        def delete_many(self, locations: Iterable[Location]) -> None:
            batch = list(locations)
            if not any(location.name == fail_at for location in batch):
                super().delete_many(batch)
                return
            target = next(location for location in batch if location.name == fail_at)
            self.delete(target)
            FailingBatches.failed = True
            raise StorageError("the store answered 500 to DeleteObjects", path=str(target.parent))

        def list_dir(self, directory: Location) -> list[FileInfo]:
            if listing_fails_after and FailingBatches.failed:
                raise StorageError("the store answered 500 to a listing", path=str(directory))
            return super().list_dir(directory)

    monkeypatch.setitem(factory.STORAGES, "file", lambda *args: FailingBatches())


def local_store_failing_reads(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Local paths get a local store whose reads through it (``open_read``, ``read_bytes``) of a file
    whose name is in the returned set fail as an object store's ``GET`` answered 503 does; the test
    adds a name when that file's reads are to fail."""
    failing: set[str] = set()

    class FailingReads(LocalStorage):
        def _refuse(self, location: Location) -> None:
            if location.name in failing:
                raise StorageError("the store answered 503 to a read", path=str(location))

        def open_read(self, location: Location) -> BinaryIO:
            self._refuse(location)
            return super().open_read(location)

        def read_bytes(self, location: Location) -> bytes:
            self._refuse(location)
            return super().read_bytes(location)

    monkeypatch.setitem(factory.STORAGES, "file", lambda *args: FailingReads())
    return failing


def local_store_failing_publication(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Local paths get a local store that fails to publish a staged file as ``name`` (a final name under
    ``_delta_log``) as an object store's conditional ``PUT`` answered 503 does: nothing is published,
    and the caller cannot tell that from a file created whose answer was lost."""

    class FailingPublication(LocalStorage):
        def publish_new(self, staged: Location, target: Location, *, unique_name: bool = False) -> FileInfo:
            if target.name == name:
                self.delete(staged)
                raise StorageError("the store answered 503 to a conditional PUT", path=str(target))
            return super().publish_new(staged, target, unique_name=unique_name)

    monkeypatch.setitem(factory.STORAGES, "file", lambda *args: FailingPublication())
