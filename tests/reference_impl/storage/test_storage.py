"""Storage: locations, the factory chooses by URI scheme, the local storage keeps its guarantees (no Spark).

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``), §19.4 Stores.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reference_impl.errors import InvalidOption, StorageError
from reference_impl.storage import FileInfo, Location, storage_for
from reference_impl.storage.local import LocalStorage, is_temp_of, temp_name
from tests.support import REPO_ROOT

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.mark.parametrize(
    ("given", "uri", "spark_uri"),
    [
        ("file:///data/t", "file:///data/t", "file:///data/t"),
        ("file:/data/t/", "file:///data/t", "file:///data/t"),
        ("file://localhost/data/a%20b", "file:///data/a b", "file:///data/a b"),
        ("hdfs://NameNode:8020/data/t/", "hdfs://namenode:8020/data/t", "hdfs://namenode:8020/data/t"),
        ("s3://bucket/data/t", "s3://bucket/data/t", "s3a://bucket/data/t"),
        ("S3://bucket", "s3://bucket/", "s3a://bucket/"),
    ],
)
def test_location_normalises_uris(given: str, uri: str, spark_uri: str) -> None:
    """One spelling per location: scheme and host lower-case, decoded path, no trailing ``/``; S3 is s3a for Spark."""
    location = Location.parse(given)
    assert (location.uri, location.spark_uri()) == (uri, spark_uri), f"{given!r} parsed as {location}"


def test_local_paths_become_absolute_file_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative path, an absolute path, a ``Path`` and a ``file:`` URI name the same location; ``str`` is the path."""
    monkeypatch.chdir(tmp_path)
    expected = Location("file", "", str(tmp_path / "t"))
    for given in ("t", str(tmp_path / "t"), tmp_path / "t", (tmp_path / "t").as_uri()):
        assert Location.parse(given) == expected, f"{given!r}"
    assert str(expected) == str(tmp_path / "t")


def test_location_joins_and_names() -> None:
    """``/`` joins relative names (never out of the location); ``name`` and ``parent`` as for paths."""
    log = Location.parse("s3://b/t") / "_delta_log"
    sidecar = log / "_sidecars/x.parquet"
    assert (sidecar.uri, sidecar.name, sidecar.parent.name, sidecar.key) == (
        "s3://b/t/_delta_log/_sidecars/x.parquet",
        "x.parquet",
        "_sidecars",
        "t/_delta_log/_sidecars/x.parquet",
    )
    with pytest.raises(ValueError, match="leaves"):
        _ = log / "../../elsewhere"


def test_local_paths_and_file_uris_get_the_local_storage(tmp_path: Path) -> None:
    """Plain paths and ``file:`` URIs are served by the local storage."""
    for location in (str(tmp_path), tmp_path.as_uri()):
        assert isinstance(storage_for(location), LocalStorage)
    assert storage_for(str(tmp_path)).guarantees.atomic_create


def test_unknown_scheme_names_the_supported_ones() -> None:
    """An unsupported scheme is a STORAGE_ERROR that lists what is supported."""
    with pytest.raises(StorageError) as info:
        storage_for("foo://namenode/t")
    assert info.value.code == "STORAGE_ERROR"
    message = info.value.message
    assert "'foo'" in message and "local paths" in message and "file://" in message, message


def test_hadoop_storage_options_are_checked_before_the_jvm_starts() -> None:
    """A storage option that is no Hadoop key (nor, on ``s3a://``, an S3 option) is one INVALID_OPTION naming
    the table, raised before the Spark session (the JVM) is asked for."""

    def no_jvm() -> SparkSession:
        raise AssertionError("the JVM was started before the options were checked")

    for uri, option in [("hdfs://127.0.0.1:1/t", "AWS_REGION"), ("s3a://bucket/t", "dfs_replication")]:
        with pytest.raises(InvalidOption) as info:
            storage_for(uri, {option: "x"}, session=no_jvm)
        assert option in info.value.message and info.value.path == uri, f"{uri}: {info.value}"


def test_storage_options_do_not_apply_to_local_paths(tmp_path: Path) -> None:
    """A storage option given for a local table is an INVALID_OPTION naming it (a typo never goes unnoticed)."""
    with pytest.raises(InvalidOption, match="AWS_REGION"):
        storage_for(tmp_path, {"AWS_REGION": "eu-west-1"})


@pytest.mark.requirement("CKPT-WRITE-006")
def test_write_new_never_replaces(tmp_path: Path) -> None:
    """Create-if-absent: a second ``write_new`` of the same name fails and leaves the first file.

    Spec: CKPT-WRITE-006
    > A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    > see it partially written
    """
    storage = LocalStorage()
    target = tmp_path / "00000000000000000001.checkpoint.parquet"
    info = storage.write_new(Location.parse(target), b"first")
    assert info == FileInfo(target.name, 5, info.mtime_ms)
    with pytest.raises(FileExistsError):
        storage.write_new(Location.parse(target), b"second")
    assert target.read_bytes() == b"first"
    assert [f.name for f in storage.list_dir(Location.parse(tmp_path))] == [target.name], (
        "no temp file is left"
    )


def test_replace_list_stat_delete(tmp_path: Path) -> None:
    """The other operations: atomic replace, listing with sizes, stat, delete, directories."""
    storage = LocalStorage()
    root = Location.parse(tmp_path)
    hint = root / "_last_checkpoint"
    storage.write_replace(hint, b"{}")
    storage.write_replace(hint, b'{"version":1}')
    assert (tmp_path / "_last_checkpoint").read_bytes() == b'{"version":1}'
    storage.mkdirs(root / "_sidecars")
    assert storage.list_subdirs(root) == ["_sidecars"]
    assert [(f.name, f.size) for f in storage.list_dir(root)] == [("_last_checkpoint", 13)]
    storage.set_mtime(hint, 1_000)
    assert storage.stat(hint) == FileInfo("_last_checkpoint", 13, 1_000)
    assert storage.delete(hint) is True and storage.delete(hint) is False
    assert storage.stat(hint) is None and storage.list_dir(root / "missing") == []


@pytest.mark.requirement("CKPT-READ-025")
def test_links_leading_out_of_the_directory_and_directories_are_no_files(tmp_path: Path) -> None:
    """A symbolic link whose target is outside the listed directory, a dangling link and a directory named like a
    checkpoint are neither listed nor stat-ed as files; a link to a file in the same directory is.

    Spec: CKPT-READ-025
    "A reader SHOULD treat a name in `_delta_log/` that is a directory, or a symbolic link whose target is
    not directly inside `_delta_log/`, as absent"
    """
    log = tmp_path / "table" / "_delta_log"
    log.mkdir(parents=True)
    outside = tmp_path / "outside.json"
    outside.write_text('{"decoy": true}\n')
    (log / "00000000000000000000.json").write_text("{}\n")
    (log / "00000000000000000001.json").symlink_to(outside)
    (log / "00000000000000000002.json").symlink_to(log / "00000000000000000000.json")
    (log / "00000000000000000003.json").symlink_to(tmp_path / "missing.json")
    (log / "00000000000000000004.checkpoint.parquet").mkdir()
    storage, where = LocalStorage(), Location.parse(log)
    listed = [f.name for f in storage.list_dir(where)]
    assert listed == ["00000000000000000000.json", "00000000000000000002.json"], f"{log}: listed {listed}"
    for name in (
        "00000000000000000001.json",
        "00000000000000000003.json",
        "00000000000000000004.checkpoint.parquet",
    ):
        assert storage.stat(where / name) is None, f"{log / name}: stat {storage.stat(where / name)}"
    assert storage.stat(where / "00000000000000000002.json") is not None, (
        f"{log}: same-directory link not stat-ed"
    )
    assert storage.real(where / "00000000000000000001.json") == Location.parse(outside)
    assert outside.read_text() == '{"decoy": true}\n', f"{outside} changed"


@pytest.mark.requirement("CKPT-WRITE-006")
def test_local_task_sink_creates_complete_files_and_keeps_a_taken_name(tmp_path: Path) -> None:
    """The sink a task gets (pickled, as Spark ships it): the file appears whole at its name, a second create
    of the name keeps the first file (an earlier attempt's) and says so, and no temp file is left.

    Spec: CKPT-WRITE-006
    > A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    > see it partially written
    """
    directory = Location.parse(tmp_path)
    sink = pickle.loads(pickle.dumps(LocalStorage().task_sink(directory)))
    name = "00000000000000000003.checkpoint.0000000001.0000000001.x.parquet"
    assert sink.create(name, b"first attempt") is True
    assert sink.create(name, b"second attempt") is False
    assert (tmp_path / name).read_bytes() == b"first attempt", f"{tmp_path / name}: the taken file changed"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name], "no temp file is left"
    assert sink.create("new-dir/y.parquet", b"y") is True, "a missing directory is created"
    (tmp_path / "blocker").write_bytes(b"")
    with pytest.raises(StorageError) as failed:
        sink.create("blocker/x.parquet", b"x")
    assert failed.value.path == str(tmp_path / "blocker"), failed.value
    assert sorted(p.name for p in tmp_path.iterdir()) == [name, "blocker", "new-dir"], "no temp file is left"


#: A child process that creates a 64 KiB file through the local task sink while its file-size limit
#: (``RLIMIT_FSIZE``) is 4 KiB, as a task whose disk fills up mid-write; it prints the error it got.
_SINK_UNDER_A_SIZE_LIMIT = """
import resource, signal, sys
from reference_impl.storage import Location
from reference_impl.storage.local import LocalStorage
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
sink = LocalStorage().task_sink(Location.parse(sys.argv[1]))
try:
    sink.create(sys.argv[2], bytes(65536))
except Exception as exc:
    print(type(exc).__name__, getattr(exc, "code", ""))
"""


@pytest.mark.requirement("CKPT-WRITE-006")
def test_local_task_sink_leaves_nothing_at_the_name_when_a_write_fails_half_way(tmp_path: Path) -> None:
    """A task whose write fails after 4 KiB of a 64 KiB sidecar (its process's file-size limit reached, as a
    full disk would): one ``STORAGE_ERROR``, nothing at the final name and no temp file left — the sink
    writes a hidden temp file and links it to the name only once it is complete and synced.

    Spec: CKPT-WRITE-006
    > A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    > see it partially written
    """
    name = "00000000000000000003.checkpoint.0000000001.0000000001.x.parquet"
    proc = subprocess.run(
        [sys.executable, "-c", _SINK_UNDER_A_SIZE_LIMIT, str(tmp_path), name],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.stdout.split() == ["StorageError", "STORAGE_ERROR"], (
        f"{tmp_path / name}: exit {proc.returncode}, stdout {proc.stdout!r}, stderr {proc.stderr[-2000:]!r}"
    )
    left = {p.name: p.stat().st_size for p in tmp_path.iterdir()}
    assert left == {}, f"{tmp_path}: a failed create left {left}"


def test_temp_names_are_told_apart_from_final_names() -> None:
    """The hidden temp names the sinks write (``.<name>.<uuid>.tmp``) belong to their final name only."""
    name = "00000000000000000003.checkpoint.0000000001.0000000002.a.parquet"
    tmp = temp_name(name, uuid.uuid4())
    assert is_temp_of(tmp, name) and not is_temp_of(name, name)
    assert not is_temp_of(tmp, name.replace(".a.", ".b.")), tmp
    assert not is_temp_of(f".{name}.crc", name)
