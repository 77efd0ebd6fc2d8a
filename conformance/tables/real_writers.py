"""Tables built by the real writers — delta-spark itself, and deltalake — one function per shape.

Every builder takes a session (or nothing, for deltalake) and an empty directory, writes a tiny
table (a handful of rows, one or two files per commit) and returns a :class:`BuiltTable` saying
where the table is, which version its newest checkpoint has and what kind it is. Session
configuration a builder needs is set with :func:`~reference_impl.spark.session.temporary_conf`, which restores the previous values
afterwards, so builders never leak settings into each other or into the tests.

| builder | checkpoint delta-spark (or deltalake) writes |
|---|---|
| :func:`build_v1_classic` | classic V1 ``n.checkpoint.parquet`` at 2 and 4 (interval 2) |
| :func:`build_multipart` | multi-part V1, 3 parts (``checkpoint.partSize=2``) |
| :func:`build_v2_json` / :func:`build_v2_parquet` | UUID-named V2 (JSON / Parquet top-level file), several sidecars |
| :func:`build_v2_compat` | UUID-named V2 *and* the classic-named compatibility copy made by metadata cleanup |
| :func:`build_deletion_vectors` | classic V1 holding ``add`` rows with deletion vectors |
| :func:`build_partitioned` | classic V1, partitioned by a string column |
| :func:`build_txn` | classic V1 holding ``txn`` rows for two app ids |
| :func:`build_domain_metadata` | V2 (JSON) of a clustered, row-tracking table: ``domainMetadata`` rows |
| :func:`build_removes` | classic V1 holding tombstones (retention 1 hour) and more removes after it |
| :func:`build_deltalake_plain` | deltalake: classic V1 ``n.checkpoint.parquet`` |
| :func:`build_deltalake_v2` | deltalake: classic-named V2 (``checkpointMetadata`` row, no sidecars) |
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reference_impl.log.naming import DELTA_LOG, LogFileKind, parse_log_file_name
from reference_impl.spark.session import temporary_conf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Session keys (all under ``spark.databricks.delta.``) the builders use.
PART_SIZE = "spark.databricks.delta.checkpoint.partSize"
TOP_LEVEL_FORMAT = "spark.databricks.delta.checkpointV2.topLevelFileFormat"
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


@dataclass(frozen=True)
class BuiltTable:
    """A table a real writer built.

    ``checkpoint_version`` is the newest checkpoint's version; ``checkpoint_kind`` is ``classic``,
    ``multi-part`` or ``uuid`` (UUID-named V2) — the values of
    :class:`~reference_impl.log.naming.LogFileKind`; ``checkpoint_files`` are the checkpoint file names
    at that version; ``older_checkpoint_version`` is the next older checkpoint, if any;
    ``txn_app_ids`` the app ids the builder wrote ``txn`` actions for; ``notes`` shape-specific facts
    (e.g. where the compatibility checkpoint is).
    """

    name: str
    path: Path
    latest_version: int
    checkpoint_version: int
    checkpoint_kind: str
    checkpoint_files: tuple[str, ...]
    writer: str = "delta-spark"
    older_checkpoint_version: int | None = None
    txn_app_ids: tuple[str, ...] = ()
    notes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def log_dir(self) -> Path:
        return self.path / DELTA_LOG


def checkpoint_files(log_dir: Path, version: int) -> tuple[str, ...]:
    """Names of every checkpoint file (any kind, non-hidden) at ``version`` in ``log_dir``."""
    names = []
    for entry in sorted(os.listdir(log_dir)):
        parsed = parse_log_file_name(entry)
        if parsed.kind.is_checkpoint and parsed.version == version:
            names.append(entry)
    return tuple(names)


def checkpoint_versions(log_dir: Path) -> list[int]:
    """Versions that have at least one checkpoint file, ascending."""
    out = set()
    for entry in os.listdir(log_dir):
        parsed = parse_log_file_name(entry)
        if parsed.kind.is_checkpoint and parsed.version is not None:
            out.add(parsed.version)
    return sorted(out)


def commit_versions(log_dir: Path) -> list[int]:
    out = []
    for entry in os.listdir(log_dir):
        parsed = parse_log_file_name(entry)
        if parsed.kind is LogFileKind.COMMIT and parsed.version is not None:
            out.append(parsed.version)
    return sorted(out)


def sidecar_files(log_dir: Path) -> list[str]:
    directory = log_dir / "_sidecars"
    if not directory.is_dir():
        return []
    return sorted(n for n in os.listdir(directory) if not n.startswith("."))


def _describe(
    name: str,
    path: Path,
    *,
    expected_kind: str,
    writer: str = "delta-spark",
    txn_app_ids: tuple[str, ...] = (),
    notes: Mapping[str, Any] | None = None,
) -> BuiltTable:
    """Describe what the writer left, and check it really wrote the expected checkpoint kind."""
    log_dir = path / DELTA_LOG
    versions = checkpoint_versions(log_dir)
    if not versions:
        raise AssertionError(f"{writer} wrote no checkpoint for table {name} at {path}")
    newest = versions[-1]
    files = checkpoint_files(log_dir, newest)
    kinds = {parse_log_file_name(f).kind.value for f in files}
    if expected_kind not in kinds:
        raise AssertionError(
            f"{writer} wrote {sorted(kinds)} checkpoint(s) at version {newest} of table {name}, "
            f"expected {expected_kind}: {files}"
        )
    return BuiltTable(
        name=name,
        path=path,
        latest_version=commit_versions(log_dir)[-1],
        checkpoint_version=newest,
        checkpoint_kind=expected_kind,
        checkpoint_files=files,
        writer=writer,
        older_checkpoint_version=versions[-2] if len(versions) > 1 else None,
        txn_app_ids=txn_app_ids,
        notes=dict(notes or {}),
    )


def _append(
    spark: SparkSession, path: Path, start: int, count: int, *, parts: int = 1, **options: str
) -> None:
    writer = spark.range(start, start + count, 1, parts).write.format("delta").mode("append")
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save(str(path))


def _create(
    spark: SparkSession, path: Path, columns: str, properties: Mapping[str, str], extra: str = ""
) -> None:
    props = ", ".join(f"'{k}' = '{v}'" for k, v in properties.items())
    spark.sql(f"CREATE TABLE delta.`{path}` ({columns}) USING delta {extra} TBLPROPERTIES ({props})")


# --------------------------------------------------------------------------------------------------
# delta-spark builders
# --------------------------------------------------------------------------------------------------


def build_v1_classic(spark: SparkSession, path: Path) -> BuiltTable:
    """Versions 0..5; classic V1 checkpoints at 2 and 4 (``checkpointInterval=2``)."""
    _create(spark, path, "id BIGINT", {"delta.checkpointInterval": "2"})
    for i in range(5):
        _append(spark, path, i * 3, 3)
    return _describe("v1-classic", path, expected_kind="classic")


def build_multipart(spark: SparkSession, path: Path) -> BuiltTable:
    """Versions 0..4; a 3-part V1 checkpoint at 3 (6 files, ``checkpoint.partSize=2``)."""
    with temporary_conf(spark, {PART_SIZE: "2"}):
        _create(spark, path, "id BIGINT", {"delta.checkpointInterval": "3"})
        for i in range(4):
            _append(spark, path, i * 4, 4, parts=2)
    return _describe("multi-part", path, expected_kind="multi-part")


def _build_v2(
    spark: SparkSession, path: Path, fmt: str, name: str, interval: int, commits: int
) -> BuiltTable:
    with temporary_conf(spark, {PART_SIZE: "2", TOP_LEVEL_FORMAT: fmt}):
        _create(
            spark, path, "id BIGINT",
            {"delta.checkpointInterval": str(interval), "delta.checkpointPolicy": "v2"},
        )  # fmt: skip
        for i in range(commits):
            _append(spark, path, i * 4, 4, parts=2)
    built = _describe(name, path, expected_kind="uuid")
    if not all(f.endswith(f".{fmt}") for f in built.checkpoint_files):
        raise AssertionError(f"delta-spark wrote {built.checkpoint_files} for {name}, expected .{fmt}")
    if len(sidecar_files(built.log_dir)) < 2:
        raise AssertionError(
            f"delta-spark wrote fewer than 2 sidecars for {name}: {sidecar_files(built.log_dir)}"
        )
    return built


def build_v2_json(spark: SparkSession, path: Path) -> BuiltTable:
    """Versions 0..5; UUID-named V2 checkpoints (JSON top-level file) at 2 and 4, 2-4 sidecars each."""
    return _build_v2(spark, path, "json", "v2-json", interval=2, commits=5)


def build_v2_parquet(spark: SparkSession, path: Path) -> BuiltTable:
    """Versions 0..4; a UUID-named V2 checkpoint (Parquet top-level file) at 3 with 3 sidecars."""
    return _build_v2(spark, path, "parquet", "v2-parquet", interval=3, commits=4)


def _age_log(log_dir: Path, max_version: int, age_s: float) -> None:
    """Set the modification time of every log file at version <= ``max_version`` ``age_s`` back."""
    old = time.time() - age_s
    for entry in os.listdir(log_dir):
        parsed = parse_log_file_name(entry)
        if parsed.version is not None and parsed.version <= max_version:
            os.utime(log_dir / entry, (old, old))


def build_v2_compat(spark: SparkSession, path: Path) -> BuiltTable:
    """A UUID-named V2 checkpoint next to the compatibility copy delta-spark's metadata cleanup made.

    ``delta.logRetentionDuration`` is 1 hour; checkpoints at 3 and 6 (interval 3). Before version 6
    is committed, the log files of versions 0..2 are aged by 3 days, so the cleanup that follows the
    checkpoint at 6 — run with the snapshot that was built from the checkpoint at 3 — expires them.
    Before deleting anything delta-spark writes ``3.checkpoint.parquet``: a classic-named copy of
    the UUID-named manifest at 3, with the same sidecars (protocol-notes §4.6,
    ``MetadataCleanup.createSinglePartCheckpointForBackwardCompat``). Left: version 3 with both
    files, commits 3..6, and a UUID-named checkpoint at 6.

    (When *every* file before version 6 is aged, the UUID-named file at 3 is deleted too — the
    fresh compatibility copy ends the deletion buffer — and so are commits 3..5.)
    """
    props = {
        "delta.checkpointInterval": "3",
        "delta.checkpointPolicy": "v2",
        "delta.logRetentionDuration": "interval 1 hours",
        "delta.deletedFileRetentionDuration": "interval 1 hours",
    }
    with temporary_conf(spark, {PART_SIZE: "2", TOP_LEVEL_FORMAT: "json", RETENTION_CHECK: "false"}):
        _create(spark, path, "id BIGINT", props)
        for i in range(5):
            _append(spark, path, i * 4, 4, parts=2)  # versions 1..5, checkpoint at 3
        _age_log(path / DELTA_LOG, 2, 3 * 86_400)
        _append(spark, path, 100, 2)  # version 6: checkpoint, then cleanup
    log_dir = path / DELTA_LOG
    compat = [
        v
        for v in checkpoint_versions(log_dir)
        if {"classic", "uuid"} <= {parse_log_file_name(f).kind.value for f in checkpoint_files(log_dir, v)}
    ]
    if not compat:
        raise AssertionError(
            "delta-spark's metadata cleanup left no compatibility checkpoint next to a UUID-named one "
            f"in {log_dir}: {sorted(os.listdir(log_dir))}"
        )
    built = _describe("v2-compat", path, expected_kind="uuid")
    return replace(
        built, notes={"compat_version": compat[-1], "compat_files": checkpoint_files(log_dir, compat[-1])}
    )


def build_deletion_vectors(spark: SparkSession, path: Path) -> BuiltTable:
    """Deletion vectors: a DELETE before the classic checkpoint at 2 and one after it on the same file.

    The second DELETE replaces the file's deletion vector, so the same path is live with a new DV
    id after the checkpoint and the checkpoint's DV id is a tombstone: file identity is
    ``(path, deletionVector unique id)``.
    """
    _create(
        spark, path, "id BIGINT",
        {"delta.checkpointInterval": "2", "delta.enableDeletionVectors": "true"},
    )  # fmt: skip
    _append(spark, path, 0, 10, parts=2)  # v1
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id IN (1, 7)")  # v2 (checkpoint)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id IN (2, 3)")  # v3
    return _describe("deletion-vectors", path, expected_kind="classic")


def build_partitioned(spark: SparkSession, path: Path) -> BuiltTable:
    """Partitioned by ``part`` (string; one null partition); classic checkpoint at 3, a DELETE at 4."""
    _create(spark, path, "id BIGINT, part STRING", {"delta.checkpointInterval": "3"}, "PARTITIONED BY (part)")
    for i in range(3):
        (
            spark.range(i * 4, i * 4 + 4, 1, 1)
            .selectExpr("id", "CASE WHEN id % 3 = 2 THEN NULL ELSE concat('p', cast(id % 3 AS STRING)) END AS part")
            .write.format("delta").mode("append").save(str(path))
        )  # fmt: skip
    spark.sql(f"DELETE FROM delta.`{path}` WHERE part = 'p0'")
    return _describe("partitioned", path, expected_kind="classic")


def build_txn(spark: SparkSession, path: Path) -> BuiltTable:
    """``txn`` actions for app ids ``app-a`` and ``app-b``; classic checkpoint at 3, one more txn after."""
    _create(spark, path, "id BIGINT", {"delta.checkpointInterval": "3"})
    _append(spark, path, 0, 2, txnAppId="app-a", txnVersion="1")  # v1
    _append(spark, path, 2, 2, txnAppId="app-b", txnVersion="7")  # v2
    _append(spark, path, 4, 2, txnAppId="app-a", txnVersion="2")  # v3 (checkpoint)
    _append(spark, path, 6, 2, txnAppId="app-b", txnVersion="8")  # v4
    return _describe("txn", path, expected_kind="classic", txn_app_ids=("app-a", "app-b"))


def build_domain_metadata(spark: SparkSession, path: Path) -> BuiltTable:
    """A clustered table with row tracking: ``delta.clustering`` and ``delta.rowTracking`` domains.

    V2 checkpoint (JSON top-level file) at 2; ``ALTER TABLE … CLUSTER BY`` at version 3 changes the
    ``delta.clustering`` domain after the checkpoint.
    """
    props = {
        "delta.checkpointInterval": "2",
        "delta.checkpointPolicy": "v2",
        "delta.enableRowTracking": "true",
    }
    with temporary_conf(spark, {PART_SIZE: "2", TOP_LEVEL_FORMAT: "json"}):
        _create(spark, path, "id BIGINT, k BIGINT", props, "CLUSTER BY (id)")
        for i in range(2):  # v1, v2 (checkpoint)
            spark.range(i * 4, i * 4 + 4, 1, 2).selectExpr("id", "id % 2 AS k").write.format("delta").mode(
                "append"
            ).save(str(path))
        spark.sql(f"ALTER TABLE delta.`{path}` CLUSTER BY (k)")  # v3
    return _describe("domain-metadata", path, expected_kind="uuid")


def build_removes(spark: SparkSession, path: Path) -> BuiltTable:
    """Tombstones in a checkpoint and after it; ``delta.deletedFileRetentionDuration`` is 1 hour.

    Version 2 overwrites (removing the files of version 1), the checkpoint at 3 keeps those fresh
    tombstones, version 4 deletes more. Read "now" every tombstone is within retention; read with a
    clock 2 hours ahead every tombstone is past it (the readers, not the writer, must drop them).
    """
    _create(
        spark, path, "id BIGINT",
        {"delta.checkpointInterval": "3", "delta.deletedFileRetentionDuration": "interval 1 hours"},
    )  # fmt: skip
    _append(spark, path, 0, 4, parts=2)  # v1
    spark.range(10, 14, 1, 2).write.format("delta").mode("overwrite").save(
        str(path)
    )  # v2: removes v1's files
    _append(spark, path, 20, 2)  # v3 (checkpoint)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id >= 20")  # v4: removes v3's file
    return _describe("removes", path, expected_kind="classic")


DELTA_SPARK_BUILDERS = {
    "v1-classic": build_v1_classic,
    "multi-part": build_multipart,
    "v2-json": build_v2_json,
    "v2-parquet": build_v2_parquet,
    "v2-compat": build_v2_compat,
    "deletion-vectors": build_deletion_vectors,
    "partitioned": build_partitioned,
    "txn": build_txn,
    "domain-metadata": build_domain_metadata,
    "removes": build_removes,
}


# --------------------------------------------------------------------------------------------------
# deltalake builders
# --------------------------------------------------------------------------------------------------


def _deltalake_append(path: Path, start: int, count: int, **kwargs: Any) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    ids = list(range(start, start + count))
    data = pa.table({"id": pa.array(ids, pa.int64()), "part": pa.array([f"p{i % 2}" for i in ids])})
    write_deltalake(str(path), data, mode="append", **kwargs)


def build_deltalake_plain(path: Path) -> BuiltTable:
    """deltalake: 4 appends (partitioned, with a ``txn``), ``create_checkpoint()`` at 3, a delete at 4."""
    from deltalake import CommitProperties, DeltaTable, Transaction

    for i in range(4):
        _deltalake_append(
            path, i * 4, 4, partition_by=["part"],
            commit_properties=CommitProperties(app_transactions=[Transaction(app_id="dl-app", version=i)]),
        )  # fmt: skip
    DeltaTable(str(path)).create_checkpoint()
    DeltaTable(str(path)).delete("id = 5")
    return _describe(
        "deltalake-plain", path, expected_kind="classic", writer="deltalake", txn_app_ids=("dl-app",)
    )


def build_deltalake_v2(path: Path) -> BuiltTable:
    """deltalake with ``v2Checkpoint``: ``create_checkpoint()`` writes a classic-named V2 checkpoint."""
    from deltalake import DeltaTable, TableFeatures

    _deltalake_append(path, 0, 4)
    _deltalake_append(path, 4, 4)
    DeltaTable(str(path)).alter.add_feature(TableFeatures.V2Checkpoint, allow_protocol_versions_increase=True)
    _deltalake_append(path, 8, 4)  # v3
    DeltaTable(str(path)).create_checkpoint()
    _deltalake_append(path, 12, 2)  # v4
    return _describe("deltalake-v2", path, expected_kind="classic", writer="deltalake")


DELTALAKE_BUILDERS = {
    "deltalake-plain": build_deltalake_plain,
    "deltalake-v2": build_deltalake_v2,
}


# --------------------------------------------------------------------------------------------------
# One build per shape per test session
# --------------------------------------------------------------------------------------------------


class TableCache:
    """Lazily built tables, one directory per shape; tests copy them before changing anything."""

    def __init__(self, spark: SparkSession, root: Path) -> None:
        self._spark = spark
        self._root = root
        self._built: dict[str, BuiltTable] = {}

    def get(self, shape: str) -> BuiltTable:
        """The table of ``shape``, built on first use (delta-spark shapes need delta-spark's jars)."""
        if shape not in self._built:
            path = self._root / shape
            if shape in DELTA_SPARK_BUILDERS:
                self._built[shape] = DELTA_SPARK_BUILDERS[shape](self._spark, path)
            elif shape in DELTALAKE_BUILDERS:
                self._built[shape] = DELTALAKE_BUILDERS[shape](path)
            else:
                raise KeyError(f"no table builder for shape {shape!r}")
        return self._built[shape]


_SHARED: list[TableCache] = []


def shared_cache(spark: SparkSession, make_root: Callable[[], Path]) -> TableCache:
    """The process-wide cache (so every test directory shares one build of each shape)."""
    if not _SHARED:
        _SHARED.append(TableCache(spark, make_root()))
    return _SHARED[0]
