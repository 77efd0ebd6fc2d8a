"""Tables built by the real writers — delta-spark itself, and deltalake — one function per shape.

Every builder takes a session (or nothing, for deltalake) and an empty directory, writes a tiny
table (a handful of rows, one or two files per commit) and returns a :class:`BuiltTable` saying
where the table is, which version its newest checkpoint has and what kind it is. Session
configuration a builder needs is set with :func:`~conformance.oracles.session.temporary_conf`, which restores the previous values
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

Source tables of the writer tests (no checkpoint: ``delta.checkpointInterval`` is 1000, so
delta-spark never checkpoints them by itself), built by delta-spark with real data files:

| shape | what it holds |
|---|---|
| ``plain`` | unpartitioned, 2 appends (4 files), protocol (1, 2) |
| ``rich`` | partitioned by a string column with a null partition; deletion vectors (one file's DV replaced by a second DELETE); row tracking (``delta.rowTracking`` domainMetadata, ``baseRowId``); ``txn`` of two app ids; a whole-partition DELETE (live tombstones) |
| ``empty`` | every row deleted: 0 live files, only tombstones |
| ``files_10k`` | hand-written (:mod:`conformance.tables.builder`): one commit of 10,000 small adds, then 10 of them removed; no data files |

Variant ``v2`` of a shape is the same table plus one commit that sets
``delta.checkpointPolicy = v2`` (:func:`enable_v2`, which adds the ``v2Checkpoint`` feature).

The cleanup base table (:func:`build_cleanup_base`): UUID-named V2 checkpoints written by
delta-spark at 2, 4 and 6, one at 3 sharing checkpoint 2's sidecars, a log compaction 1..2, and
every file of version ``v`` stamped ``8 - v`` days before today (:func:`stamp_cleanup_base`).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from conformance.decode.names import DELTA_LOG, SIDECAR_DIR, checksum_owner, parse_name
from conformance.oracles.session import temporary_conf
from conformance.tables.builder import (
    NO_AUTO_CHECKPOINT_INTERVAL,
    add,
    commit_info,
    metadata,
    protocol,
    remove,
    schema,
    schema_field,
    stats_json,
    v2_protocol,
    write_log,
)
from spec.vocabulary import LogFileKind

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS

#: Session keys (all under ``spark.databricks.delta.``) the builders use.
PART_SIZE = "spark.databricks.delta.checkpoint.partSize"
TOP_LEVEL_FORMAT = "spark.databricks.delta.checkpointV2.topLevelFileFormat"
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


@dataclass(frozen=True)
class BuiltTable:
    """A table a real writer built.

    ``checkpoint_version`` is the newest checkpoint's version; ``checkpoint_kind`` is ``classic``,
    ``multi-part`` or ``uuid`` (UUID-named V2) — the values of
    :class:`~spec.vocabulary.LogFileKind`; ``checkpoint_files`` are the checkpoint file names
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


def checkpoint_files(log_dir: Path, version: int | None = None) -> tuple[str, ...]:
    """Names of every checkpoint file (any kind, non-hidden) in ``log_dir``, or only at ``version``."""
    names = []
    for entry in sorted(os.listdir(log_dir)):
        parsed = parse_name(entry)
        if parsed.kind.is_checkpoint and (version is None or parsed.version == version):
            names.append(entry)
    return tuple(names)


def checkpoint_versions(log_dir: Path) -> list[int]:
    """Versions that have at least one checkpoint file, ascending."""
    out = set()
    for entry in os.listdir(log_dir):
        parsed = parse_name(entry)
        if parsed.kind.is_checkpoint and parsed.version is not None:
            out.add(parsed.version)
    return sorted(out)


def commit_versions(log_dir: Path) -> list[int]:
    out = []
    for entry in os.listdir(log_dir):
        parsed = parse_name(entry)
        if parsed.kind is LogFileKind.COMMIT and parsed.version is not None:
            out.append(parsed.version)
    return sorted(out)


def sidecar_files(log_dir: Path) -> list[str]:
    """Names of the (non-hidden) sidecar files of ``log_dir``."""
    directory = log_dir / SIDECAR_DIR
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
    kinds = {parse_name(f).kind.value for f in files}
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
            spark,
            path,
            "id BIGINT",
            {"delta.checkpointInterval": str(interval), "delta.checkpointPolicy": "v2"},
        )
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
        parsed = parse_name(entry)
        if parsed.version is not None and parsed.version <= max_version:
            os.utime(log_dir / entry, (old, old))


def build_v2_compat(spark: SparkSession, path: Path) -> BuiltTable:
    """A UUID-named V2 checkpoint next to the compatibility copy delta-spark's metadata cleanup made.

    ``delta.logRetentionDuration`` is 1 hour; checkpoints at 3 and 6 (interval 3). Before version 6
    is committed, the log files of versions 0..2 are aged by 3 days, so the cleanup that follows the
    checkpoint at 6 — run with the snapshot that was built from the checkpoint at 3 — expires them.
    Before deleting anything delta-spark writes ``3.checkpoint.parquet``: a classic-named copy of
    the UUID-named top-level file at 3, with the same sidecars (protocol-notes §4.6,
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
        if {"classic", "uuid"} <= {parse_name(f).kind.value for f in checkpoint_files(log_dir, v)}
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
        spark,
        path,
        "id BIGINT",
        {"delta.checkpointInterval": "2", "delta.enableDeletionVectors": "true"},
    )
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
            .selectExpr(
                "id", "CASE WHEN id % 3 = 2 THEN NULL ELSE concat('p', cast(id % 3 AS STRING)) END AS part"
            )
            .write.format("delta")
            .mode("append")
            .save(str(path))
        )
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
        spark,
        path,
        "id BIGINT",
        {"delta.checkpointInterval": "3", "delta.deletedFileRetentionDuration": "interval 1 hours"},
    )
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
            path,
            i * 4,
            4,
            partition_by=["part"],
            commit_properties=CommitProperties(app_transactions=[Transaction(app_id="dl-app", version=i)]),
        )
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


# -- source tables of the writer tests ---------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A built table: where it is, its latest version, and what a test needs to know about it."""

    name: str
    variant: Literal["classic", "v2"]
    path: Path
    version: int
    has_data: bool
    txn_app_ids: tuple[str, ...] = ()
    notes: Mapping[str, Any] = field(default_factory=dict)


def _latest_commit(table: Path) -> int:
    return commit_versions(table / DELTA_LOG)[-1]


def _no_checkpoint(table: Path, name: str) -> None:
    found = checkpoint_files(table / DELTA_LOG)
    if found:
        raise AssertionError(f"delta-spark checkpointed the {name} table by itself: {found}")


def _create_without_checkpoints(
    spark: SparkSession, path: Path, columns: str, properties: Mapping[str, str], extra: str = ""
) -> None:
    interval = {"delta.checkpointInterval": NO_AUTO_CHECKPOINT_INTERVAL}
    props = ", ".join(f"'{k}' = '{v}'" for k, v in {**interval, **properties}.items())
    spark.sql(f"CREATE TABLE delta.`{path}` ({columns}) USING delta {extra} TBLPROPERTIES ({props})")


def build_plain(spark: SparkSession, path: Path) -> Shape:
    """Unpartitioned, protocol (1, 2): two appends of 2 files each (versions 0..2)."""
    _create_without_checkpoints(spark, path, "id BIGINT, name STRING", {})
    for start in (0, 10):
        spark.range(start, start + 6, 1, 2).selectExpr("id", "concat('n', id) AS name").write.format(
            "delta"
        ).mode("append").save(str(path))
    _no_checkpoint(path, "plain")
    return Shape("plain", "classic", path, _latest_commit(path), has_data=True)


def build_empty(spark: SparkSession, path: Path) -> Shape:
    """One append (2 files), then ``DELETE`` of every row: 0 live files, 2 tombstones (version 2)."""
    _create_without_checkpoints(spark, path, "id BIGINT", {})
    spark.range(0, 4, 1, 2).write.format("delta").mode("append").save(str(path))
    spark.sql(f"DELETE FROM delta.`{path}`")
    _no_checkpoint(path, "empty")
    return Shape("empty", "classic", path, _latest_commit(path), has_data=True)


def build_rich(spark: SparkSession, path: Path) -> Shape:
    """Partitioned (null partition), deletion vectors (one replaced), row tracking, txns, tombstones.

    | version | what |
    |---|---|
    | 0 | CREATE, partitioned by ``part``; DVs and row tracking enabled (``delta.rowTracking`` domain) |
    | 1..3 | appends of 30 rows in 2 Spark partitions × 3 partition values (one null); ``txn`` app-a 1, app-b 7, app-a 2 |
    | 4 | ``DELETE id = 1``: a deletion vector on the file holding ids 1, 4, 7, 10, 13 (part ``p1``) |
    | 5 | ``DELETE id = 4``: the same file again, so its DV is replaced: ``(path, dv1)`` becomes a tombstone |
    | 6 | ``DELETE part = 'p0'``: whole files removed (tombstones) |
    """
    _create_without_checkpoints(
        spark,
        path,
        "id BIGINT, name STRING, part STRING",
        {"delta.enableDeletionVectors": "true", "delta.enableRowTracking": "true"},
        "PARTITIONED BY (part)",
    )
    for i, (app, version) in enumerate((("app-a", "1"), ("app-b", "7"), ("app-a", "2"))):
        (
            spark.range(i * 100, i * 100 + 30, 1, 2)
            .selectExpr(
                "id",
                "concat('n', id) AS name",
                "CASE WHEN id % 3 = 2 THEN NULL ELSE concat('p', cast(id % 3 AS STRING)) END AS part",
            )
            .write.format("delta")
            .mode("append")
            .option("txnAppId", app)
            .option("txnVersion", version)
            .save(str(path))
        )
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 1")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 4")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE part = 'p0'")
    _no_checkpoint(path, "rich")
    return Shape("rich", "classic", path, _latest_commit(path), has_data=True, txn_app_ids=("app-a", "app-b"))


FILES_10K = 10_000
FILES_10K_REMOVED = 10


def build_files_10k(path: Path, *, v2: bool) -> Shape:
    """Hand-written: commit 1 adds 10,000 files, commit 2 removes 10 of them (fresh tombstones)."""
    table_schema = schema(schema_field("id", "long"))
    configuration = {"delta.checkpointPolicy": "v2"} if v2 else {}
    proto = v2_protocol() if v2 else protocol(1, 2)
    stamp = int(time.time() * 1000)
    adds = [
        add(
            f"part-{i:05d}-00000000-0000-4000-8000-{i:012d}-c000.snappy.parquet",
            size=500 + i % 97,
            modification_time=1_700_000_000_000 + i,
            stats=stats_json(10, {"id": i * 10}, {"id": i * 10 + 9}, {"id": 0}),
        )
        for i in range(FILES_10K)
    ]
    removes = [
        remove(
            f"part-{i:05d}-00000000-0000-4000-8000-{i:012d}-c000.snappy.parquet",
            deletion_timestamp=stamp,
            size=500 + i % 97,
        )
        for i in range(FILES_10K_REMOVED)
    ]
    write_log(
        path,
        [
            [proto, metadata(table_schema, configuration=configuration)],
            [commit_info(), *adds],
            [commit_info(), *removes],
        ],
    )
    return Shape("files_10k", "v2" if v2 else "classic", path, 2, has_data=False)


def enable_v2(spark: SparkSession, shape: Shape, path: Path) -> Shape:
    """Copy ``shape`` to ``path`` and commit ``delta.checkpointPolicy = v2`` (adds ``v2Checkpoint``)."""
    shutil.copytree(shape.path, path)
    spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.checkpointPolicy' = 'v2')")
    _no_checkpoint(path, f"{shape.name} (v2)")
    return Shape(shape.name, "v2", path, _latest_commit(path), shape.has_data, shape.txn_app_ids, shape.notes)


WRITER_SHAPE_BUILDERS = {"plain": build_plain, "rich": build_rich, "empty": build_empty}


# -- the cleanup base table --------------------------------------------------------------------


D0 = int(time.time() * 1000) // DAY_MS * DAY_MS
NOW = D0 + 12 * HOUR_MS
NEWEST = 8  # commit v is (NEWEST - v) days before D0 (+6 h)


def commit_time(version: int) -> int:
    return D0 - (NEWEST - version) * DAY_MS + 6 * HOUR_MS


@dataclass(frozen=True)
class CleanupBase:
    path: Path
    checkpoints: Mapping[int, str]  # version -> top-level file name
    sidecars: Mapping[int, tuple[str, ...]]  # version -> sidecar names its checkpoint references
    compaction: str

    @property
    def log_dir(self) -> Path:
        return self.path / DELTA_LOG


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_lines(path: Path, actions: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions))


def top_level_files(log_dir: Path) -> dict[int, str]:
    out = {}
    for name in sorted(os.listdir(log_dir)):
        parsed = parse_name(name)
        if parsed.kind is LogFileKind.CHECKPOINT_UUID and parsed.version is not None:
            out[parsed.version] = name
    return out


def sidecar_refs(log_dir: Path, top_level: str) -> tuple[str, ...]:
    return tuple(sorted(str(a["sidecar"]["path"]) for a in _lines(log_dir / top_level) if "sidecar" in a))  # type: ignore[index]


def build_cleanup_base(spark: SparkSession, path: Path) -> CleanupBase:
    props = {
        "delta.checkpointInterval": "2",
        "delta.checkpointPolicy": "v2",
        "delta.logRetentionDuration": "interval 3 days",
        "delta.deletedFileRetentionDuration": "interval 1 days",
    }
    conf = {
        "spark.databricks.delta.checkpoint.partSize": "2",
        "spark.databricks.delta.checkpointV2.topLevelFileFormat": "json",
    }
    with temporary_conf(spark, conf):
        listed = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
        spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta TBLPROPERTIES ({listed})")
        for i in range(2):
            spark.range(i * 4, i * 4 + 4, 1, 2).write.format("delta").mode("append").save(str(path))
        spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('x' = '1')")
        for i in range(3):
            spark.range(100 + i * 4, 104 + i * 4, 1, 2).write.format("delta").mode("append").save(str(path))
    log_dir = path / DELTA_LOG
    tops = top_level_files(log_dir)
    assert sorted(tops) == [2, 4, 6], tops
    # A UUID-named checkpoint at 3 that shares checkpoint 2's sidecars: version 3 changed no file.
    at2 = _lines(log_dir / tops[2])
    commit3 = _lines(log_dir / f"{3:020d}.json")
    shared = [a for a in at2 if "sidecar" in a]
    protocol = [a for a in at2 if "protocol" in a]
    metadata = [a for a in commit3 if "metaData" in a]
    assert len(protocol) == 1 and len(metadata) == 1 and len(shared) >= 2
    name3 = f"{3:020d}.checkpoint.{uuid.uuid4()}.json"
    _write_lines(
        log_dir / name3, [{"checkpointMetadata": {"version": 3, "tags": {}}}, *shared, *protocol, *metadata]
    )
    tops[3] = name3
    # A log compaction of commits 1..2 (their file actions).
    compaction = f"{1:020d}.{2:020d}.compacted.json"
    actions = [a for v in (1, 2) for a in _lines(log_dir / f"{v:020d}.json") if "add" in a]
    _write_lines(log_dir / compaction, actions)
    base = CleanupBase(
        path, dict(sorted(tops.items())), {v: sidecar_refs(log_dir, n) for v, n in tops.items()}, compaction
    )
    stamp_cleanup_base(base)
    return base


def _set(path: Path, ms: int) -> None:
    os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


def stamp_cleanup_base(base: CleanupBase) -> None:
    """Set every log file's modification time from its version (see the module docs)."""
    log_dir = base.log_dir
    sidecar_version = {name: v for v, names in base.sidecars.items() for name in names if v != 3}
    for entry in os.listdir(log_dir):
        full = log_dir / entry
        if not full.is_file():
            continue
        bare = checksum_owner(entry) or entry
        parsed = parse_name(bare)
        if parsed.version is None:
            continue
        offset = {LogFileKind.COMMIT: 0, LogFileKind.CRC: 1_000}.get(parsed.kind, 2_000)
        if parsed.kind is LogFileKind.COMPACTION:
            version, offset = parsed.end_version or parsed.version, 3_000
        else:
            version = parsed.version
        _set(full, commit_time(version) + offset)
    for entry in os.listdir(log_dir / SIDECAR_DIR):
        bare = checksum_owner(entry) or entry
        _set(log_dir / SIDECAR_DIR / entry, commit_time(sidecar_version[bare]) + 2_000)


def copy_cleanup_base(base: CleanupBase, target: Path) -> CleanupBase:
    """A private copy (modification times preserved)."""
    shutil.copytree(base.path, target)
    return CleanupBase(target, base.checkpoints, base.sidecars, base.compaction)
