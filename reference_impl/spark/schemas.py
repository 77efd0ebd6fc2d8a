"""The schema of every Delta action, defined once, usable as a Spark ``StructType`` or an Arrow schema.

Spec: ``spec/checkpoints.md`` § Checkpoint Parquet layout (``CKPT-SCHEMA-*``); PROTOCOL.md
"Actions" and "Checkpoint Schema".

Field order follows delta-spark 4.4's case classes (``actions.scala``), because the JSON log and
the V2 Parquet top-level file are written in that order. Checkpoint files re-order ``add`` and
``remove`` (see :data:`CHECKPOINT_ADD_FIELDS` / :data:`CHECKPOINT_REMOVE_FIELDS`).

| action | struct | in commits | in a V1 checkpoint | in a V2 top-level file | in a sidecar |
|---|---|---|---|---|---|
| ``txn`` | :data:`TXN` | yes | yes | yes | no |
| ``add`` | :data:`ADD` | yes | yes | only without sidecars | yes |
| ``remove`` | :data:`REMOVE` | yes | yes (no stats/tags) | only without sidecars | yes (no stats/tags) |
| ``metaData`` | :data:`METADATA` | yes | yes | yes | no |
| ``protocol`` | :data:`PROTOCOL` | yes | yes | yes | no |
| ``domainMetadata`` | :data:`DOMAIN_METADATA` | yes | live ones | live ones | no |
| ``checkpointMetadata`` | :data:`CHECKPOINT_METADATA` | never | never | exactly one | no |
| ``sidecar`` | :data:`SIDECAR` | never | never | 0..n | no |
| ``commitInfo``, ``cdc`` | (not modelled: replay ignores them) | yes | never | never | never |

Every field is nullable (a checkpoint row holds one action; the other columns are null).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

if TYPE_CHECKING:
    import pyarrow as pa

_S = StringType()
_L = LongType()
_I = IntegerType()
_B = BooleanType()
_MAP = MapType(_S, _S, valueContainsNull=True)


def _struct(*fields: tuple[str, DataType]) -> StructType:
    return StructType([StructField(name, dtype, nullable=True) for name, dtype in fields])


DELETION_VECTOR = _struct(
    ("storageType", _S),
    ("pathOrInlineDv", _S),
    ("offset", _I),
    ("sizeInBytes", _I),
    ("cardinality", _L),
    ("maxRowIndex", _L),
)

ADD = _struct(
    ("path", _S),
    ("partitionValues", _MAP),
    ("size", _L),
    ("modificationTime", _L),
    ("dataChange", _B),
    ("stats", _S),
    ("tags", _MAP),
    ("deletionVector", DELETION_VECTOR),
    ("baseRowId", _L),
    ("defaultRowCommitVersion", _L),
    ("clusteringProvider", _S),
)

REMOVE = _struct(
    ("path", _S),
    ("deletionTimestamp", _L),
    ("dataChange", _B),
    ("extendedFileMetadata", _B),
    ("partitionValues", _MAP),
    ("size", _L),
    ("tags", _MAP),
    ("deletionVector", DELETION_VECTOR),
    ("baseRowId", _L),
    ("defaultRowCommitVersion", _L),
    ("stats", _S),
)

METADATA = _struct(
    ("id", _S),
    ("name", _S),
    ("description", _S),
    ("format", _struct(("provider", _S), ("options", _MAP))),
    ("schemaString", _S),
    ("partitionColumns", ArrayType(_S, containsNull=True)),
    ("configuration", _MAP),
    ("createdTime", _L),
)

PROTOCOL = _struct(
    ("minReaderVersion", _I),
    ("minWriterVersion", _I),
    ("readerFeatures", ArrayType(_S, containsNull=True)),
    ("writerFeatures", ArrayType(_S, containsNull=True)),
)

TXN = _struct(("appId", _S), ("version", _L), ("lastUpdated", _L))

DOMAIN_METADATA = _struct(("domain", _S), ("configuration", _S), ("removed", _B))

CHECKPOINT_METADATA = _struct(("version", _L), ("tags", _MAP))

SIDECAR = _struct(("path", _S), ("sizeInBytes", _L), ("modificationTime", _L), ("tags", _MAP))

#: Field order of ``add`` in V1 checkpoints and sidecars (delta-spark ``Checkpoints.buildCheckpoint``):
#: ``stats`` moves after ``clusteringProvider``; ``partitionValues_parsed`` and ``stats_parsed``
#: follow when written.
CHECKPOINT_ADD_FIELDS: tuple[str, ...] = (
    "path", "partitionValues", "size", "modificationTime", "dataChange", "tags", "deletionVector",
    "baseRowId", "defaultRowCommitVersion", "clusteringProvider",
)  # fmt: skip

#: Field order of ``remove`` in V1 checkpoints and sidecars: no ``tags``, no ``stats``.
CHECKPOINT_REMOVE_FIELDS: tuple[str, ...] = (
    "path", "deletionTimestamp", "dataChange", "extendedFileMetadata", "partitionValues", "size",
    "deletionVector", "baseRowId", "defaultRowCommitVersion",
)  # fmt: skip

#: Action columns in the order delta-spark writes them in checkpoint Parquet files.
V1_CHECKPOINT_COLUMNS: tuple[str, ...] = ("txn", "add", "remove", "metaData", "protocol", "domainMetadata")
V2_TOP_LEVEL_COLUMNS: tuple[str, ...] = (*V1_CHECKPOINT_COLUMNS, "checkpointMetadata", "sidecar")
SIDECAR_COLUMNS: tuple[str, ...] = ("add", "remove")

ACTION_STRUCTS: dict[str, StructType] = {
    "txn": TXN,
    "add": ADD,
    "remove": REMOVE,
    "metaData": METADATA,
    "protocol": PROTOCOL,
    "domainMetadata": DOMAIN_METADATA,
    "checkpointMetadata": CHECKPOINT_METADATA,
    "sidecar": SIDECAR,
}

#: Actions that replay ignores (they never reach a checkpoint).
IGNORED_IN_REPLAY: frozenset[str] = frozenset({"commitInfo", "cdc", "checkpointMetadata", "sidecar"})


def single_action_schema(columns: tuple[str, ...] = V2_TOP_LEVEL_COLUMNS) -> StructType:
    """A "single action" row schema holding the given action columns (each a nullable struct)."""
    return StructType([StructField(c, ACTION_STRUCTS[c], nullable=True) for c in columns])


#: The schema used to read commit files (``checkpointMetadata``/``sidecar`` are read so that their
#: illegal presence can be detected, then ignored).
COMMIT_SCHEMA = single_action_schema()


def checkpoint_add_struct(extra: tuple[StructField, ...] = ()) -> StructType:
    """The ``add`` struct of a V1 checkpoint or sidecar, plus optional trailing fields."""
    base = [ADD[name] for name in CHECKPOINT_ADD_FIELDS]
    return StructType([StructField(f.name, f.dataType, True) for f in (*base, *extra)])


def checkpoint_remove_struct() -> StructType:
    return StructType(
        [StructField(REMOVE[n].name, REMOVE[n].dataType, True) for n in CHECKPOINT_REMOVE_FIELDS]
    )


def to_arrow_type(dtype: DataType) -> pa.DataType:
    """Arrow type of a Spark type; every struct field nullable, map keys non-null."""
    import pyarrow as pa
    from pyspark.sql import types as T

    if isinstance(dtype, T.StructType):
        return pa.struct([pa.field(f.name, to_arrow_type(f.dataType), nullable=True) for f in dtype.fields])
    if isinstance(dtype, T.MapType):
        return pa.map_(to_arrow_type(dtype.keyType), pa.field("value", to_arrow_type(dtype.valueType), True))
    if isinstance(dtype, T.ArrayType):
        return pa.list_(pa.field("element", to_arrow_type(dtype.elementType), True))
    simple: dict[type[DataType], pa.DataType] = {
        T.StringType: pa.string(),
        T.LongType: pa.int64(),
        T.IntegerType: pa.int32(),
        T.ShortType: pa.int16(),
        T.ByteType: pa.int8(),
        T.BooleanType: pa.bool_(),
        T.DoubleType: pa.float64(),
        T.FloatType: pa.float32(),
        T.DateType: pa.date32(),
        T.BinaryType: pa.binary(),
        T.TimestampType: pa.timestamp("us", tz="UTC"),
        T.TimestampNTZType: pa.timestamp("us"),
    }
    for spark_type, arrow_type in simple.items():
        if isinstance(dtype, spark_type):
            return arrow_type
    if isinstance(dtype, T.DecimalType):
        return pa.decimal128(dtype.precision, dtype.scale)
    raise TypeError(f"no Arrow mapping for Spark type {dtype.simpleString()}")


def to_arrow_schema(schema: StructType) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([pa.field(f.name, to_arrow_type(f.dataType), nullable=True) for f in schema.fields])
