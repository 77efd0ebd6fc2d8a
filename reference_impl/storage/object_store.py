"""S3-compatible object stores (``s3://bucket/…``) on the driver, through obstore; Spark reaches them as ``s3a://``.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``), §18 Metadata cleanup, §19.4 Stores.

| operation | how |
|---|---|
| :meth:`ObjectStoreStorage.write_new` | one PUT with ``If-None-Match: *``: one writer wins, the others get ``412`` (:class:`FileExistsError`) |
| :meth:`ObjectStoreStorage.publish_new` | a UUID-named file (``unique_name``): HEAD, then a server-side COPY (no bytes through the driver); a fixed name: GET, then a conditional PUT (S3 has no copy-if-absent) |
| :meth:`ObjectStoreStorage.write_replace` | one plain PUT (atomic replace) |
| :meth:`ObjectStoreStorage.list_dir` | ListObjectsV2 with a ``/`` delimiter: sizes and modification times (whole seconds) |
| :meth:`ObjectStoreStorage.delete_many` | DeleteObjects, up to 1,000 keys a request |
| :meth:`ObjectStoreStorage.list_tree`, :meth:`~ObjectStoreStorage.remove_tree` | one ListObjectsV2 without a delimiter (objects only), then DeleteObjects |

Objects appear only when their upload completes (no partial file is ever visible); there is no
rename. Directories do not exist: a directory "exists" when a key is under it, and
:meth:`~ObjectStoreStorage.mkdirs` does nothing. Modification times have one-second resolution:
the cleaner's cutoffs are whole seconds (midnight UTC), so "modified before the cutoff" gives the
same answer as with millisecond times.

Options: :mod:`reference_impl.storage.options` (``AWS_ENDPOINT_URL``, ``AWS_REGION``, keys, …).
Without credentials (and without ``AWS_SKIP_SIGNATURE`` / ``AWS_EC2_METADATA_ENDPOINT``) the storage
refuses to start rather than wait on an instance-metadata endpoint.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from reference_impl.errors import StorageError
from reference_impl.storage.base import FileInfo, StorageGuarantees
from reference_impl.storage.location import Location
from reference_impl.storage.options import S3Options
from reference_impl.storage.ranges import RangeReader, buffered

if TYPE_CHECKING:
    from reference_impl.storage.sinks import TaskSink

#: DeleteObjects takes at most this many keys.
DELETE_BATCH = 1000
#: A hidden probe object that :meth:`ObjectStoreStorage.can_write` creates and deletes.
PROBE_NAME = ".delta-ckpt-write-probe"


def _explain(exc: BaseException, endpoint: str) -> str:
    """One line saying what went wrong, in the user's terms."""
    from obstore.exceptions import PermissionDeniedError, UnauthenticatedError

    text = str(exc)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if "NoSuchBucket" in text:
        return "the bucket does not exist"
    if isinstance(exc, PermissionDeniedError | UnauthenticatedError) or any(
        code in text
        for code in ("AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "403 Forbidden")
    ):
        return "access denied: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and the bucket's permissions"
    if any(
        word in text for word in ("error sending request", "Connection refused", "dns error", "timed out")
    ):
        return f"cannot reach the S3 endpoint {endpoint} ({first})"
    return first


def s3_store(bucket: str, options: S3Options) -> Any:
    """An obstore ``S3Store`` of ``bucket``: short connect timeout, a few quick retries (the driver's and
    the executors' one client set-up, :mod:`reference_impl.storage.sinks`)."""
    from obstore.store import S3Store

    config, client = options.obstore_config()
    return S3Store(
        bucket,
        config=config,  # type: ignore[arg-type]
        client_options={"connect_timeout": "5s", "timeout": "60s", **client},  # type: ignore[arg-type]
        retry_config={
            "max_retries": 3,
            "retry_timeout": timedelta(seconds=20),
            "backoff": {
                "init_backoff": timedelta(milliseconds=100),
                "max_backoff": timedelta(seconds=2),
                "base": 2,
            },
        },
    )


class ObjectStoreStorage:
    """One bucket of an S3-compatible store (see the module docs)."""

    guarantees = StorageGuarantees(
        atomic_create=True,
        atomic_replace=True,
        consistent_listing=True,
        partial_writes_visible=False,
        rename=False,
        mtime_resolution_ms=1000,
    )
    batched_deletes = True

    def __init__(self, location: Location, options: Mapping[str, str]) -> None:
        self.bucket = location.authority
        self.options, _ = S3Options.parse(options)
        self.endpoint = self.options.get("AWS_ENDPOINT_URL") or "AWS S3"
        if not self.bucket:
            raise StorageError("an s3:// location needs a bucket: s3://BUCKET/path", path=location.uri)
        if not self.options.has_credentials:
            raise StorageError(
                "no credentials for S3: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (--storage-option or "
                "environment), or AWS_SKIP_SIGNATURE=true for a public bucket",
                path=location.uri,
            )
        self.store = s3_store(self.bucket, self.options)

    def spark_conf(self) -> Mapping[str, str]:
        return self.options.s3a_conf(self.bucket)

    @contextmanager
    def _errors(self, location: Location, doing: str) -> Iterator[None]:
        """Turn obstore's errors into one ``STORAGE_ERROR`` naming ``location`` (FileExistsError passes)."""
        from obstore.exceptions import BaseError

        try:
            yield
        except BaseError as exc:
            raise StorageError(f"cannot {doing}: {_explain(exc, self.endpoint)}", path=location.uri) from None

    def _key(self, location: Location) -> str:
        if location.scheme != "s3" or location.authority != self.bucket:
            raise StorageError(f"not in the bucket s3://{self.bucket}", path=location.uri)
        return location.key

    def _list(self, directory: Location) -> dict[str, Any]:
        import obstore

        prefix = self._key(directory).rstrip("/") + "/"
        with self._errors(directory, "list"):
            return obstore.list_with_delimiter(self.store, prefix)  # type: ignore[return-value]

    def list_dir(self, directory: Location) -> list[FileInfo]:
        """The objects directly under the prefix; not one whose key is the directory itself.

        obstore lists an S3A directory marker ``d/``, and the emptied "folder" SeaweedFS shows for a
        while after deleting the last object under ``d/``, as an object ``d`` of the listing of ``d/``:
        it is no file in ``d``.
        """
        itself = self._key(directory).rstrip("/")
        out = [
            FileInfo(str(meta["path"]).rsplit("/", 1)[-1], int(meta["size"]), _ms(meta["last_modified"]))
            for meta in self._list(directory)["objects"]
            if str(meta["path"]) != itself
        ]
        return sorted(out, key=lambda f: f.name)

    def list_subdirs(self, directory: Location) -> list[str]:
        return sorted(str(p).rstrip("/").rsplit("/", 1)[-1] for p in self._list(directory)["common_prefixes"])

    def stat(self, location: Location) -> FileInfo | None:
        import obstore
        from obstore.exceptions import NotFoundError

        with self._errors(location, "read the metadata of"):
            try:
                meta = obstore.head(self.store, self._key(location))
            except (NotFoundError, FileNotFoundError):  # obstore raises the built-in one for a 404
                return None
        return FileInfo(location.name, int(meta["size"]), _ms(meta["last_modified"]))

    def dir_mtime(self, directory: Location) -> int | None:
        return None  # a directory is a name prefix: no time of its own (an empty one is no directory)

    def real(self, location: Location) -> Location:
        return location  # an object store has no symbolic links

    def is_dir(self, location: Location) -> bool:
        import obstore

        prefix = self._key(location).rstrip("/") + "/"
        with self._errors(location, "list"):
            for chunk in obstore.list(self.store, prefix, chunk_size=1):
                return len(chunk) > 0
        return False

    def can_write(self, directory: Location) -> bool:
        import obstore
        from obstore.exceptions import PermissionDeniedError, UnauthenticatedError

        probe = self._key(directory / PROBE_NAME)
        try:
            obstore.put(self.store, probe, b"", use_multipart=False)
        except (PermissionDeniedError, UnauthenticatedError):
            return False
        except Exception as exc:  # obstore reports a 403 on PUT as a generic error on some stores
            if "AccessDenied" in str(exc) or "403" in str(exc):
                return False
            raise StorageError(f"cannot write: {_explain(exc, self.endpoint)}", path=directory.uri) from None
        with self._errors(directory, "delete the write probe in"):
            obstore.delete(self.store, probe)
        return True

    def read_bytes(self, location: Location) -> bytes:
        import obstore

        with self._errors(location, "read"):
            return bytes(obstore.get(self.store, self._key(location)).bytes())

    def open_read(self, location: Location) -> BinaryIO:
        import obstore

        info = self.stat(location)
        if info is None:
            raise StorageError("cannot read: the file does not exist", path=location.uri)
        key = self._key(location)

        def read_range(start: int, length: int) -> bytes:
            with self._errors(location, "read"):
                return bytes(obstore.get_range(self.store, key, start=start, length=length))

        return buffered(RangeReader(info.size, read_range))

    def _put(self, location: Location, data: bytes, *, create: bool) -> FileInfo:
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        mode: Literal["create", "overwrite"] = "create" if create else "overwrite"
        with self._errors(location, "write"):
            try:
                obstore.put(self.store, self._key(location), data, mode=mode, use_multipart=False)
            except (AlreadyExistsError, PreconditionError):
                raise FileExistsError(location.uri) from None
        return self._published(location)

    def _published(self, location: Location) -> FileInfo:
        info = self.stat(location)
        if info is None:
            raise StorageError("published file vanished", path=location.uri)
        return info

    def write_new(self, location: Location, data: bytes) -> FileInfo:
        return self._put(location, data, create=True)

    def publish_new(self, staged: Location, target: Location, *, unique_name: bool = False) -> FileInfo:
        import obstore

        try:
            if not unique_name:
                return self._put(target, self.read_bytes(staged), create=True)
            if self.stat(target) is not None:
                raise FileExistsError(target.uri)
            with self._errors(target, "copy a staged file to"):
                obstore.copy(self.store, self._key(staged), self._key(target), overwrite=True)
            return self._published(target)
        finally:
            self.delete(staged)

    def task_sink(self, directory: Location) -> TaskSink:
        from reference_impl.storage.sinks import S3Sink

        self._key(directory)
        return S3Sink(directory, tuple(sorted(self.options.values.items())))

    def write_replace(self, location: Location, data: bytes) -> FileInfo:
        return self._put(location, data, create=False)

    def copy(self, source: Location, target: Location) -> None:
        import obstore

        with self._errors(target, f"copy {source.uri} to"):
            obstore.copy(self.store, self._key(source), self._key(target), overwrite=True)

    def set_mtime(self, location: Location, mtime_ms: int) -> None:
        raise StorageError("an object store cannot set a file's modification time", path=location.uri)

    def delete(self, location: Location) -> bool:
        """Delete ``location``; ``False`` if it was already gone (a HEAD first: S3's DELETE does not say)."""
        import obstore

        if self.stat(location) is None:
            return False
        with self._errors(location, "delete"):
            obstore.delete(self.store, self._key(location))
        return True

    def delete_many(self, locations: Iterable[Location]) -> None:
        import obstore

        batch: list[Location] = []
        for location in [*locations, None]:
            if location is not None:
                batch.append(location)
            if batch and (location is None or len(batch) == DELETE_BATCH):
                with self._errors(batch[0].parent, f"delete {len(batch)} file(s) in"):
                    obstore.delete(self.store, [self._key(b) for b in batch])
                batch = []

    def mkdirs(self, directory: Location) -> None:
        return None

    def list_tree(self, directory: Location) -> list[FileInfo]:
        """One flat listing (no delimiter) of the objects under ``directory``'s prefix.

        Only objects: a "folder" with no object under it is nothing here, though SeaweedFS keeps one
        for a while after its last object is deleted and shows it in delimited listings (as a common
        prefix, and as a zero-byte object named after itself when listed as the prefix).
        """
        import obstore

        prefix = self._key(directory).rstrip("/") + "/"
        with self._errors(directory, "list"):
            listed = [meta for chunk in obstore.list(self.store, prefix) for meta in chunk]
        out = [
            FileInfo(str(m["path"]).removeprefix(prefix), int(m["size"]), _ms(m["last_modified"]))
            for m in listed
        ]
        return sorted(out, key=lambda f: f.name)

    def remove_tree(self, directory: Location) -> None:
        prefix = "/" + self._key(directory).rstrip("/") + "/"
        self.delete_many(
            Location(directory.scheme, directory.authority, prefix + f.name)
            for f in self.list_tree(directory)
        )


def _ms(moment: Any) -> int:
    return int(moment.timestamp() * 1000)
