"""The S3 storage (obstore) against a real S3-compatible server: SeaweedFS on 127.0.0.1 (no Spark).

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``), §18 Metadata cleanup (listings with
modification times, deletes).

Every test works under its own prefix of the one bucket of the session's server
(``tests/support/servers/seaweed.py``). Bad input runs the ``delta-ckpt checkpoint`` command line
in-process (:func:`reference_impl.cli.main.main`): each case fails before Spark starts, with one
error line and exit status 2, and the bucket's listing (keys, sizes, ETags) is unchanged.
"""

from __future__ import annotations

import pickle
import re
import threading
import uuid

import obstore
import pytest

from conformance.tables.builder import metadata, protocol, schema, schema_field, write_log
from reference_impl.cli.main import main
from reference_impl.errors import StorageError
from reference_impl.storage import Location, storage_for
from reference_impl.storage import object_store as object_store_module
from reference_impl.storage.object_store import ObjectStoreStorage
from tests.support.servers.processes import refused_port
from tests.support.servers.seaweed import S3Server

ERROR_LINE = re.compile(
    r"^(?P<code>[A-Z_]+): (?P<message>.+?) \[file: (?P<file>[^\]]+)\]( \[rule: [^\]]+\])?$"
)


def _prefix(s3_server: S3Server) -> Location:
    return Location.parse(s3_server.uri(f"t-{uuid.uuid4().hex[:8]}"))


def _bucket_listing(s3_server: S3Server) -> list[tuple[str, int, str | None]]:
    store = s3_server.raw_store()
    return sorted(
        (str(meta["path"]), int(meta["size"]), meta.get("e_tag"))
        for chunk in obstore.list(store)
        for meta in chunk
    )


@pytest.mark.requirement("CKPT-WRITE-006")
def test_create_if_absent_has_exactly_one_winner(s3_server: S3Server) -> None:
    """Eight writers create the same classic name at once: one wins, seven get FileExistsError, the winner's bytes stay.

    Spec: CKPT-WRITE-006
    > A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    > see it partially written
    """
    storage = storage_for(_prefix(s3_server), s3_server.storage_options())
    target = _prefix(s3_server) / "_delta_log/00000000000000000003.checkpoint.parquet"
    barrier = threading.Barrier(8)
    outcomes: dict[int, str] = {}

    def write(i: int) -> None:
        barrier.wait()
        try:
            storage.write_new(target, f"writer {i}".encode())
            outcomes[i] = "won"
        except FileExistsError:
            outcomes[i] = "exists"

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [i for i, outcome in outcomes.items() if outcome == "won"]
    assert len(winners) == 1 and len(outcomes) == 8, f"{target}: outcomes {outcomes}"
    assert storage.read_bytes(target) == f"writer {winners[0]}".encode(), (
        f"{target}: the winner's bytes were replaced"
    )


def test_operations_on_a_real_bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """List with sizes and whole-second times, stat, replace, publish (copy for unique names), batched deletes,
    the objects of a tree (an emptied "folder" holds none) and its removal."""
    root = _prefix(s3_server)
    storage = storage_for(root, s3_server.storage_options())
    assert isinstance(storage, ObjectStoreStorage) and not storage.guarantees.rename
    log = root / "_delta_log"
    assert not storage.is_dir(log) and storage.list_dir(log) == [] and storage.stat(log / "x") is None
    storage.write_new(log / "00000000000000000000.json", b"{}\n")
    storage.write_replace(log / "_last_checkpoint", b"{}")
    storage.write_replace(log / "_last_checkpoint", b'{"version":0}')
    assert storage.read_bytes(log / "_last_checkpoint") == b'{"version":0}'
    staged = log / ".delta-ckpt-staging-1/part-00000.parquet"
    storage.write_new(staged, b"sidecar bytes")
    storage.publish_new(staged, log / "_sidecars/a.parquet", unique_name=True)
    storage.write_new(staged, b"other bytes")
    with pytest.raises(FileExistsError):
        storage.publish_new(staged, log / "_sidecars/a.parquet", unique_name=True)
    assert storage.read_bytes(log / "_sidecars/a.parquet") == b"sidecar bytes"
    assert storage.stat(staged) is None, f"{staged}: a published staged file must be gone"
    listed = storage.list_dir(log)
    assert [(f.name, f.size) for f in listed] == [("00000000000000000000.json", 3), ("_last_checkpoint", 13)]
    assert all(f.mtime_ms % 1000 == 0 for f in listed), f"S3 times are whole seconds: {listed}"
    assert storage.guarantees.mtime_resolution_ms == 1000
    # SeaweedFS keeps emptied "directories" (its filer has real ones); S3 would not list the staging prefix.
    assert "_sidecars" in storage.list_subdirs(log) and storage.is_dir(log)
    # The emptied staging "folder" holds no object: list_tree (one listing, no delimiter) shows none.
    assert ".delta-ckpt-staging-1" in storage.list_subdirs(log), storage.list_subdirs(log)
    assert storage.list_tree(log / ".delta-ckpt-staging-1") == []
    assert storage.list_dir(log / ".delta-ckpt-staging-1") == [], "the emptied folder is no file in itself"
    tree = [(f.name, f.size) for f in storage.list_tree(log)]
    assert tree == [("00000000000000000000.json", 3), ("_last_checkpoint", 13), ("_sidecars/a.parquet", 13)]
    with storage.open_read(log / "_last_checkpoint") as stream:
        stream.seek(-2, 2)
        assert stream.read() == b"0}"
    monkeypatch.setattr(object_store_module, "DELETE_BATCH", 2)  # three batches for five keys
    names = [log / f"junk-{i}" for i in range(5)]
    for name in names:
        storage.write_new(name, b"x")
    storage.delete_many([*names, log / "never-there"])
    assert [f.name for f in storage.list_dir(log)] == ["00000000000000000000.json", "_last_checkpoint"]
    assert (
        storage.delete(log / "_last_checkpoint") is True and storage.delete(log / "_last_checkpoint") is False
    )
    storage.remove_tree(root)
    assert not storage.is_dir(root)
    assert s3_server.raw_keys(root.key.strip("/") + "/") == [], f"{root}: keys left after remove_tree"


@pytest.fixture(scope="module")
def s3_table(s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> Location:
    """A one-commit table on S3 (uploaded from a hand-written local log)."""
    local = tmp_path_factory.mktemp("s3-table")
    write_log(
        local,
        [[protocol(1, 2), metadata(schema(schema_field("id", "long")))]],
    )
    root = _prefix(s3_server)
    storage = storage_for(root, s3_server.storage_options())
    for file in sorted((local / "_delta_log").iterdir()):
        storage.write_new(root / "_delta_log" / file.name, file.read_bytes())
    return root


def _bad_input_cases(s3_server: S3Server, table: Location) -> dict[str, tuple[str, dict[str, str], str]]:
    """case -> (table URI, storage options, what the one error line must say)."""
    options = s3_server.storage_options()
    no_keys = {k: v for k, v in options.items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    return {
        "unknown-scheme": ("foo://somewhere/t", {}, "supported: local paths, file://, s3://, hdfs://"),
        "missing-credentials": (table.uri, no_keys, "no credentials for S3"),
        "wrong-secret": (table.uri, {**options, "AWS_SECRET_ACCESS_KEY": "wrong"}, "access denied"),
        "missing-bucket": (
            f"s3://no-such-bucket-{uuid.uuid4().hex[:6]}/t",
            options,
            "the bucket does not exist",
        ),
        "unreachable-endpoint": (
            table.uri,
            {**options, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{refused_port()}"},
            "cannot reach the S3 endpoint",
        ),
        "read-only": (
            table.uri,
            {
                **options,
                "AWS_ACCESS_KEY_ID": s3_server.reader_key,
                "AWS_SECRET_ACCESS_KEY": s3_server.reader_secret,
            },
            "not writable",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "unknown-scheme",
        "missing-credentials",
        "wrong-secret",
        "missing-bucket",
        "unreachable-endpoint",
        "read-only",
    ],
)
def test_bad_store_input_is_one_error_and_writes_nothing(
    case: str,
    s3_server: S3Server,
    s3_table: Location,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``delta-ckpt checkpoint`` on a bad store: exit 2, one ``STORAGE_ERROR`` line naming the location, nothing written."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    uri, options, expected = _bad_input_cases(s3_server, s3_table)[case]
    before = _bucket_listing(s3_server)
    argv = ["checkpoint", uri, *(f"--storage-option={k}={v}" for k, v in options.items())]
    status = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2, f"{case}: exit status {status}, stderr {err}"
    assert len(err) == 1, f"{case}: expected one error line, got {err}"
    match = ERROR_LINE.match(err[0])
    assert match and match["code"] == "STORAGE_ERROR", f"{case}: {err[0]!r}"
    assert expected in match["message"], f"{case}: {err[0]!r} does not say {expected!r}"
    assert match["file"].startswith(uri.split("//")[0]), (
        f"{case}: the error names {match['file']!r}, not {uri}"
    )
    assert _bucket_listing(s3_server) == before, f"{case}: the bucket changed"


def test_storage_error_is_raised_before_any_request_without_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without keys the S3 storage refuses at once, instead of asking an instance-metadata endpoint."""
    for key in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SKIP_SIGNATURE",
        "AWS_EC2_METADATA_ENDPOINT",
    ):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(StorageError, match="no credentials"):
        storage_for("s3://bucket/t", {"AWS_REGION": "us-east-1"})


@pytest.mark.requirement("CKPT-WRITE-006")
def test_task_sink_puts_once_and_keeps_a_taken_name(s3_server: S3Server) -> None:
    """The sink a Spark task gets (pickled, no driver state): one conditional PUT creates the object whole;
    a create of a taken name (an earlier attempt's) keeps the first object and says so; eight tasks racing
    for one name give one creation.

    Spec: CKPT-WRITE-006
    > A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    > see it partially written
    """
    directory = _prefix(s3_server) / "_delta_log/_sidecars"
    sink = pickle.loads(
        pickle.dumps(storage_for(directory, s3_server.storage_options()).task_sink(directory))
    )
    name = "00000000000000000003.checkpoint.0000000001.0000000001.x.parquet"
    assert sink.create(name, b"first attempt") is True
    assert sink.create(name, b"second attempt") is False
    assert s3_server.raw_keys(directory.key + "/") == [f"{directory.key}/{name}"], "one object, no temp"
    assert (
        storage_for(directory, s3_server.storage_options()).read_bytes(directory / name) == b"first attempt"
    )
    barrier = threading.Barrier(8)
    created: list[bool] = []

    def create(i: int) -> None:
        barrier.wait()
        created.append(sink.create("raced.parquet", f"task {i}".encode()))

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(created) == [False] * 7 + [True], f"{directory}/raced.parquet: creations {created}"
