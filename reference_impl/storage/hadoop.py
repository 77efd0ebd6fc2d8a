"""Hadoop file systems (``hdfs://``, ``s3a://``, and whatever connector is on Spark's classpath) through Spark's JVM.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``), §18 Metadata cleanup, §19.4 Stores.

The driver calls Hadoop's ``FileSystem`` and ``FileContext`` APIs through py4j, in the JVM of the
table's Spark session, with the session's Hadoop configuration (what its jobs get) plus the
storage options whose key contains a ``.`` (Hadoop keys). Executors reach the same store through
:meth:`~reference_impl.storage.location.Location.spark_uri`.

| operation | how (HDFS) |
|---|---|
| :meth:`HadoopStorage.write_new` | ``create(temp, overwrite=false)``, close, then ``FileContext.rename(temp, target, NONE)``: atomic, fails if ``target`` exists |
| :meth:`HadoopStorage.publish_new` | ``FileContext.rename(staged, target, NONE)`` (a NameNode metadata operation) |
| :meth:`HadoopStorage.write_replace` | temp file, then ``FileContext.rename(temp, target, OVERWRITE)`` (atomic on HDFS) |
| :meth:`HadoopStorage.list_dir` | one ``listStatus``: sizes and modification times in milliseconds |

Why a temp file and a rename, not ``create(target, overwrite=false)``: on HDFS that create is
atomic at the NameNode, but the file is visible at its name while it is being written (a reader
could see a partial checkpoint), so every file is written under a hidden temp name and renamed,
as delta-spark's ``HDFSLogStore`` does (delta-io/delta@07f0fec
``storage/src/main/java/io/delta/storage/HDFSLogStore.java``: ``isPartialWriteVisible`` is true,
L72-74; ``writeInternal`` creates a temp path, then ``fc.rename(tempPath, path, NONE or
OVERWRITE)``, L106-124).

Guarantees per scheme (:data:`GUARANTEES`, given only when the scheme resolves to Hadoop's own
classes for it, :data:`VERIFIED_CLASSES`; the writer refuses a store without atomic
create-if-absent, ``CKPT-WRITE-006``; the reader and the cleaner work on any):

| scheme | atomic create-if-absent | rename | why |
|---|---|---|---|
| ``hdfs`` | yes | yes (NameNode metadata) | ``FileContext.rename(…, NONE)`` fails atomically at the NameNode if the target exists |
| ``s3a`` | **no** | no (copy + delete) | ``create(path, overwrite=false)`` probes, then uploads: apache/hadoop ``hadoop-tools/hadoop-aws/src/main/java/org/apache/hadoop/fs/s3a/S3AFileSystem.java`` ``innerCreateFile``, release 3.5.0 (the version pyspark ships), L2163-2172 (``innerGetFileStatus``, then ``FileAlreadyExistsException``), so two writers can both "create"; ``If-None-Match: *`` is sent only through ``createFile(path).must("fs.option.create.conditional.overwrite", true)`` (L2111-2117), which ``FileContext.rename`` does not use; a rename is a COPY and a DELETE, and ``FileContext.rename(…, OVERWRITE)`` first deletes the target (``AbstractFileSystem.renameInternal(src, dst, overwrite)``: "Default implementation deals with overwrite in a non-atomic way"; ``org.apache.hadoop.fs.s3a.S3A`` extends ``DelegateToFileSystem``, which overrides only the two-argument ``renameInternal`` — javap of hadoop-aws-3.5.0 and hadoop-client-api-3.5.0), so a replaced ``_last_checkpoint`` is briefly absent. Use ``s3://`` to write: conditional PUTs |
| any other (``viewfs``, ``abfss``, ``gs``, …) | **no** (not verified here) | no | the connector's semantics are its own (a ``viewfs`` mount point may lead to any file system, ``s3a`` included) |

Options: Hadoop configuration keys (containing ``.``); on ``s3a://`` also the S3 options of
:mod:`~reference_impl.storage.options` (``AWS_ENDPOINT_URL``, …), translated as for ``s3://``.
They are checked (:func:`hadoop_conf`) before the JVM starts.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO

from reference_impl.errors import InvalidOption, StorageError
from reference_impl.storage.base import FileInfo, StorageGuarantees, walk_tree
from reference_impl.storage.connectors import require_file_system
from reference_impl.storage.local import temp_name
from reference_impl.storage.location import Location
from reference_impl.storage.options import S3Options
from reference_impl.storage.ranges import RangeReader, buffered

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from reference_impl.storage.sinks import TaskSink

#: Driver-side settings, so that an unreachable NameNode is one error in seconds, not after minutes of
#: retries; a storage option with the same key wins. Executors keep Spark's settings.
DRIVER_DEFAULTS: Mapping[str, str] = {
    "ipc.client.connect.max.retries": "1",
    "ipc.client.connect.retry.interval": "500",
    "ipc.client.connect.timeout": "5000",
}
#: A hidden probe file that :meth:`HadoopStorage.can_write` creates and deletes.
PROBE_NAME = ".delta-ckpt-write-probe"


#: What each Hadoop file system promises (see the module docs); a scheme not listed gets :data:`UNVERIFIED`.
_HDFS = StorageGuarantees(
    atomic_create=True, atomic_replace=True, consistent_listing=True, partial_writes_visible=True
)
GUARANTEES: Mapping[str, StorageGuarantees] = {
    "hdfs": _HDFS,
    "s3a": StorageGuarantees(
        atomic_create=False,
        atomic_replace=False,
        consistent_listing=True,
        rename=False,
        mtime_resolution_ms=1000,
    ),
}
#: The Hadoop classes :data:`GUARANTEES` describe — the ``FileSystem`` and ``FileContext``'s
#: ``AbstractFileSystem`` the scheme resolves to by default; a scheme resolved to any other class
#: (a user's ``fs.<scheme>.impl`` or ``fs.AbstractFileSystem.<scheme>.impl``) gets :data:`UNVERIFIED`.
VERIFIED_CLASSES: Mapping[str, tuple[str, str]] = {
    "hdfs": ("org.apache.hadoop.hdfs.DistributedFileSystem", "org.apache.hadoop.fs.Hdfs"),
    "s3a": ("org.apache.hadoop.fs.s3a.S3AFileSystem", "org.apache.hadoop.fs.s3a.S3A"),
}
#: A connector whose semantics this implementation has not verified: read and clean, never publish.
UNVERIFIED = StorageGuarantees(
    atomic_create=False, atomic_replace=False, consistent_listing=True, rename=False
)


def hadoop_conf(location: Location, options: Mapping[str, str]) -> dict[str, str]:
    """The Hadoop configuration the storage options of ``location`` give (no JVM needed).

    Keys containing a ``.`` are Hadoop keys; on ``s3a://`` the S3 options are translated
    (:meth:`~reference_impl.storage.options.S3Options.s3a_conf`). Any other key is one
    ``INVALID_OPTION`` naming the location.
    """
    if location.scheme == "s3a":
        try:
            s3, rest = S3Options.parse(options, extra_ok=True)
        except InvalidOption as exc:
            raise InvalidOption(exc.message, path=location.uri) from None
        return {**s3.s3a_conf(location.authority), **rest}
    bad = sorted(key for key in options if "." not in key)
    if bad:
        raise InvalidOption(
            f"unknown storage option(s) {', '.join(bad)} for a Hadoop file system ({location.scheme}://); "
            "use Hadoop configuration keys (containing '.'), e.g. dfs.client.use.datanode.hostname=true",
            path=location.uri,
        )
    return dict(options)


def _java_class(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    return str(java.getClass().getName()) if java is not None else type(exc).__name__


def _explain(exc: BaseException, authority: str) -> str:
    """One line in the user's terms for a Java exception raised through py4j."""
    java = getattr(exc, "java_exception", None)
    name = _java_class(exc)
    text = str(java.getMessage()) if java is not None and java.getMessage() is not None else str(exc)
    first = text.strip().splitlines()[0] if text.strip() else name
    if name.endswith("AccessControlException") or "Permission denied" in text:
        return f"permission denied ({first})"
    if name.endswith(("ConnectException", "ConnectTimeoutException", "UnknownHostException")) or any(
        word in text for word in ("Connection refused", "UnknownHost", "connect timed out")
    ):
        return f"cannot reach the NameNode {authority} ({name.rsplit('.', 1)[-1]})"
    return f"{name.rsplit('.', 1)[-1]}: {first}"


class HadoopStorage:
    """A Hadoop file system reached through a Spark session's JVM (see the module docs)."""

    batched_deletes = False  # Hadoop's FileSystem deletes one path a call

    def __init__(self, location: Location, options: Mapping[str, str], spark: SparkSession) -> None:
        self.scheme = location.scheme
        self.authority = location.authority
        self.options = hadoop_conf(location, options)
        self.spark = spark
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        self.jvm: Any = jvm
        self.gateway: Any = spark.sparkContext._gateway
        conf = spark._jsparkSession.sessionState().newHadoopConf()  # Spark's Hadoop conf + its SQL conf
        for key, value in DRIVER_DEFAULTS.items():
            conf.set(key, value)
        for key, value in self.options.items():
            conf.set(key, value)
        self.conf: Any = conf
        require_file_system(jvm, conf, location)
        root = self._path(Location(location.scheme, location.authority, "/"))
        with self._errors(location, "connect to"):
            # Not cached: options must not leak into (or be ignored by) a shared FileSystem instance.
            self.fs: Any = jvm.org.apache.hadoop.fs.FileSystem.newInstance(root.toUri(), conf)
            self.fc: Any = jvm.org.apache.hadoop.fs.FileContext.getFileContext(root.toUri(), conf)
            classes = (
                str(self.fs.getClass().getName()),
                str(self.fc.getDefaultFileSystem().getClass().getName()),
            )
        verified = VERIFIED_CLASSES.get(self.scheme) == classes
        self.guarantees = GUARANTEES[self.scheme] if verified else UNVERIFIED

    def spark_conf(self) -> Mapping[str, str]:
        return dict(self.options)

    # -- helpers ----------------------------------------------------------------------------------

    def _path(self, location: Location) -> Any:
        if location.scheme != self.scheme or location.authority != self.authority:
            raise StorageError(f"not on {self.scheme}://{self.authority}", path=location.uri)
        return self.jvm.org.apache.hadoop.fs.Path(location.spark_uri())

    @contextmanager
    def _errors(self, location: Location, doing: str) -> Iterator[None]:
        """Turn a Java exception into one ``STORAGE_ERROR`` naming ``location``."""
        from py4j.protocol import Py4JJavaError

        try:
            yield
        except Py4JJavaError as exc:
            raise StorageError(
                f"cannot {doing}: {_explain(exc, self.authority)}", path=location.uri
            ) from None

    def _status(self, location: Location) -> Any | None:
        from py4j.protocol import Py4JJavaError

        try:
            return self.fs.getFileStatus(self._path(location))
        except Py4JJavaError as exc:
            if _java_class(exc) == "java.io.FileNotFoundException":
                return None
            raise StorageError(
                f"cannot read the metadata of: {_explain(exc, self.authority)}", path=location.uri
            ) from None

    def _rename(self, source: Location, target: Location, *, overwrite: bool) -> None:
        """``FileContext.rename``: atomic; :class:`FileExistsError` if ``target`` exists and not ``overwrite``."""
        from py4j.protocol import Py4JJavaError

        rename_class = getattr(self.jvm.org.apache.hadoop.fs, "Options$Rename")
        flags = self.gateway.new_array(rename_class, 1)
        flags[0] = rename_class.OVERWRITE if overwrite else rename_class.NONE
        try:
            self.fc.rename(self._path(source), self._path(target), flags)
        except Py4JJavaError as exc:
            if _java_class(exc) == "org.apache.hadoop.fs.FileAlreadyExistsException":
                raise FileExistsError(target.uri) from None
            raise StorageError(f"cannot publish: {_explain(exc, self.authority)}", path=target.uri) from None

    def _write_temp(self, final: Location, data: bytes) -> Location:
        temp = final.parent / temp_name(final.name, uuid.uuid4())
        with self._errors(final, "write"):
            stream = self.fs.create(self._path(temp), False)
            try:
                stream.write(bytearray(data))
            finally:
                stream.close()
        return temp

    def _published(self, location: Location) -> FileInfo:
        info = self.stat(location)
        if info is None:
            raise StorageError("published file vanished", path=location.uri)
        return info

    def _info(self, status: Any) -> FileInfo:
        return FileInfo(
            str(status.getPath().getName()), int(status.getLen()), int(status.getModificationTime())
        )

    def _list(self, directory: Location) -> list[Any]:
        from py4j.protocol import Py4JJavaError

        try:
            return list(self.fs.listStatus(self._path(directory)))
        except Py4JJavaError as exc:
            if _java_class(exc) == "java.io.FileNotFoundException":
                return []
            raise StorageError(f"cannot list: {_explain(exc, self.authority)}", path=directory.uri) from None

    # -- the Storage protocol ---------------------------------------------------------------------

    def list_dir(self, directory: Location) -> list[FileInfo]:
        return sorted((self._info(s) for s in self._list(directory) if s.isFile()), key=lambda f: f.name)

    def list_subdirs(self, directory: Location) -> list[str]:
        return sorted(str(s.getPath().getName()) for s in self._list(directory) if s.isDirectory())

    def list_tree(self, directory: Location) -> list[FileInfo]:
        return walk_tree(self, directory)

    def stat(self, location: Location) -> FileInfo | None:
        status = self._status(location)
        if status is None or not status.isFile():
            return None
        return FileInfo(location.name, int(status.getLen()), int(status.getModificationTime()))

    def dir_mtime(self, directory: Location) -> int | None:
        status = self._status(directory)
        if status is None or not status.isDirectory():
            return None
        mtime = int(status.getModificationTime())
        # 0: the connector keeps no time for directories (S3A's status of a prefix without a marker);
        # "unknown", never "older than any cutoff" (the cleaner keeps what it cannot date).
        return mtime if mtime > 0 else None

    def real(self, location: Location) -> Location:
        return location  # Hadoop's FileSystem API has symbolic links disabled by default (FileSystem.areSymlinksEnabled)

    def is_dir(self, location: Location) -> bool:
        status = self._status(location)
        return status is not None and bool(status.isDirectory())

    def can_write(self, directory: Location) -> bool:
        from py4j.protocol import Py4JJavaError

        probe = self._path(directory / f"{PROBE_NAME}.{uuid.uuid4()}")
        try:
            self.fs.create(probe, False).close()
        except Py4JJavaError as exc:
            if _java_class(exc).endswith("AccessControlException"):
                return False
            raise StorageError(f"cannot write: {_explain(exc, self.authority)}", path=directory.uri) from None
        with self._errors(directory, "delete the write probe in"):
            self.fs.delete(probe, False)
        return True

    def read_bytes(self, location: Location) -> bytes:
        with self._errors(location, "read"):
            stream = self.fs.open(self._path(location))
            try:
                return bytes(self.jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
            finally:
                stream.close()

    def open_read(self, location: Location) -> BinaryIO:
        info = self.stat(location)
        if info is None:
            raise StorageError("cannot read: the file does not exist", path=location.uri)
        with self._errors(location, "read"):
            stream = self.fs.open(self._path(location))

        def read_range(start: int, length: int) -> bytes:
            with self._errors(location, "read"):
                stream.seek(start)
                return bytes(self.jvm.org.apache.commons.io.IOUtils.readFully(stream, length))

        return buffered(RangeReader(info.size, read_range, on_close=stream.close))

    def write_new(self, location: Location, data: bytes) -> FileInfo:
        temp = self._write_temp(location, data)
        try:
            self._rename(temp, location, overwrite=False)
        except BaseException:
            self.delete(temp)
            raise
        return self._published(location)

    def publish_new(self, staged: Location, target: Location, *, unique_name: bool = False) -> FileInfo:
        try:
            self._rename(staged, target, overwrite=False)
        except BaseException:
            self.delete(staged)
            raise
        return self._published(target)

    def task_sink(self, directory: Location) -> TaskSink:
        """HDFS only (hdfs-native, :mod:`~reference_impl.storage.sinks`): on any other Hadoop file
        system the writer refuses to write before this is asked (no atomic create-if-absent)."""
        from reference_impl.storage.sinks import HdfsSink

        self._path(directory)
        if self.scheme != "hdfs" or not self.guarantees.atomic_create:
            raise StorageError(
                f"executors create files on hdfs:// only, not on this {self.scheme}:// file system",
                path=directory.uri,
            )
        # The executors' Hadoop settings as the JVM's tasks get them: Spark's spark.hadoop.* keys, the
        # storage options over them (not DRIVER_DEFAULTS: the driver's fast failure is not the tasks').
        spark_hadoop = {
            key.removeprefix("spark.hadoop."): value
            for key, value in self.spark.sparkContext.getConf().getAll()
            if key.startswith("spark.hadoop.")
        }
        return HdfsSink(directory, tuple(sorted({**spark_hadoop, **self.options}.items())))

    def write_replace(self, location: Location, data: bytes) -> FileInfo:
        temp = self._write_temp(location, data)
        try:
            self._rename(temp, location, overwrite=True)
        except BaseException:
            self.delete(temp)
            raise
        return self._published(location)

    def copy(self, source: Location, target: Location) -> None:
        with self._errors(target, f"copy {source.uri} to"):
            self.jvm.org.apache.hadoop.fs.FileUtil.copy(
                self.fs, self._path(source), self.fs, self._path(target), False, True, self.conf
            )

    def set_mtime(self, location: Location, mtime_ms: int) -> None:
        with self._errors(location, "set the modification time of"):
            self.fs.setTimes(self._path(location), mtime_ms, -1)

    def delete(self, location: Location) -> bool:
        with self._errors(location, "delete"):
            return bool(self.fs.delete(self._path(location), False))

    def delete_many(self, locations: Iterable[Location]) -> None:
        for location in locations:
            self.delete(location)

    def mkdirs(self, directory: Location) -> None:
        with self._errors(directory, "create the directory"):
            self.fs.mkdirs(self._path(directory))

    def remove_tree(self, directory: Location) -> None:
        with self._errors(directory, "remove"):
            self.fs.delete(self._path(directory), True)
