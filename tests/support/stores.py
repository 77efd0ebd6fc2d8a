"""Stores with weaker guarantees than the bundled ones, for the refusals that no bundled store triggers.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``), §19.4 Stores. The store is the
real :class:`~reference_impl.storage.local.LocalStorage`; only what it declares changes.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reference_impl.storage import factory
from reference_impl.storage.local import LocalStorage


def local_store_without_atomic_create(monkeypatch: pytest.MonkeyPatch) -> None:
    """Local paths (and ``file:`` URIs) get a local store that declares no atomic create-if-absent, as
    ``s3a://`` and unverified Hadoop connectors do (:data:`reference_impl.storage.hadoop.GUARANTEES`)."""

    def without_atomic_create(*args: object) -> LocalStorage:
        storage = LocalStorage()
        storage.guarantees = replace(storage.guarantees, atomic_create=False)
        return storage

    monkeypatch.setitem(factory.STORAGES, "file", without_atomic_create)
