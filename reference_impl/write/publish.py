"""Publication: staged files appear under their final names, create-if-absent; sidecars are re-checked.

Spec: ``spec/checkpoints.md`` §17.2 Publication order and self-checks (``CKPT-WRITE-004``,
``CKPT-WRITE-005``), §17.3 Atomicity (``CKPT-WRITE-006``: never replace a file), ``CKPT-WRITE-008``
(an existing classic file or part of the same version may be kept).

A :class:`Publisher` publishes into one ``_delta_log`` through the table's storage. A file is
published only if its name is free; a classic file or part that appeared meanwhile is kept (it
describes the same state), a sidecar or UUID-named file that appeared meanwhile is an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference_impl.errors import SelfCheckFailed, StorageError
from reference_impl.storage import FileInfo, Location, Storage
from reference_impl.write.result import FileRole, WrittenFile
from reference_impl.write.staging import ActionCounts, read_back_counts

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class Publisher:
    """Publishes files of one checkpoint into ``log_dir``."""

    def __init__(
        self, spark: SparkSession, storage: Storage, log_dir: Location, file_time_ms: int | None
    ) -> None:
        self.spark = spark
        self.storage = storage
        self.log_dir = log_dir
        self.file_time_ms = file_time_ms

    def publish(
        self, staged: Location, name: str, role: FileRole, counts: ActionCounts, *, unique_name: bool = False
    ) -> WrittenFile:
        """Publish the staged file ``staged`` as ``name`` (relative to ``_delta_log``)."""
        final = self.log_dir / name
        try:
            info = self._timestamped(self.storage.publish_new(staged, final, unique_name=unique_name), final)
            kept = False
        except FileExistsError:
            # CKPT-WRITE-008: a classic file or part of the same version describes the same state; keep it.
            self.storage.delete(staged)
            existing = self.storage.stat(final)
            if existing is None or role is FileRole.SIDECAR:
                raise StorageError("a file with this name appeared and vanished", path=str(final)) from None
            info, counts, kept = existing, self._describe_existing(final), True
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

    def _describe_existing(self, path: Location) -> ActionCounts:
        counts = read_back_counts(self.spark.read.parquet(path.spark_uri()))
        return counts.get(path.name, ActionCounts(0, 0, 0))
