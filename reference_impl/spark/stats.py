"""``stats_parsed`` and ``partitionValues_parsed``: their schemas and the columns that fill them.

Spec: ``spec/checkpoints.md`` §8 Statistics and parsed columns (``CKPT-STATS-*``); PROTOCOL.md
"Checkpoints" (``partitionValues_parsed``, ``stats_parsed``), "Per-file Statistics"; delta-spark
``StatisticsCollection.statsSchema`` and ``Checkpoints.extractPartitionValues``.

| struct | fields | names |
|---|---|---|
| ``partitionValues_parsed`` | one per partition column, typed as in the table schema; a value that does not parse is null | physical |
| ``stats_parsed`` | ``numRecords: long``; ``minValues`` / ``maxValues`` (stats-eligible leaf types only); ``nullCount`` (every indexed leaf, ``long``); ``tightBounds: boolean`` only when the table supports deletion vectors | physical |

Indexed columns: the data columns (partition columns excluded), limited to the first
``delta.dataSkippingNumIndexedCols`` leaves (default 32, negative = all) or to
``delta.dataSkippingStatsColumns`` when set. Eligible min/max types: numbers, date, timestamp,
timestamp_ntz, string (variant only with shredding — not modelled).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql import types as T

from reference_impl.log.table_properties import PHYSICAL_NAME_KEY, TableProperties

if TYPE_CHECKING:
    from pyspark.sql import Column

_ELIGIBLE = (
    T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType,
    T.DateType, T.TimestampType, T.TimestampNTZType, T.StringType,
)  # fmt: skip


def table_schema(metadata: dict[str, Any]) -> T.StructType:
    """The table schema (``metaData.schemaString``) as a Spark ``StructType``."""
    parsed = T.StructType.fromJson(json.loads(metadata["schemaString"]))
    return parsed


def physical_name(field: T.StructField, mapping_mode: str) -> str:
    if mapping_mode == "none":
        return field.name
    return str(field.metadata.get(PHYSICAL_NAME_KEY, field.name))


def _data_schema(schema: T.StructType, partition_columns: list[str]) -> T.StructType:
    parts = {c.lower() for c in partition_columns}
    return T.StructType([f for f in schema.fields if f.name.lower() not in parts])


def _truncate(schema: T.StructType, limit: int) -> tuple[T.StructType, int]:
    """The first ``limit`` leaf columns (depth first), as delta-spark's ``truncateSchema``."""
    count, fields = 0, []
    for field in schema.fields:
        if count >= limit:
            break
        if isinstance(field.dataType, T.StructType):
            inner, n = _truncate(field.dataType, limit - count)
            count += n
            fields.append(T.StructField(field.name, inner, field.nullable, field.metadata))
        else:
            count += 1
            fields.append(field)
    return T.StructType(fields), count


def _split_path(text: str) -> list[str]:
    parts, current, quoted = [], "", False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.lower() for p in parts]


def _filter(schema: T.StructType, paths: list[list[str]]) -> T.StructType:
    fields = []
    for field in schema.fields:
        name = field.name.lower()
        matching = [p for p in paths if p and p[0] == name]
        if not matching:
            continue
        if any(len(p) == 1 for p in matching) or not isinstance(field.dataType, T.StructType):
            fields.append(field)
            continue
        inner = _filter(field.dataType, [p[1:] for p in matching])
        if inner.fields:
            fields.append(T.StructField(field.name, inner, field.nullable, field.metadata))
    return T.StructType(fields)


def indexed_columns(metadata: dict[str, Any]) -> T.StructType:
    """The columns stats are collected on (logical names)."""
    props = TableProperties(metadata.get("configuration"))
    data = _data_schema(table_schema(metadata), list(metadata.get("partitionColumns") or []))
    stats_columns = props.stats_columns
    if stats_columns is not None:
        return _filter(data, [_split_path(c) for c in stats_columns])
    limit = props.num_indexed_cols
    return data if limit < 0 else _truncate(data, limit)[0]


def _min_max(schema: T.StructType, mode: str) -> T.StructType | None:
    fields = []
    for field in schema.fields:
        if isinstance(field.dataType, T.StructType):
            inner = _min_max(field.dataType, mode)
            if inner is not None:
                fields.append(T.StructField(physical_name(field, mode), inner, True))
        elif isinstance(field.dataType, _ELIGIBLE):
            fields.append(T.StructField(physical_name(field, mode), field.dataType, True))
    return T.StructType(fields) if fields else None


def _null_count(schema: T.StructType, mode: str) -> T.StructType | None:
    fields = []
    for field in schema.fields:
        if isinstance(field.dataType, T.StructType):
            inner = _null_count(field.dataType, mode)
            if inner is not None:
                fields.append(T.StructField(physical_name(field, mode), inner, True))
        else:
            fields.append(T.StructField(physical_name(field, mode), T.LongType(), True))
    return T.StructType(fields) if fields else None


def stats_schema(metadata: dict[str, Any], *, deletion_vectors: bool) -> T.StructType:
    """The ``stats_parsed`` struct for this table, as delta-spark 4.4 builds it."""
    mode = TableProperties(metadata.get("configuration")).column_mapping_mode
    indexed = indexed_columns(metadata)
    min_max = _min_max(indexed, mode)
    null_count = _null_count(indexed, mode)
    fields = [T.StructField("numRecords", T.LongType(), True)]
    if min_max is not None:
        fields += [T.StructField("minValues", min_max, True), T.StructField("maxValues", min_max, True)]
    if null_count is not None:
        fields.append(T.StructField("nullCount", null_count, True))
    if deletion_vectors:
        fields.append(T.StructField("tightBounds", T.BooleanType(), True))
    return T.StructType(fields)


def partition_values_parsed(metadata: dict[str, Any], partition_values: Column) -> Column | None:
    """``partitionValues_parsed`` from the ``partitionValues`` map, or ``None`` when unpartitioned.

    A value that does not parse becomes null (delta-spark casts with ANSI off); ``try_`` functions
    give that behaviour whatever ``spark.sql.ansi.enabled`` says.
    """
    columns = list(metadata.get("partitionColumns") or [])
    if not columns:
        return None
    mode = TableProperties(metadata.get("configuration")).column_mapping_mode
    by_name = {f.name.lower(): f for f in table_schema(metadata).fields}
    fields = []
    for column in columns:
        field = by_name[column.lower()]
        name = physical_name(field, mode)
        value = F.try_element_at(partition_values, F.lit(name))
        fields.append(value.try_cast(field.dataType).alias(name))
    return F.struct(*fields)


def parsed_stats(stats_json: Column, schema: T.StructType) -> Column:
    """``from_json(stats, statsSchema)`` with Spark's default JSON options (as delta-spark)."""
    return F.from_json(stats_json, schema)
