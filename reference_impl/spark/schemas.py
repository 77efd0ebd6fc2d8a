"""The Spark ``StructType`` of every Delta action, defined once.

Spec: ``spec/checkpoints.md`` §7 Parquet layout (``CKPT-SCHEMA-*``); PROTOCOL.md "Actions" and
"Checkpoint Schema". Which actions go where, and the column orders of checkpoint files, are in
:mod:`reference_impl.log.actions`.

Field order follows delta-spark 4.4's case classes (``actions.scala``), because the JSON log and
the V2 Parquet top-level file are written in that order. Checkpoint files re-order ``add`` and
``remove`` (:data:`~reference_impl.log.actions.CHECKPOINT_ADD_FIELDS`,
:data:`~reference_impl.log.actions.CHECKPOINT_REMOVE_FIELDS`).

Every field is nullable (a checkpoint row holds one action; the other columns are null).
"""

from __future__ import annotations

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

from reference_impl.log.actions import V2_TOP_LEVEL_COLUMNS

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


def single_action_schema(columns: tuple[str, ...] = V2_TOP_LEVEL_COLUMNS) -> StructType:
    """A "single action" row schema holding the given action columns (each a nullable struct)."""
    return StructType([StructField(c, ACTION_STRUCTS[c], nullable=True) for c in columns])


#: The schema used to read commit files (``checkpointMetadata``/``sidecar`` are read so that their
#: illegal presence can be detected, then ignored).
COMMIT_SCHEMA = single_action_schema()
