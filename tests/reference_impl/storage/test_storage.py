"""Storage: the factory chooses by URI scheme; the local storage keeps its guarantees (no Spark).

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_impl.errors import StorageError
from reference_impl.storage import FileInfo, storage_for
from reference_impl.storage.factory import scheme_of
from reference_impl.storage.local import LocalStorage


@pytest.mark.parametrize(
    ("location", "scheme"),
    [
        ("/data/t", ""),
        ("relative/t", ""),
        ("file:/data/t", "file"),
        ("file:///data/t", "file"),
        ("s3://b/t", "s3"),
    ],
)
def test_scheme_of(location: str, scheme: str) -> None:
    assert scheme_of(location) == scheme


def test_local_paths_and_file_uris_get_the_local_storage(tmp_path: Path) -> None:
    """Plain paths and ``file:`` URIs resolve to the same local path."""
    for location in (str(tmp_path), tmp_path.as_uri()):
        storage = storage_for(location)
        assert isinstance(storage, LocalStorage)
        assert storage.resolve(location) == tmp_path
    assert storage_for(str(tmp_path)).guarantees.atomic_create


def test_unknown_scheme_names_the_supported_ones() -> None:
    """An unsupported scheme is a STORAGE_ERROR that lists what is supported."""
    with pytest.raises(StorageError) as info:
        storage_for("hdfs://namenode/t")
    assert info.value.code == "STORAGE_ERROR"
    assert (
        "'hdfs'" in info.value.message
        and "local paths" in info.value.message
        and "file:" in info.value.message
    )


@pytest.mark.requirement("CKPT-WRITE-006")
def test_write_new_never_replaces(tmp_path: Path) -> None:
    """Create-if-absent: a second ``write_new`` of the same name fails and leaves the first file.

    Spec: CKPT-WRITE-006
    > A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    > see it partially written
    """
    storage = LocalStorage()
    target = tmp_path / "00000000000000000001.checkpoint.parquet"
    info = storage.write_new(target, b"first")
    assert info == FileInfo(target.name, 5, info.mtime_ms)
    with pytest.raises(FileExistsError):
        storage.write_new(target, b"second")
    assert target.read_bytes() == b"first"
    assert [f.name for f in storage.list_dir(tmp_path)] == [target.name], "no temp file is left behind"


def test_replace_list_stat_delete(tmp_path: Path) -> None:
    """The other operations: atomic replace, listing with sizes, stat, delete, directories."""
    storage = LocalStorage()
    hint = tmp_path / "_last_checkpoint"
    storage.write_replace(hint, b"{}")
    storage.write_replace(hint, b'{"version":1}')
    assert hint.read_bytes() == b'{"version":1}'
    storage.mkdirs(tmp_path / "_sidecars")
    assert storage.list_subdirs(tmp_path) == ["_sidecars"]
    assert [(f.name, f.size) for f in storage.list_dir(tmp_path)] == [("_last_checkpoint", 13)]
    storage.set_mtime(hint, 1_000)
    assert storage.stat(hint) == FileInfo("_last_checkpoint", 13, 1_000)
    assert storage.delete(hint) is True and storage.delete(hint) is False
    assert storage.stat(hint) is None and storage.list_dir(tmp_path / "missing") == []
