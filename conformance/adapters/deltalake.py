"""deltalake (delta-rs, Python 1.6.6) as a cross-reader: its view of a table as a ``TableState``.

deltalake replays the log with ``buoyant_kernel`` (a fork of delta-kernel-rs), so it is a second,
independent-of-the-JVM reader. Its public Python API exposes less than the log holds, so the
``TableState`` built here is partial; :func:`deltalake_state` records what it cannot provide in
``source["unavailable"]`` (dotted field paths, ready for :func:`conformance.compare.diff_states`'s
``ignore``).

Where each field comes from (``dt = DeltaTable(path, version=...)``):

| TableState field | deltalake 1.6.6 source |
|---|---|
| ``version`` | ``dt.version()`` |
| ``protocol`` | ``dt.protocol()`` (versions and feature lists) |
| ``metadata`` id, name, description, partitionColumns, configuration, createdTime | ``dt.metadata()`` |
| ``metadata.schemaString`` | ``dt.schema().to_json()`` — a re-serialisation; compare parsed (``compare`` does) |
| ``files`` path, size, modificationTime, partitionValues | ``dt.get_add_actions(flatten=False)`` |
| ``files.stats`` numRecords, minValues, maxValues, nullCount | the typed ``num_records``/``min``/``max``/``null_count`` columns, turned back into JSON values |
| ``files.deletionVector.cardinality`` | ``dt.deletion_vectors()`` (count of ``False`` in the selection vector) |
| ``txns`` appId, version | ``dt.transaction_version(app_id)`` for the app ids the caller names |

**Unavailable** (recorded in ``source["unavailable"]``):

* ``tombstones`` — deltalake exposes no ``remove`` actions;
* ``domainMetadata`` — not exposed;
* ``txns.lastUpdated`` — ``transaction_version`` returns the version only; and ``txns`` entirely
  when no app ids are given (deltalake cannot list them);
* ``metadata.format`` — ``Metadata`` has no format (deltalake only reads Parquet);
* ``files.tags``, ``files.baseRowId``, ``files.defaultRowCommitVersion``,
  ``files.clusteringProvider`` — not in ``get_add_actions``;
* ``files.deletionVector.storageType`` / ``pathOrInlineDv`` / ``offset`` / ``sizeInBytes`` — only
  the materialised selection vector is exposed, so files are matched by path alone;
* ``files.stats.tightBounds`` — not exposed.

Partition values and statistics come back typed (Arrow); they are turned back into the log's
JSON form for the types the test tables use (strings, integers, booleans, floats; dates and
timestamps best-effort as ISO strings).

Data: :func:`deltalake_row_count` counts rows with ``QueryBuilder`` (DataFusion). The pyarrow path
(``to_pyarrow_table``) is refused for ``v2Checkpoint`` tables by a Python-side feature gate
(``deltalake.table.SUPPORTED_READER_FEATURES``; ecosystem-notes §0.1), while the DataFusion path is
not gated and applies deletion vectors.
"""

from __future__ import annotations

import datetime as dt_mod
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from spec.table_state import TableState
from spec.vocabulary import CheckpointNaming, CheckpointSpec

#: Fields deltalake 1.6.6 never provides (see the module docs).
ALWAYS_UNAVAILABLE: tuple[str, ...] = (
    "tombstones",
    "domainMetadata",
    "txns.lastUpdated",
    "metadata.format",
    "files.tags",
    "files.baseRowId",
    "files.defaultRowCommitVersion",
    "files.clusteringProvider",
    "files.deletionVector.storageType",
    "files.deletionVector.pathOrInlineDv",
    "files.deletionVector.offset",
    "files.deletionVector.sizeInBytes",
    "files.stats.tightBounds",
)


def _json_value(value: Any) -> Any:
    """A typed (Arrow → Python) value in the form the Delta log's JSON uses."""
    if isinstance(value, dt_mod.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt_mod.UTC).replace(tzinfo=None)
        return value.isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, dt_mod.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {k: _json_value(v) for k, v in value.items() if v is not None}
    return value


def _partition_string(value: Any) -> str | None:
    """A typed partition value back in the log's string form (``partitionValues`` is a string map)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt_mod.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt_mod.UTC).replace(tzinfo=None)
        return str(value.isoformat(sep=" "))
    if isinstance(value, dt_mod.date):
        return value.isoformat()
    return str(value)


def _physical_names(schema_string: str, configuration: Mapping[str, str]) -> dict[str, Any]:
    """Logical -> physical column names (nested: name -> (physical, children)) under column mapping.

    deltalake reports partition values and statistics under *logical* names; the log (and so the
    TableState) keys them by *physical* name when column mapping is on.
    """
    import json

    if configuration.get("delta.columnMapping.mode", "none") == "none":
        return {}

    def walk(fields: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields:
            physical = (f.get("metadata") or {}).get("delta.columnMapping.physicalName", f["name"])
            children = (
                walk(f["type"]["fields"])
                if isinstance(f["type"], dict) and f["type"].get("type") == "struct"
                else {}
            )
            out[f["name"]] = (physical, children)
        return out

    return walk(json.loads(schema_string)["fields"])


def _rename(value: Any, names: Mapping[str, Any]) -> Any:
    if not names or not isinstance(value, Mapping):
        return value
    out = {}
    for key, inner in value.items():
        physical, children = names.get(key, (key, {}))
        out[physical] = _rename(inner, children)
    return out


def _stats(row: Mapping[str, Any]) -> dict[str, Any] | None:
    stats: dict[str, Any] = {}
    if row.get("num_records") is not None:
        stats["numRecords"] = int(row["num_records"])
    for column, key in (("min", "minValues"), ("max", "maxValues"), ("null_count", "nullCount")):
        value = row.get(column)
        if value:
            stats[key] = _json_value(value)
    return stats or None


def _is_remote(path: str | Path) -> bool:
    """Whether ``path`` is a store URI (``s3://…``) rather than a local path or ``file:`` URI."""
    return isinstance(path, str) and "://" in path and not path.startswith("file:")


def _deletion_vector_cardinalities(table: Any, root: str | Path) -> dict[str, int]:
    """``{relative file path: number of deleted rows}`` from ``deletion_vectors()``."""
    from urllib.parse import unquote, urlparse

    import pyarrow as pa

    reader = table.deletion_vectors()
    rows = pa.table(reader.read_all() if hasattr(reader, "read_all") else reader).to_pylist()
    out: dict[str, int] = {}
    for row in rows:
        uri = str(row["filepath"])
        if _is_remote(root):
            prefix = str(root).rstrip("/") + "/"
            rel = unquote(uri.removeprefix(prefix)) if uri.startswith(prefix) else uri
        else:
            local = Path(unquote(urlparse(uri).path)) if uri.startswith("file:") else Path(uri)
            try:
                rel = local.resolve().relative_to(Path(root).resolve()).as_posix()
            except ValueError:
                rel = uri
        out[rel] = sum(1 for keep in row["selection_vector"] if not keep)
    return out


def deltalake_state(
    path: str | Path,
    version: int | None = None,
    *,
    txn_app_ids: Iterable[str] = (),
    storage_options: Mapping[str, str] | None = None,
) -> TableState:
    """deltalake's view of ``path`` at ``version`` (latest when ``None``) as a partial TableState.

    ``path``: a local path or a store URI (``s3://bucket/t``, with deltalake's ``storage_options``).
    ``txn_app_ids``: the app ids whose ``txn`` version to ask for (deltalake cannot list them).
    ``source`` holds ``{"reader": "deltalake", "unavailable": [...]}``.
    """
    import pyarrow as pa
    from deltalake import DeltaTable

    root = path if _is_remote(path) else Path(path)
    table = DeltaTable(str(root), version=version, storage_options=dict(storage_options or {}) or None)
    proto = table.protocol()
    protocol: dict[str, Any] = {
        "minReaderVersion": proto.min_reader_version,
        "minWriterVersion": proto.min_writer_version,
        "readerFeatures": proto.reader_features,
        "writerFeatures": proto.writer_features,
    }
    meta = table.metadata()
    metadata: dict[str, Any] = {
        "id": meta.id,
        "name": meta.name,
        "description": meta.description,
        "schemaString": table.schema().to_json(),
        "partitionColumns": list(meta.partition_columns),
        "configuration": dict(meta.configuration),
        "createdTime": meta.created_time,
    }
    cardinalities = _deletion_vector_cardinalities(table, root)
    names = _physical_names(metadata["schemaString"], metadata["configuration"])
    files = []
    for row in pa.table(table.get_add_actions(flatten=False)).to_pylist():
        add: dict[str, Any] = {
            "path": row["path"],
            "size": row["size_bytes"],
            "modificationTime": row["modification_time"],
            "partitionValues": {k: _partition_string(v) for k, v in (row.get("partition") or {}).items()},
            "stats": _stats(row),
        }
        if row["path"] in cardinalities:
            add["deletionVector"] = {"cardinality": cardinalities[row["path"]]}
        if names:
            add["partitionValues"] = _rename(add["partitionValues"], names)
            if add["stats"]:
                add["stats"] = {
                    k: _rename(v, names) if k != "numRecords" else v for k, v in add["stats"].items()
                }
        files.append(add)
    app_ids = list(txn_app_ids)
    txns = []
    for app_id in app_ids:
        txn_version = table.transaction_version(app_id)
        if txn_version is not None:
            txns.append({"appId": app_id, "version": int(txn_version)})
    unavailable = list(ALWAYS_UNAVAILABLE)
    if not app_ids:
        unavailable.append("txns")
    return TableState.build(
        version=int(table.version()),
        protocol=protocol,
        metadata=metadata,
        files=files,
        txns=txns,
        source={"reader": "deltalake", "unavailable": sorted(unavailable)},
    )


def deltalake_row_count(
    path: str | Path, version: int | None = None, *, storage_options: Mapping[str, str] | None = None
) -> int:
    """Rows in ``path`` at ``version`` as deltalake's DataFusion engine counts them (DVs applied)."""
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder

    table = DeltaTable(str(path), version=version, storage_options=dict(storage_options or {}) or None)
    result = QueryBuilder().register("t", table).execute("SELECT count(*) AS n FROM t").read_all()
    rows = pa.table(result).to_pylist()
    return int(rows[0]["n"])


# -- the adapter --------------------------------------------------------------------------------

#: TableState fields the adapter never reports (txns too: deltalake cannot list app ids).
ADAPTER_UNAVAILABLE: frozenset[str] = frozenset({*ALWAYS_UNAVAILABLE, "txns"})


def _profiles() -> tuple[Any, ...]:
    from conformance.adapter import WriterProfile

    return (
        WriterProfile(
            "classic",
            "create_checkpoint() on a table without v2Checkpoint: one classic V1 file",
            CheckpointSpec.V1,
            CheckpointNaming.CLASSIC,
        ),
        WriterProfile(
            "classic-v2",
            "create_checkpoint() on a v2Checkpoint table: a classic-named V2 file, every file action inline",
            CheckpointSpec.V2,
            CheckpointNaming.CLASSIC,
            needs_v2_table=True,
        ),
    )


class DeltalakeImplementation:
    """``deltalake`` (delta-rs) 1.6: its reader, its ``create_checkpoint()`` writer and its
    ``cleanup_metadata()`` cleaner (which reads the real clock), in-process."""

    def __init__(self) -> None:
        import deltalake

        from conformance.adapter import ImplementationInfo, Role

        self.info = ImplementationInfo(
            name="deltalake",
            version=deltalake.__version__,
            roles=Role.READER | Role.WRITER | Role.CLEANER,
            description=f"deltalake {deltalake.__version__} (delta-rs) Python bindings",
            homepage="https://github.com/delta-io/delta-rs",
            unavailable_fields=ADAPTER_UNAVAILABLE,
            reads_data=True,
            profiles=_profiles(),
        )

    def _fail(self, exc: BaseException) -> Exception:
        from conformance.adapter import AdapterError
        from conformance.adapters.error_codes import classify

        return AdapterError(classify(str(exc)), f"{type(exc).__name__}: {str(exc)[:600]}")

    def read(self, table: Path, *, version: int | None = None, now_ms: int | None = None) -> Any:
        from conformance.adapter import ReadResult

        try:
            state = deltalake_state(table, version)
        except Exception as exc:  # deltalake raises DeltaError/DeltaProtocolError/OSError/…: all coded
            raise self._fail(exc) from exc

        def count() -> int | None:  # a DataFusion scan: only when a test compares rows
            try:
                return deltalake_row_count(table, version)
            except Exception:
                return None  # data files absent (log-only tables): only the state is compared

        return ReadResult(state=state, count=count)

    def write_checkpoint(self, table: Path, *, profile: str, version: int | None = None) -> None:
        from deltalake import DeltaTable

        try:
            DeltaTable(str(table), version=version).create_checkpoint()
        except Exception as exc:
            raise self._fail(exc) from exc

    def cleanup(self, table: Path, *, now_ms: int | None = None) -> None:
        from deltalake import DeltaTable

        try:
            DeltaTable(str(table)).cleanup_metadata()
        except Exception as exc:
            raise self._fail(exc) from exc

    def close(self) -> None:
        return None
