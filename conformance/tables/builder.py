"""Build Delta tables at the log level, deterministically, without Spark: the suite's one table builder.

Spec: PROTOCOL.md "Actions" and "Action Reconciliation"; ``spec/checkpoints.md`` §6 Checkpoint
content. Used by the source shapes and cleanup cases of the suite, by the fixture generator and by
the tests. Two levels:

* **action constructors** (:func:`protocol`, :func:`metadata`, :func:`add`, :func:`remove`, :func:`txn`,
  :func:`domain`, :func:`commit_info`, :func:`cdc`, …) and :func:`write_commit` / :func:`write_log`:
  hand-written logs with exact control over every field (no data files);
* :class:`TableBuilder`: a table commit by commit — JSON lines with a fixed clock and seeded UUIDs,
  each data file a tiny Parquet file written by pyarrow, so regenerating a table gives
  byte-identical commits.

The builder is also an oracle: it applies PROTOCOL.md's action reconciliation to its own commits
as it writes them (a few dictionaries, independent of any reader) and returns the expected
:class:`~spec.table_state.TableState` of any version it wrote.

| method | commits |
|---|---|
| :meth:`TableBuilder.create` | ``protocol`` + ``metaData`` (+ files) |
| :meth:`TableBuilder.append` | one data file per partition value, with statistics |
| :meth:`TableBuilder.remove` | ``remove`` actions (tombstones) |
| :meth:`TableBuilder.delete_rows` | a deletion vector: ``remove`` of the old ``(path, dv)`` + ``add`` of the new |
| :meth:`TableBuilder.set_properties`, :meth:`TableBuilder.set_features` | a new ``metaData`` / ``protocol`` |
| :meth:`TableBuilder.txn`, :meth:`TableBuilder.domain` | ``txn`` / ``domainMetadata`` |
| :meth:`TableBuilder.commit` | any actions as given |
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import random
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.decode.names import DELTA_LOG, commit_name
from conformance.decode.paths import TABLE_ROOT_TOKEN, canonical_path, root_path_text, table_root_uri
from conformance.tables.deletion_vectors import inline_descriptor
from spec.table_state import TableState, dv_id

#: 2025-01-01T00:00:00Z — the default start of fixture clocks.
EPOCH_2025_MS = 1_735_689_600_000
ENGINE_INFO = "delta-checkpoint-conformance table_builder"
#: ``delta.checkpointInterval`` of hand-written tables: a writer that checkpoints on commit (delta-spark)
#: never checkpoints them by itself.
NO_AUTO_CHECKPOINT_INTERVAL = "1000"

_INTERVAL_PAIR = re.compile(r"(-?\d+)\s*([a-z]+?)s?\b")
_UNIT_MS = {
    "millisecond": 1,
    "second": 1000,
    "minute": 60_000,
    "hour": 3_600_000,
    "day": 86_400_000,
    "week": 604_800_000,
}


def _interval_ms(text: str) -> int:
    """Milliseconds of a retention property as the builder writes them (``interval 36500 days``)."""
    body = text.strip().lower().removeprefix("interval").strip()
    pairs = _INTERVAL_PAIR.findall(body)
    if not pairs:
        raise ValueError(f"the table builder cannot read the interval {text!r}")
    return sum(int(n) * _UNIT_MS[unit] for n, unit in pairs)


# -- action constructors (JSON form, as in commit files) ----------------------------------------


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
            "configuration": {
                "delta.checkpointInterval": NO_AUTO_CHECKPOINT_INTERVAL,
                **(configuration or {}),
            },
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
    body: dict[str, Any] = {
        "path": path,
        "dataChange": True,
        "extendedFileMetadata": True,
        "partitionValues": dict(partition_values or {}),
    }
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


def write_commit(
    table: Path,
    version: int,
    actions: Iterable[Mapping[str, Any]],
    *,
    mtime_ms: int | None = None,
    exclusive: bool = False,
) -> Path:
    """Write ``<table>/_delta_log/<version>.json`` (one compact JSON action per line).

    ``mtime_ms`` sets the file's modification time; ``exclusive`` refuses to replace an existing commit.
    """
    log = table / DELTA_LOG
    log.mkdir(parents=True, exist_ok=True)
    path = log / commit_name(version)
    with open(path, "x" if exclusive else "w", encoding="utf-8") as handle:
        for action in actions:
            handle.write(json.dumps(action, separators=(",", ":"), ensure_ascii=False) + "\n")
    if mtime_ms is not None:
        ns = mtime_ms * 1_000_000
        os.utime(path, ns=(ns, ns))
    return path


def write_log(table: Path, commits: Sequence[Iterable[Mapping[str, Any]]]) -> Path:
    """Write commits ``0..len(commits)-1``; returns the table path."""
    for version, actions in enumerate(commits):
        write_commit(table, version, actions)
    return table


# -- the table builder ------------------------------------------------------------------------


@dataclass
class Clock:
    """A deterministic clock: every :meth:`tick` advances by ``step_ms``."""

    now_ms: int = EPOCH_2025_MS
    step_ms: int = 60_000

    def tick(self) -> int:
        self.now_ms += self.step_ms
        return self.now_ms


class Ids:
    """Seeded version-4 UUIDs."""

    def __init__(self, seed: str) -> None:
        self._rng = random.Random(seed)

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(int=self._rng.getrandbits(128), version=4)


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # Delta primitive type name: long, integer, string, double, boolean, date, timestamp
    nullable: bool = True


def _stat_value(value: Any, dtype: str) -> Any:
    if dtype == "timestamp":
        assert isinstance(value, dt.datetime)
        return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    if dtype == "date":
        return value.isoformat()
    return value


def _partition_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


_ARROW_TYPES = {
    "long": "int64", "integer": "int32", "string": "string", "double": "float64",
    "boolean": "bool", "date": "date32", "timestamp": "timestamp_us_utc",
}  # fmt: skip
_STATS_ELIGIBLE = {"long", "integer", "string", "double", "date", "timestamp"}


def protocol_for(reader_features: Iterable[str] = (), writer_features: Iterable[str] = ()) -> dict[str, Any]:
    """A protocol action: (1, 2) without features, else table-features versions (3 and/or 7)."""
    writers = set(writer_features) | set(reader_features)
    readers = set(reader_features)
    if not writers:
        return {"minReaderVersion": 1, "minWriterVersion": 2}
    out: dict[str, Any] = {"minReaderVersion": 3 if readers else 1, "minWriterVersion": 7}
    if readers:
        out["readerFeatures"] = sorted(readers)
    out["writerFeatures"] = sorted(writers)
    return out


@dataclass
class _LiveState:
    protocol: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    files: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    tombstones: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    txns: dict[str, dict[str, Any]] = field(default_factory=dict)
    domains: dict[str, dict[str, Any]] = field(default_factory=dict)


def rows(start: int, count: int, *, parts: int = 0) -> list[dict[str, Any]]:
    """Rows ``start .. start+count-1`` of the builders' usual schema (``id``, ``value``, optional ``part``)."""
    out = []
    for n in range(start, start + count):
        row: dict[str, Any] = {"id": n, "value": f"value-{n}"}
        if parts:
            row["part"] = f"p{n % parts}"
        out.append(row)
    return out


class TableBuilder:
    """A table under construction at ``root`` (see the module docs)."""

    def __init__(
        self,
        root: Path,
        *,
        columns: Sequence[Column],
        partition_columns: Sequence[str] = (),
        configuration: Mapping[str, str] | None = None,
        reader_features: Iterable[str] = (),
        writer_features: Iterable[str] = (),
        column_mapping: bool = False,
        clock: Clock | None = None,
        ids: Ids | None = None,
        write_data: bool = True,
        name: str | None = None,
    ) -> None:
        self.root = root
        self.log_dir = root / DELTA_LOG
        self.columns = list(columns)
        self.partition_columns = list(partition_columns)
        self.configuration = dict(configuration or {})
        self.clock = clock or Clock()
        self.ids = ids or Ids(str(root.name))
        self.write_data = write_data
        self.name = name
        readers, writers = set(reader_features), set(writer_features)
        if column_mapping:
            readers.add("columnMapping")
            self.configuration.setdefault("delta.columnMapping.mode", "name")
            self.configuration["delta.columnMapping.maxColumnId"] = str(len(self.columns))
        self.physical = {
            c.name: (f"col-{self.ids.uuid()}" if column_mapping else c.name) for c in self.columns
        }
        self.column_mapping = column_mapping
        self._reader_features, self._writer_features = readers, writers
        self.version = -1
        self._live = _LiveState()
        self._history: dict[int, _LiveState] = {}
        self._dv_rows: dict[str, list[int]] = {}  # inline DV -> the row indexes it deletes

    # -- schema -----------------------------------------------------------------------------

    def schema_json(self) -> dict[str, Any]:
        fields = []
        for index, col in enumerate(self.columns, start=1):
            metadata: dict[str, Any] = {}
            if self.column_mapping:
                metadata = {
                    "delta.columnMapping.id": index,
                    "delta.columnMapping.physicalName": self.physical[col.name],
                }
            fields.append(
                {"name": col.name, "type": col.type, "nullable": col.nullable, "metadata": metadata}
            )
        return {"type": "struct", "fields": fields}

    def _metadata_action(self, table_id: str, created: int) -> dict[str, Any]:
        action: dict[str, Any] = {"id": table_id}
        if self.name:
            action["name"] = self.name
        action.update(
            {
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(self.schema_json(), separators=(",", ":")),
                "partitionColumns": list(self.partition_columns),
                "configuration": dict(self.configuration),
                "createdTime": created,
            }
        )
        return action

    # -- commits ----------------------------------------------------------------------------

    def commit(self, actions: Sequence[Mapping[str, Any]], *, operation: str = "WRITE") -> int:
        """Write the next commit with ``actions`` (a ``commitInfo`` is prepended) and apply them."""
        version = self.version + 1
        timestamp = self.clock.tick()
        info = {
            "commitInfo": {
                "timestamp": timestamp,
                "operation": operation,
                "operationParameters": {},
                "engineInfo": ENGINE_INFO,
            }
        }
        write_commit(self.root, version, [info, *actions], mtime_ms=timestamp, exclusive=True)
        self.version = version
        for action in actions:
            self._apply(action)
        self._history[version] = copy.deepcopy(self._live)
        return version

    def file_identity(self, path: str) -> str:
        """The canonical form of ``path`` in this table (CKPT-CONTENT-014; :data:`TABLE_ROOT_TOKEN` resolved)."""
        resolved = path.replace(TABLE_ROOT_TOKEN, root_path_text(self.root))
        return canonical_path(resolved, table_root_uri(self.root))

    def _apply(self, action: Mapping[str, Any]) -> None:
        ((kind, value),) = action.items()
        live = self._live
        if kind == "protocol":
            live.protocol = dict(value)
        elif kind == "metaData":
            live.metadata = dict(value)
        elif kind == "txn":
            live.txns[value["appId"]] = dict(value)
        elif kind == "domainMetadata":
            if value.get("removed"):
                live.domains.pop(value["domain"], None)
            else:
                live.domains[value["domain"]] = dict(value)
        elif kind in ("add", "remove"):
            key = (self.file_identity(value["path"]), dv_id(value.get("deletionVector")) or "")
            if kind == "add":
                live.files[key] = dict(value)
                live.tombstones.pop(key, None)
            else:
                live.files.pop(key, None)
                live.tombstones[key] = dict(value)

    def create(self, rows: Sequence[Mapping[str, Any]] = (), *, table_id: str | None = None) -> int:
        created = self.clock.now_ms
        actions: list[dict[str, Any]] = [
            {"protocol": protocol_for(self._reader_features, self._writer_features)},
            {"metaData": self._metadata_action(table_id or str(self.ids.uuid()), created)},
        ]
        actions += [{"add": a} for a in self._data_files(rows)]
        return self.commit(actions, operation="CREATE TABLE")

    def append(
        self,
        rows: Sequence[Mapping[str, Any]],
        *,
        txn: tuple[str, int] | None = None,
        files_per_partition: int = 1,
    ) -> int:
        actions: list[dict[str, Any]] = []
        if txn is not None:
            actions.append({"txn": {"appId": txn[0], "version": txn[1], "lastUpdated": self.clock.now_ms}})
        actions += [{"add": a} for a in self._data_files(rows, files_per_partition=files_per_partition)]
        return self.commit(actions)

    def remove(self, paths: Iterable[str], *, deletion_timestamp: int | None = None) -> int:
        actions = []
        for path in paths:
            add = next(a for a in self._live.files.values() if a["path"] == path)
            actions.append({"remove": self._remove_of(add, deletion_timestamp)})
        return self.commit(actions, operation="DELETE")

    def _remove_of(self, add: Mapping[str, Any], deletion_timestamp: int | None) -> dict[str, Any]:
        remove: dict[str, Any] = {
            "path": add["path"],
            "deletionTimestamp": deletion_timestamp if deletion_timestamp is not None else self.clock.now_ms,
            "dataChange": True,
            "extendedFileMetadata": True,
            "partitionValues": dict(add.get("partitionValues") or {}),
            "size": add["size"],
        }
        if add.get("deletionVector"):
            remove["deletionVector"] = dict(add["deletionVector"])
        if add.get("stats"):
            remove["stats"] = add["stats"]
        return remove

    def delete_rows(self, path: str, row_indexes: Iterable[int]) -> int:
        """Mark rows of a live file deleted with an inline deletion vector (old DV rows kept)."""
        (add,) = [a for a in self._live.files.values() if a["path"] == path]
        old_dv = add.get("deletionVector")
        previous = set(self._dv_rows.get(str(old_dv["pathOrInlineDv"]), [])) if old_dv else set()
        rows = previous | set(row_indexes)
        dv = inline_descriptor(rows)
        self._dv_rows[dv["pathOrInlineDv"]] = sorted(rows)
        new_add = dict(add, deletionVector=dv, dataChange=True)
        stats = json.loads(add["stats"]) if add.get("stats") else None
        if stats is not None:
            stats["tightBounds"] = False
            new_add["stats"] = json.dumps(stats, separators=(",", ":"))
        return self.commit([{"remove": self._remove_of(add, None)}, {"add": new_add}], operation="DELETE")

    def set_properties(self, properties: Mapping[str, str]) -> int:
        self.configuration.update(properties)
        metadata = dict(self._live.metadata, configuration=dict(self.configuration))
        return self.commit([{"metaData": metadata}], operation="SET TBLPROPERTIES")

    def set_features(self, reader_features: Iterable[str] = (), writer_features: Iterable[str] = ()) -> int:
        self._reader_features |= set(reader_features)
        self._writer_features |= set(writer_features)
        return self.commit(
            [{"protocol": protocol_for(self._reader_features, self._writer_features)}],
            operation="UPGRADE PROTOCOL",
        )

    def drop_feature(self, feature: str) -> int:
        """Commit DROP FEATURE ``feature`` as delta-spark's fast drop does for a feature that needs history
        protection, such as ``v2Checkpoint`` (``commands/alterDeltaTableCommands.scala`` L549-566): one commit
        with the protocol without ``feature`` and with ``checkpointProtection``, and the metadata with
        ``delta.requireCheckpointProtectionBeforeVersion`` set to this commit's version (spec §18.2)."""
        self._reader_features.discard(feature)
        self._writer_features.discard(feature)
        self._writer_features.add("checkpointProtection")
        self.configuration["delta.requireCheckpointProtectionBeforeVersion"] = str(self.version + 1)
        metadata = dict(self._live.metadata, configuration=dict(self.configuration))
        actions = [
            {"protocol": protocol_for(self._reader_features, self._writer_features)},
            {"metaData": metadata},
        ]
        return self.commit(actions, operation="DROP FEATURE")

    def txn(self, app_id: str, version: int, *, last_updated: int | None = None) -> int:
        updated = last_updated if last_updated is not None else self.clock.now_ms
        return self.commit([{"txn": {"appId": app_id, "version": version, "lastUpdated": updated}}])

    def domain(self, domain: str, configuration: str, *, removed: bool = False) -> int:
        return self.commit(
            [{"domainMetadata": {"domain": domain, "configuration": configuration, "removed": removed}}]
        )

    # -- data files -------------------------------------------------------------------------

    def _data_files(
        self, rows: Sequence[Mapping[str, Any]], *, files_per_partition: int = 1
    ) -> list[dict[str, Any]]:
        groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
        for row in rows:
            groups.setdefault(tuple(row.get(c) for c in self.partition_columns), []).append(row)
        adds = []
        for values, members in groups.items():
            chunk = max(1, -(-len(members) // files_per_partition))
            for start in range(0, len(members), chunk):
                adds.append(
                    self._data_file(
                        dict(zip(self.partition_columns, values, strict=True)), members[start : start + chunk]
                    )
                )
        return adds

    def _data_columns(self) -> list[Column]:
        parts = set(self.partition_columns)
        return [c for c in self.columns if c.name not in parts]

    def _data_file(self, partition: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        directory = "/".join(f"{self.physical[k]}={_partition_value(v)}" for k, v in partition.items())
        name = f"part-00000-{self.ids.uuid()}-c000.snappy.parquet"
        rel = f"{directory}/{name}" if directory else name
        data_cols = self._data_columns()
        arrays = {}
        for col in data_cols:
            arrow_type = _ARROW_TYPES[col.type]
            values = [r.get(col.name) for r in rows]
            if arrow_type == "timestamp_us_utc":
                arrays[self.physical[col.name]] = pa.array(values, type=pa.timestamp("us", tz="UTC"))
            else:
                arrays[self.physical[col.name]] = pa.array(values, type=getattr(pa, arrow_type)())
        size = 0
        if self.write_data:
            target = self.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.table(arrays), target, compression="snappy")
            size = target.stat().st_size
            ns = self.clock.now_ms * 1_000_000
            os.utime(target, ns=(ns, ns))
        else:
            size = 1000 + 10 * len(rows)
        return {
            "path": rel,
            "partitionValues": {self.physical[k]: _partition_value(v) for k, v in partition.items()},
            "size": size,
            "modificationTime": self.clock.now_ms,
            "dataChange": True,
            "stats": json.dumps(self._stats(data_cols, rows), separators=(",", ":")),
        }

    def _stats(self, data_cols: Sequence[Column], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        mins: dict[str, Any] = {}
        maxs: dict[str, Any] = {}
        nulls: dict[str, Any] = {}
        for col in data_cols:
            values = [r.get(col.name) for r in rows]
            present = [v for v in values if v is not None]
            physical = self.physical[col.name]
            nulls[physical] = len(values) - len(present)
            if present and col.type in _STATS_ELIGIBLE:
                mins[physical] = _stat_value(min(present), col.type)
                maxs[physical] = _stat_value(max(present), col.type)
        stats: dict[str, Any] = {
            "numRecords": len(rows),
            "minValues": mins,
            "maxValues": maxs,
            "nullCount": nulls,
        }
        if "deletionVectors" in self._reader_features:
            stats["tightBounds"] = True
        return stats

    # -- the oracle -------------------------------------------------------------------------

    @property
    def live_paths(self) -> list[str]:
        return sorted(a["path"] for a in self._live.files.values())

    def expected_state(self, version: int, *, now_ms: int) -> TableState:
        """The state of ``version`` by construction (tombstones/txns filtered at ``now_ms``)."""
        state = self._history[version]
        config = state.metadata.get("configuration") or {}
        tomb_cutoff = now_ms - _interval_ms(
            config.get("delta.deletedFileRetentionDuration", "interval 1 week")
        )
        raw_txn_retention = config.get("delta.setTransactionRetentionDuration")
        txn_retention = None if raw_txn_retention is None else _interval_ms(raw_txn_retention)
        txns = list(state.txns.values())
        if txn_retention is not None:
            txns = [
                t
                for t in txns
                if t.get("lastUpdated") is not None and t["lastUpdated"] > now_ms - txn_retention
            ]
        return TableState.build(
            version=version,
            protocol=state.protocol,
            metadata=state.metadata,
            files=state.files.values(),
            tombstones=[
                t for t in state.tombstones.values() if (t.get("deletionTimestamp") or 0) > tomb_cutoff
            ],
            txns=txns,
            domain_metadata=state.domains.values(),
        )

    def non_file_actions(self, version: int) -> list[dict[str, Any]]:
        """The non-file actions a checkpoint of ``version`` holds (protocol, metaData, txns, domains)."""
        state = self._history[version]
        out: list[dict[str, Any]] = [{"protocol": dict(state.protocol)}, {"metaData": dict(state.metadata)}]
        out += [{"txn": dict(state.txns[k])} for k in sorted(state.txns)]
        out += [{"domainMetadata": dict(state.domains[k])} for k in sorted(state.domains)]
        return out

    def expected_rows(self, version: int) -> int:
        """Rows visible at ``version`` (file row counts minus deletion-vector cardinalities)."""
        total = 0
        for add in self._history[version].files.values():
            stats = json.loads(add["stats"]) if add.get("stats") else {}
            dv = add.get("deletionVector") or {}
            total += int(stats.get("numRecords", 0)) - int(dv.get("cardinality", 0))
        return total
