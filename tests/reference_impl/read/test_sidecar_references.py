"""Reading a top-level checkpoint file's ``sidecar`` actions on the driver (what the cleaner keeps).

Spec: ``spec/checkpoints.md`` §18.3 Sidecar garbage collection (``CKPT-CLEAN-013``), §21 Error codes.
A file whose bytes do not parse is ``CHECKPOINT_CORRUPT`` naming it (the cleaner then skips sidecar
collection); the store failing to read it is the store's ``STORAGE_ERROR``, never a corrupt file.
The store is the real local one whose reads of a chosen file fail as a ``GET`` answered 503 does
(:func:`tests.support.stores.local_store_failing_reads`).
"""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.errors import CheckpointCorrupt, StorageError
from reference_impl.log.naming import uuid_checkpoint_name
from reference_impl.read.sidecars import read_sidecar_actions
from reference_impl.storage import Location
from reference_impl.storage.factory import storage_for
from spec.vocabulary import TopLevelFormat
from tests.support.stores import local_store_failing_reads

SIDECAR = {"path": "00000000000000000002.checkpoint.0000000001.0000000001.s.parquet", "sizeInBytes": 10}


def _top_level_bytes(fmt: TopLevelFormat) -> bytes:
    """A top-level file with one ``sidecar`` action, in ``fmt``."""
    if fmt is TopLevelFormat.JSON:
        return (json.dumps({"sidecar": SIDECAR}) + "\n").encode()
    sink = io.BytesIO()
    pq.write_table(pa.table({"sidecar": [SIDECAR]}), sink)
    return sink.getvalue()


@pytest.mark.requirement("CKPT-CLEAN-013")
@pytest.mark.parametrize("fmt", list(TopLevelFormat), ids=lambda f: f.value)
def test_a_store_failing_to_read_a_top_level_file_is_the_stores_error(
    fmt: TopLevelFormat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file reads (its sidecar action comes back) until the store fails its reads: then
    ``STORAGE_ERROR`` naming it with the store's message, not ``CHECKPOINT_CORRUPT``: the cleaner stops
    before it deletes anything instead of taking the store's failure for an unreadable checkpoint.

    Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint
    remaining after the cleanup references"
    """
    failing = local_store_failing_reads(monkeypatch)
    name = uuid_checkpoint_name(2, uuid.uuid4(), fmt)
    (tmp_path / name).write_bytes(_top_level_bytes(fmt))
    log_dir = Location.parse(tmp_path)
    storage = storage_for(log_dir)
    actions = read_sidecar_actions(storage, log_dir, name)
    assert [a["path"] for a in actions] == [SIDECAR["path"]], f"{tmp_path / name}: read {actions}"
    failing.add(name)
    with pytest.raises(StorageError) as raised:
        read_sidecar_actions(storage, log_dir, name)
    error = raised.value
    assert (type(error), error.path) == (StorageError, str(log_dir / name)), f"{name}: raised {error!r}"
    assert "503" in error.message, f"{name}: the store's own message is not in {error.message!r}"


@pytest.mark.requirement("CKPT-CLEAN-013")
@pytest.mark.parametrize("fmt", list(TopLevelFormat), ids=lambda f: f.value)
def test_a_top_level_file_that_does_not_parse_is_corrupt(fmt: TopLevelFormat, tmp_path: Path) -> None:
    """Bytes that are neither JSON lines nor Parquet, read without a store failure: ``CHECKPOINT_CORRUPT``
    naming the file (the cleaner then skips sidecar collection rather than miss a reference).

    Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint
    remaining after the cleanup references"
    """
    name = uuid_checkpoint_name(2, uuid.uuid4(), fmt)
    (tmp_path / name).write_bytes(b"\x00not a checkpoint\xff")
    log_dir = Location.parse(tmp_path)
    with pytest.raises(CheckpointCorrupt) as raised:
        read_sidecar_actions(storage_for(log_dir), log_dir, name)
    assert raised.value.path == str(log_dir / name), f"{name}: raised {raised.value!r}"
