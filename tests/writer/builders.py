"""Tables for the writer tests: hand-written logs (exact control, no Spark) and delta-spark-built tables.

Hand-written logs (:func:`write_commit` and the action helpers) give exact control over what the
writer must do — expired and live tombstones, ``txn`` retention, removed domains, column mapping,
``commitInfo``/``cdc`` rows — and cost no Spark job. They hold no data files, so only log-level
readers (delta-spark's snapshot, deltalake's ``DeltaTable`` metadata, our reader) read them.

delta-spark-built tables (``build_*``) have real data files, so data can be read back too. They are
built with ``delta.checkpointInterval = 1000``: delta-spark itself never checkpoints them, so the
only checkpoint a test sees is the one it writes.

| shape | what it holds |
|---|---|
| ``plain`` | unpartitioned, 2 appends (4 files), protocol (1, 2) |
| ``rich`` | partitioned by a string column with a null partition; deletion vectors (one file's DV replaced by a second DELETE); row tracking (``delta.rowTracking`` domainMetadata, ``baseRowId``); ``txn`` of two app ids; a whole-partition DELETE (live tombstones) |
| ``empty`` | every row deleted: 0 live files, only tombstones |
| ``files_10k`` | hand-written: one commit of 10,000 small adds, then 10 of them removed (9,990 files, 10 tombstones); no data files |

Variant ``v2`` of a shape is the same table plus one commit that sets
``delta.checkpointPolicy = v2`` (which adds the ``v2Checkpoint`` feature); variant ``classic`` is the
shape as built.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reference_impl.log.naming import DELTA_LOG, LogFileKind, commit_name, parse_log_file_name
from tests.reader.helpers import log_dir

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CHECKPOINT_INTERVAL = "1000"
HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS

# --------------------------------------------------------------------------------------------------
# actions (JSON form, as in commit files)
# --------------------------------------------------------------------------------------------------


def schema_field(
    name: str, type_: str | dict[str, Any], *, column_id: int | None = None, physical: str | None = None
) -> dict[str, Any]:
    """A field of a table schema; with ``column_id``/``physical`` it carries column-mapping metadata."""
    metadata: dict[str, Any] = {}
    if column_id is not None:
        metadata["delta.columnMapping.id"] = column_id
    if physical is not None:
        metadata["delta.columnMapping.physicalName"] = physical
    return {"name": name, "type": type_, "nullable": True, "metadata": metadata}


def schema(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "struct", "fields": list(fields)}


def protocol(
    reader: int = 1,
    writer: int = 2,
    *,
    reader_features: Sequence[str] | None = None,
    writer_features: Sequence[str] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"minReaderVersion": reader, "minWriterVersion": writer}
    if reader_features is not None:
        body["readerFeatures"] = list(reader_features)
    if writer_features is not None:
        body["writerFeatures"] = list(writer_features)
    return {"protocol": body}


def v2_protocol(*, reader_extra: Sequence[str] = (), writer_extra: Sequence[str] = ()) -> dict[str, Any]:
    """Protocol (3, 7) supporting ``v2Checkpoint`` (plus the extra features given)."""
    return protocol(
        3,
        7,
        reader_features=["v2Checkpoint", *reader_extra],
        writer_features=["appendOnly", "invariants", "v2Checkpoint", *writer_extra],
    )


def metadata(
    table_schema: Mapping[str, Any],
    *,
    partition_columns: Sequence[str] = (),
    configuration: Mapping[str, str] | None = None,
    table_id: str = "00000000-0000-4000-8000-000000000001",
) -> dict[str, Any]:
    return {
        "metaData": {
            "id": table_id,
            "format": {"provider": "parquet", "options": {}},
            "schemaString": json.dumps(table_schema),
            "partitionColumns": list(partition_columns),
            "configuration": {"delta.checkpointInterval": CHECKPOINT_INTERVAL, **(configuration or {})},
            "createdTime": 1_700_000_000_000,
        }
    }


def stats_json(
    records: int, minimum: Mapping[str, Any], maximum: Mapping[str, Any], nulls: Mapping[str, Any]
) -> str:
    return json.dumps(
        {
            "numRecords": records,
            "minValues": dict(minimum),
            "maxValues": dict(maximum),
            "nullCount": dict(nulls),
        },
        separators=(",", ":"),
    )


def add(
    path: str,
    *,
    partition_values: Mapping[str, str | None] | None = None,
    size: int = 1000,
    modification_time: int = 1_700_000_000_000,
    stats: str | None = None,
    tags: Mapping[str, str] | None = None,
    deletion_vector: Mapping[str, Any] | None = None,
    data_change: bool = True,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "path": path,
        "partitionValues": dict(partition_values or {}),
        "size": size,
        "modificationTime": modification_time,
        "dataChange": data_change,
    }
    return {"add": _with_optional(body, stats, tags, deletion_vector)}


def _with_optional(
    body: dict[str, Any],
    stats: str | None,
    tags: Mapping[str, str] | None,
    deletion_vector: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """``body`` plus the optional file-action fields that are set."""
    if stats is not None:
        body["stats"] = stats
    if tags is not None:
        body["tags"] = dict(tags)
    if deletion_vector is not None:
        body["deletionVector"] = dict(deletion_vector)
    return body


def remove(
    path: str,
    *,
    deletion_timestamp: int | None,
    partition_values: Mapping[str, str | None] | None = None,
    size: int | None = 1000,
    stats: str | None = None,
    tags: Mapping[str, str] | None = None,
    deletion_vector: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"path": path, "dataChange": True, "extendedFileMetadata": True,
                            "partitionValues": dict(partition_values or {})}  # fmt: skip
    if deletion_timestamp is not None:
        body["deletionTimestamp"] = deletion_timestamp
    if size is not None:
        body["size"] = size
    return {"remove": _with_optional(body, stats, tags, deletion_vector)}


def txn(app_id: str, version: int, last_updated: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"appId": app_id, "version": version}
    if last_updated is not None:
        body["lastUpdated"] = last_updated
    return {"txn": body}


def domain(name: str, configuration: str, *, removed: bool = False) -> dict[str, Any]:
    return {"domainMetadata": {"domain": name, "configuration": configuration, "removed": removed}}


def commit_info(timestamp: int = 1_700_000_000_000, operation: str = "WRITE") -> dict[str, Any]:
    return {"commitInfo": {"timestamp": timestamp, "operation": operation, "operationParameters": {}}}


def cdc(path: str) -> dict[str, Any]:
    return {"cdc": {"path": path, "partitionValues": {}, "size": 10, "dataChange": False}}


def write_commit(table: Path, version: int, actions: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``<table>/_delta_log/<version>.json`` (one action per line)."""
    log = table / DELTA_LOG
    log.mkdir(parents=True, exist_ok=True)
    path = log / commit_name(version)
    path.write_text("".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions))
    return path


def write_log(table: Path, commits: Sequence[Iterable[Mapping[str, Any]]]) -> Path:
    """Write commits ``0..len(commits)-1``; returns the table path."""
    for version, actions in enumerate(commits):
        write_commit(table, version, actions)
    return table


def now_ms() -> int:
    return int(time.time() * 1000)


# --------------------------------------------------------------------------------------------------
# log surgery and listings
# --------------------------------------------------------------------------------------------------


def checkpoint_names(table: Path) -> list[str]:
    """Every (non-hidden) checkpoint file name directly in ``_delta_log``."""
    return sorted(n for n in os.listdir(log_dir(table)) if parse_log_file_name(n).kind.is_checkpoint)


def sidecar_names(table: Path) -> list[str]:
    directory = log_dir(table) / "_sidecars"
    if not directory.is_dir():
        return []
    return sorted(n for n in os.listdir(directory) if not n.startswith("."))


def tree_listing(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file and directory under ``root`` (hidden ones included): ``relpath -> (kind, size, mtime_ns)``.

    Directories are listed with their own modification time, so creating *and* removing a
    temporary file inside one still shows up as a change.
    """
    out: dict[str, tuple[str, int, int]] = {}
    stat = root.stat()
    out["."] = ("dir", 0, stat.st_mtime_ns)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            path = Path(dirpath) / name
            st = path.stat()
            out[str(path.relative_to(root))] = ("dir", 0, st.st_mtime_ns)
        for name in filenames:
            path = Path(dirpath) / name
            st = path.stat()
            out[str(path.relative_to(root))] = ("file", st.st_size, st.st_mtime_ns)
    return out


def listing_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Human-readable differences of two :func:`tree_listing` results (``[]`` when equal)."""
    out = [f"created: {k}" for k in sorted(set(after) - set(before))]
    out += [f"deleted: {k}" for k in sorted(set(before) - set(after))]
    out += [
        f"changed: {k} {before[k]} -> {after[k]}"
        for k in sorted(set(before) & set(after))
        if before[k] != after[k]
    ]
    return out


# --------------------------------------------------------------------------------------------------
# shapes
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A built table: where it is, its latest version, and what a test needs to know about it."""

    name: str
    variant: str  # "classic" | "v2"
    path: Path
    version: int
    has_data: bool
    txn_app_ids: tuple[str, ...] = ()
    notes: Mapping[str, Any] = field(default_factory=dict)


def _latest_version(table: Path) -> int:
    versions = [
        p.version
        for p in (parse_log_file_name(n) for n in os.listdir(log_dir(table)))
        if p.kind is LogFileKind.COMMIT and p.version is not None
    ]
    return max(versions)


def _no_checkpoint(table: Path, name: str) -> None:
    found = checkpoint_names(table)
    if found:
        raise AssertionError(f"delta-spark checkpointed the {name} table by itself: {found}")


def _create(
    spark: SparkSession, path: Path, columns: str, properties: Mapping[str, str], extra: str = ""
) -> None:
    props = ", ".join(
        f"'{k}' = '{v}'" for k, v in {"delta.checkpointInterval": CHECKPOINT_INTERVAL, **properties}.items()
    )
    spark.sql(f"CREATE TABLE delta.`{path}` ({columns}) USING delta {extra} TBLPROPERTIES ({props})")


def build_plain(spark: SparkSession, path: Path) -> Shape:
    """Unpartitioned, protocol (1, 2): two appends of 2 files each (versions 0..2)."""
    _create(spark, path, "id BIGINT, name STRING", {})
    for start in (0, 10):
        spark.range(start, start + 6, 1, 2).selectExpr("id", "concat('n', id) AS name").write.format(
            "delta"
        ).mode("append").save(str(path))
    _no_checkpoint(path, "plain")
    return Shape("plain", "classic", path, _latest_version(path), has_data=True)


def build_empty(spark: SparkSession, path: Path) -> Shape:
    """One append (2 files), then ``DELETE`` of every row: 0 live files, 2 tombstones (version 2)."""
    _create(spark, path, "id BIGINT", {})
    spark.range(0, 4, 1, 2).write.format("delta").mode("append").save(str(path))
    spark.sql(f"DELETE FROM delta.`{path}`")
    _no_checkpoint(path, "empty")
    return Shape("empty", "classic", path, _latest_version(path), has_data=True)


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
    _create(
        spark, path, "id BIGINT, name STRING, part STRING",
        {"delta.enableDeletionVectors": "true", "delta.enableRowTracking": "true"},
        "PARTITIONED BY (part)",
    )  # fmt: skip
    for i, (app, version) in enumerate((("app-a", "1"), ("app-b", "7"), ("app-a", "2"))):
        (
            spark.range(i * 100, i * 100 + 30, 1, 2)
            .selectExpr(
                "id", "concat('n', id) AS name",
                "CASE WHEN id % 3 = 2 THEN NULL ELSE concat('p', cast(id % 3 AS STRING)) END AS part",
            )
            .write.format("delta").mode("append")
            .option("txnAppId", app).option("txnVersion", version)
            .save(str(path))
        )  # fmt: skip
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 1")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 4")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE part = 'p0'")
    _no_checkpoint(path, "rich")
    return Shape(
        "rich", "classic", path, _latest_version(path), has_data=True, txn_app_ids=("app-a", "app-b")
    )


FILES_10K = 10_000
FILES_10K_REMOVED = 10


def build_files_10k(path: Path, *, v2: bool) -> Shape:
    """Hand-written: commit 1 adds 10,000 files, commit 2 removes 10 of them (fresh tombstones)."""
    table_schema = schema(schema_field("id", "long"))
    configuration = {"delta.checkpointPolicy": "v2"} if v2 else {}
    proto = v2_protocol() if v2 else protocol(1, 2)
    stamp = now_ms()
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
        remove(f"part-{i:05d}-00000000-0000-4000-8000-{i:012d}-c000.snappy.parquet", deletion_timestamp=stamp,
               size=500 + i % 97)
        for i in range(FILES_10K_REMOVED)
    ]  # fmt: skip
    write_log(path, [[proto, metadata(table_schema, configuration=configuration)], [commit_info(), *adds],
                     [commit_info(), *removes]])  # fmt: skip
    return Shape("files_10k", "v2" if v2 else "classic", path, 2, has_data=False)


def enable_v2(spark: SparkSession, shape: Shape, path: Path) -> Shape:
    """Copy ``shape`` to ``path`` and commit ``delta.checkpointPolicy = v2`` (adds ``v2Checkpoint``)."""
    shutil.copytree(shape.path, path)
    spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.checkpointPolicy' = 'v2')")
    _no_checkpoint(path, f"{shape.name} (v2)")
    return Shape(
        shape.name, "v2", path, _latest_version(path), shape.has_data, shape.txn_app_ids, shape.notes
    )


SPARK_BUILDERS = {"plain": build_plain, "rich": build_rich, "empty": build_empty}
