"""``TableState``: the normalised, order-independent description of a table version.

Spec: ``spec/schemas/table_state.schema.json``. It is the common language of fixtures
(``expected/v<N>/table_state.json``), adapters and reports: two readers agree on a version iff
their ``TableState``\\ s are equal (:meth:`TableState.comparable`; ``source`` is informative only).

Normalisation rules (applied by every producer through :func:`normalize_file`,
:func:`normalize_tombstone`, :func:`normalize_protocol`, :func:`normalize_metadata`):

* absent and ``null`` fields are the same: ``null`` fields are dropped;
* ``dataChange`` is dropped (a checkpoint rewrites it to ``false``; it is not table state);
* ``stats`` is the parsed JSON object, so formatting differences do not matter;
* ``deletionVector.maxRowIndex`` is dropped (transient, never stored in the log);
* features are sorted; files sort by ``(path, dvId)``; txns by ``appId``; domains by ``domain``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

FILE_FIELDS: tuple[str, ...] = (
    "path", "partitionValues", "size", "modificationTime", "stats", "tags", "deletionVector",
    "baseRowId", "defaultRowCommitVersion", "clusteringProvider",
)  # fmt: skip
TOMBSTONE_FIELDS: tuple[str, ...] = (
    "path", "deletionTimestamp", "extendedFileMetadata", "partitionValues", "size", "deletionVector",
    "baseRowId", "defaultRowCommitVersion",
)  # fmt: skip
METADATA_FIELDS: tuple[str, ...] = (
    "id", "name", "description", "format", "schemaString", "partitionColumns", "configuration", "createdTime",
)  # fmt: skip
DV_FIELDS: tuple[str, ...] = ("storageType", "pathOrInlineDv", "offset", "sizeInBytes", "cardinality")
TOP_LEVEL_FIELDS: tuple[str, ...] = (
    "version", "protocol", "metadata", "files", "tombstones", "txns", "domainMetadata",
)  # fmt: skip
SUB_FIELDS: dict[str, tuple[str, ...]] = {
    "protocol": ("minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures"),
    "metadata": METADATA_FIELDS,
    "files": FILE_FIELDS,
    "tombstones": TOMBSTONE_FIELDS,
    "txns": ("appId", "version", "lastUpdated"),
    "domainMetadata": ("domain", "configuration"),
}
#: The keys of a file's parsed ``stats`` (Delta protocol "Per-file Statistics").
STATS_FIELDS: tuple[str, ...] = ("numRecords", "minValues", "maxValues", "nullCount", "tightBounds")
#: The capability vocabulary of the subprocess protocol (``unavailableFields`` in
#: ``spec/schemas/harness/response.schema.json``): the fields a reader may declare it cannot report —
#: top-level (but ``version``), one level down, a deletion vector's fields, a key of ``stats``.
UNAVAILABLE_FIELD_PATHS: tuple[str, ...] = (
    *(f for f in TOP_LEVEL_FIELDS if f != "version"),
    *(f"{top}.{sub}" for top, subs in SUB_FIELDS.items() for sub in subs),
    *(f"{top}.deletionVector.{sub}" for top in ("files", "tombstones") for sub in DV_FIELDS),
    *(f"files.stats.{key}" for key in STATS_FIELDS),
)


def drop_nulls(value: Any) -> Any:
    """Recursively drop ``None`` values from dicts (lists keep their elements)."""
    if isinstance(value, Mapping):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [drop_nulls(v) for v in value]
    return value


def dv_id(dv: Mapping[str, Any] | None) -> str | None:
    """The legacy unique id of a deletion vector (``storageType + pathOrInlineDv [+ '@' + offset]``)."""
    if not dv:
        return None
    base = f"{dv.get('storageType', '')}{dv.get('pathOrInlineDv', '')}"
    offset = dv.get("offset")
    return f"{base}@{offset}" if offset is not None else base


def _normalize_dv(dv: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not dv:
        return None
    return {k: dv[k] for k in DV_FIELDS if dv.get(k) is not None}


def _parse_stats(stats: Any) -> Any:
    if stats is None or isinstance(stats, Mapping):
        return stats
    try:
        return json.loads(stats)
    except (TypeError, ValueError):
        return {"__unparsable__": str(stats)}


def normalize_file(add: Mapping[str, Any]) -> dict[str, Any]:
    """A live file (an ``add`` action) in TableState form."""
    out: dict[str, Any] = {}
    for key in FILE_FIELDS:
        value = add.get(key)
        if key == "stats":
            value = _parse_stats(value)
        elif key == "deletionVector":
            value = _normalize_dv(value)
        elif key == "partitionValues" and value is not None:
            value = dict(value)
        if value is not None:
            out[key] = value
    out.setdefault("partitionValues", {})
    return out


def normalize_tombstone(remove: Mapping[str, Any]) -> dict[str, Any]:
    """An unexpired ``remove`` action in TableState form (no stats, tags or dataChange)."""
    out: dict[str, Any] = {}
    for key in TOMBSTONE_FIELDS:
        value = remove.get(key)
        if key == "deletionVector":
            value = _normalize_dv(value)
        elif key == "partitionValues" and value is not None:
            value = dict(value)
        if value is not None:
            out[key] = value
    return out


def normalize_protocol(protocol: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "minReaderVersion": int(protocol["minReaderVersion"]),
        "minWriterVersion": int(protocol["minWriterVersion"]),
    }
    for key in ("readerFeatures", "writerFeatures"):
        if protocol.get(key) is not None:
            out[key] = sorted(set(protocol[key]))
    return out


def normalize_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in METADATA_FIELDS:
        value = metadata.get(key)
        if value is None:
            continue
        if key == "format":
            value = {
                "provider": value.get("provider") or "parquet",
                "options": dict(value.get("options") or {}),
            }
        elif key == "configuration":
            value = dict(value)
        elif key == "partitionColumns":
            value = list(value)
        out[key] = value
    out.setdefault("configuration", {})
    out.setdefault("partitionColumns", [])
    return out


def file_key(entry: Mapping[str, Any]) -> tuple[str, str]:
    return (str(entry["path"]), dv_id(entry.get("deletionVector")) or "")


@dataclass
class TableState:
    """A table version, normalised. ``source`` records how a reader got it (not compared)."""

    version: int
    protocol: dict[str, Any]
    metadata: dict[str, Any]
    files: list[dict[str, Any]]
    tombstones: list[dict[str, Any]] = field(default_factory=list)
    txns: list[dict[str, Any]] = field(default_factory=list)
    domain_metadata: list[dict[str, Any]] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        *,
        version: int,
        protocol: Mapping[str, Any],
        metadata: Mapping[str, Any],
        files: Iterable[Mapping[str, Any]],
        tombstones: Iterable[Mapping[str, Any]] = (),
        txns: Iterable[Mapping[str, Any]] = (),
        domain_metadata: Iterable[Mapping[str, Any]] = (),
        source: Mapping[str, Any] | None = None,
    ) -> TableState:
        """Normalise raw actions (as read from any log or reader) into a TableState."""
        return cls(
            version=version,
            protocol=normalize_protocol(protocol),
            metadata=normalize_metadata(metadata),
            files=sorted((normalize_file(f) for f in files), key=file_key),
            tombstones=sorted((normalize_tombstone(t) for t in tombstones), key=file_key),
            txns=sorted(
                (
                    drop_nulls(
                        {"appId": t["appId"], "version": t["version"], "lastUpdated": t.get("lastUpdated")}
                    )
                    for t in txns
                ),
                key=lambda t: str(t["appId"]),
            ),
            domain_metadata=sorted(
                ({"domain": d["domain"], "configuration": d["configuration"]} for d in domain_metadata),
                key=lambda d: str(d["domain"]),
            ),
            source=dict(source or {}),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": self.version,
            "protocol": self.protocol,
            "metadata": self.metadata,
            "files": self.files,
            "tombstones": self.tombstones,
            "txns": self.txns,
            "domainMetadata": self.domain_metadata,
        }
        if self.source:
            out["source"] = self.source
        return out

    def to_json_text(self) -> str:
        """Deterministic JSON text (sorted keys, 2-space indent, trailing newline)."""
        return json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TableState:
        return cls(
            version=int(data["version"]),
            protocol=dict(data["protocol"]),
            metadata=dict(data["metadata"]),
            files=[dict(f) for f in data["files"]],
            tombstones=[dict(t) for t in data.get("tombstones", [])],
            txns=[dict(t) for t in data.get("txns", [])],
            domain_metadata=[dict(d) for d in data.get("domainMetadata", [])],
            source=dict(data.get("source", {})),
        )

    def comparable(self) -> dict[str, Any]:
        """Everything but ``source``: the part two readers must agree on."""
        out = self.to_json()
        out.pop("source", None)
        return out

    @property
    def num_files(self) -> int:
        return len(self.files)

    @property
    def total_size(self) -> int:
        return sum(int(f.get("size", 0)) for f in self.files)
