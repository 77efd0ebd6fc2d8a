"""Publication: staged files appear under their final names, create-if-absent; task-written sidecars are recorded and re-checked.

Spec: ``spec/checkpoints.md`` §17.2 Publication order and self-checks (``CKPT-WRITE-004``,
``CKPT-WRITE-005``), §17.3 Atomicity (``CKPT-WRITE-006``: never replace a file), ``CKPT-WRITE-008``
(an existing classic file or part of the same version may be kept).

A :class:`Publisher` publishes into one ``_delta_log`` through the table's storage. A file is
published only if its name is free. When a classic file or part of that name exists, it is kept
(never replaced); whether that is an error depends on when it appeared:

| the name was taken | what the publisher does |
|---|---|
| in the writer's listing of the log (an earlier run's file) | keeps it (``CKPT-WRITE-008``): ``kept_existing`` |
| after that listing (another writer won the race) | :class:`~reference_impl.errors.CheckpointConflict` naming it |
| for the cleaner's compatibility checkpoint (spec §13) | keeps it: ``kept_existing`` |

Whenever it appeared, a taken file of 0 bytes (no checkpoint is complete with it, §3) or one that is
not a readable checkpoint does not describe the state (``CKPT-WRITE-008``), is not another writer's
finished file either, and is never replaced: :class:`~reference_impl.errors.CheckpointCorrupt`
naming it and its size. That is decided by reading the kept file through the store on the driver (its
footer first; every row group again when Spark cannot read it): a store that fails those reads is the
store's :class:`~reference_impl.errors.StorageError` naming the file, never a corrupt file. A kept file
whose bytes do not match a Hadoop checksum file beside it (``.<name>.crc``) is unusable too: readers
that verify it cannot read the file, and must call it ``CHECKPOINT_CORRUPT`` (``CKPT-READ-026``), so the
writer does, before any Spark read. When every row group decodes, Spark's failing read is the file's
fault only when the plan finds no checkpoint's columns in it (an ``AnalysisException``:
``CHECKPOINT_CORRUPT``); an I/O error in its job is the store's (``STORAGE_ERROR`` naming the file: a
GET failing now); any other failure of Spark's (a lost executor) is raised as Spark raised it.
A UUID-named file whose unique name is taken is a ``STORAGE_ERROR``. Sidecars are not published here:
their tasks create them at their final names (:mod:`~reference_impl.write.task_files`);
:meth:`Publisher.task_written` records one, :meth:`Publisher.verify_sidecars` re-checks them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pyspark.errors import AnalysisException

from reference_impl.errors import CheckpointConflict, CheckpointCorrupt, SelfCheckFailed, StorageError
from reference_impl.read.hadoop_checksum import verify_hadoop_checksum
from reference_impl.spark.jobs import first_line, io_cause, spark_errors
from reference_impl.storage import FileInfo, Location, Storage
from reference_impl.write.result import FileRole, WrittenFile
from reference_impl.write.staging import ActionCounts, read_back_counts

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class Publisher:
    """Publishes files of one checkpoint into ``log_dir``.

    ``keep_taken(name)``: whether a classic file or part ``name`` found taken is kept as it is
    (``CKPT-WRITE-008``); else the publisher raises :class:`CheckpointConflict` (module docs).
    """

    def __init__(
        self,
        spark: SparkSession,
        storage: Storage,
        log_dir: Location,
        file_time_ms: int | None,
        keep_taken: Callable[[str], bool],
    ) -> None:
        self.spark = spark
        self.storage = storage
        self.log_dir = log_dir
        self.file_time_ms = file_time_ms
        self.keep_taken = keep_taken

    def publish(
        self, staged: Location, name: str, role: FileRole, counts: ActionCounts, *, unique_name: bool = False
    ) -> WrittenFile:
        """Publish the staged file ``staged`` as ``name`` (relative to ``_delta_log``)."""
        final = self.log_dir / name
        try:
            info = self._timestamped(self.storage.publish_new(staged, final, unique_name=unique_name), final)
            kept = False
        except FileExistsError:
            self.storage.delete(staged)
            if unique_name:  # a UUID-named file: its fresh name cannot be taken by a race
                raise StorageError("a file with this unique name exists", path=str(final)) from None
            existing = self.storage.stat(final)
            if existing is None:
                raise StorageError("a file with this name appeared and vanished", path=str(final)) from None
            if existing.size == 0:
                raise _unusable(final, existing, "it is empty", "remove it and write again") from None
            if not self.keep_taken(name):
                raise CheckpointConflict(
                    f"another writer published {name} while this one wrote it; its file is kept, "
                    "_last_checkpoint not written",
                    path=str(final),
                    rule="CKPT-WRITE-006",
                ) from None
            # CKPT-WRITE-008: a classic file or part of the same version describes the same state; keep it.
            info, counts, kept = existing, self._describe_existing(final, existing), True
        return _written(name, role, info, counts, kept)

    def task_written(self, name: str, role: FileRole, info: FileInfo, counts: ActionCounts) -> WrittenFile:
        """A file a Spark task created at ``name`` (relative to ``_delta_log``), as listed (``info``) and read
        back (``counts``); its time set to ``file_time_ms`` when that is given."""
        return _written(name, role, self._timestamped(info, self.log_dir / name), counts, kept=False)

    def write_json(self, name: str, data: bytes, rows: int) -> WrittenFile:
        """Publish a JSON top-level file the driver wrote itself (``rows`` actions, no file actions)."""
        final = self.log_dir / name
        try:
            info = self._timestamped(self.storage.write_new(final, data), final)
        except FileExistsError:
            raise StorageError("a UUID-named checkpoint with this name exists", path=str(final)) from None
        return WrittenFile(name, FileRole.TOP_LEVEL, info.size, info.mtime_ms, rows, 0, 0)

    def verify_sidecars(
        self,
        sidecars: list[WrittenFile],
        error: type[SelfCheckFailed] = SelfCheckFailed,
        rule: str = "CKPT-WRITE-005",
    ) -> None:
        """Every sidecar still exists with the recorded size (``CKPT-WRITE-005``; reused ones:
        ``CKPT-INC-005``), else ``error`` naming ``rule``."""
        for sc in sidecars:
            info = self.storage.stat(self.log_dir / sc.name)
            if info is None or info.size != sc.size_in_bytes:
                raise error(
                    f"sidecar {sc.name} is {'missing' if info is None else f'{info.size} bytes'}, "
                    f"recorded {sc.size_in_bytes}",
                    path=str(self.log_dir / sc.name),
                    rule=rule,
                )

    def _timestamped(self, info: FileInfo, path: Location) -> FileInfo:
        """Apply ``file_time_ms`` (when set) to a file this writer just published."""
        if self.file_time_ms is None:
            return info
        self.storage.set_mtime(path, self.file_time_ms)
        return FileInfo(info.name, info.size, self.file_time_ms)

    def _describe_existing(self, path: Location, info: FileInfo) -> ActionCounts:
        """The counts of a kept file (module docs: a store's failure is the store's, not a corrupt file)."""
        self._decode(path, info, every_row_group=False)
        try:  # a Hadoop checksum file it fails: readers that verify it cannot read it (CKPT-READ-026)
            verify_hadoop_checksum(self.storage, path)
        except CheckpointCorrupt as exc:
            raise _unusable(path, info, exc.message, _CHECK_FIRST) from None
        try:
            counts = read_back_counts(self.spark.read.parquet(path.spark_uri()))
        except spark_errors() as exc:
            self._decode(path, info, every_row_group=True)  # the store failing now is named as the store's
            if isinstance(exc, AnalysisException):  # the Parquet decodes, but not to a checkpoint's columns
                why = f"it cannot be read as a checkpoint ({first_line(exc)})"
                raise _unusable(path, info, why, _CHECK_FIRST) from None
            io = io_cause(exc)
            if io is None:
                raise  # Spark's own failure (a lost executor, a cancelled job): nothing says the file is bad
            raise StorageError(
                f"its bytes decode, but Spark's read of it failed ({io})", path=str(path)
            ) from exc
        return counts.get(path.name, ActionCounts(0, 0, 0))

    def _decode(self, path: Location, info: FileInfo, *, every_row_group: bool) -> None:
        """Read ``path`` through the store on the driver: its footer, or ``every_row_group``. The store's
        own error (a :class:`StorageError`, or an I/O error with an ``errno``) is raised as the store's;
        bytes pyarrow cannot decode (its errors carry no ``errno``) are :class:`CheckpointCorrupt`."""
        import pyarrow.parquet as pq

        try:
            with self.storage.open_read(path) as handle:
                parquet = pq.ParquetFile(handle)
                if every_row_group:
                    for _ in parquet.iter_batches():
                        pass
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            if isinstance(exc, OSError) and exc.errno is not None:
                raise StorageError(f"cannot read it: {exc.strerror}", path=str(path)) from exc
            raise _unusable(path, info, f"it cannot be read as Parquet ({exc})", _CHECK_FIRST) from None


#: What to do about a taken name whose file could not be decoded: a file under a checkpoint's name is never
#: to be removed unseen (it may be one a version needs once its commits have expired, damaged in part).
_CHECK_FIRST = "check the file before removing it"


def _unusable(path: Location, info: FileInfo, why: str, advice: str) -> CheckpointCorrupt:
    """The error for a taken classic name or part whose file no reader can use (module docs)."""
    return CheckpointCorrupt(
        f"{path.name} exists ({info.size} bytes) but {why}: it does not describe the state and is not "
        f"replaced; {advice}",
        path=str(path),
        rule="CKPT-WRITE-008",
    )


def _written(name: str, role: FileRole, info: FileInfo, counts: ActionCounts, kept: bool) -> WrittenFile:
    """The record of a checkpoint file at ``name``: its listed size and time, its rows read back."""
    return WrittenFile(
        name,
        role,
        info.size,
        info.mtime_ms,
        counts.rows,
        counts.adds,
        counts.removes,
        kept,
        counts.oldest_tombstone,
    )
