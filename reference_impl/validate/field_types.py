"""The Parquet types and nullability of the action fields a checkpoint file stores.

Spec: ``spec/checkpoints.md`` §7 Parquet layout (``CKPT-SCHEMA-002``: each field has the Parquet
type PROTOCOL maps its Delta type to; ``CKPT-SCHEMA-003``: every field optional but map keys).

The expected type of every known action field is the reference's own
:data:`~reference_impl.spark.schemas.ACTION_STRUCTS` (PROTOCOL's action schemas, defined once).
Only fields both sides know are compared; columns and fields the spec does not define are ignored,
as readers ignore them (``CKPT-SCHEMA-010``), and so are the table-dependent ``stats_parsed`` and
``partitionValues_parsed`` structs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructType,
)

from reference_impl.spark.schemas import ACTION_STRUCTS

#: Fields whose shape depends on the table (its columns, its partitioning).
TABLE_DEPENDENT = frozenset({"stats_parsed", "partitionValues_parsed"})


def _spark_kind(data_type: DataType) -> str:
    for kind, name in (
        (StringType, "string"),
        (LongType, "int64"),
        (IntegerType, "int32"),
        (BooleanType, "boolean"),
        (MapType, "map"),
        (ArrayType, "list"),
        (StructType, "struct"),
    ):
        if isinstance(data_type, kind):
            return name
    return data_type.simpleString()


def _arrow_kind(data_type: Any) -> str:
    import pyarrow as pa

    checks = (
        (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "string"),
        (pa.types.is_int64, "int64"),
        (pa.types.is_int32, "int32"),
        (pa.types.is_boolean, "boolean"),
        (pa.types.is_map, "map"),
        (lambda t: pa.types.is_list(t) or pa.types.is_large_list(t), "list"),
        (pa.types.is_struct, "struct"),
    )
    for check, name in checks:
        if check(data_type):
            return name
    return str(data_type)


def type_mismatches(schema: Any) -> Iterator[str]:
    """``path: expected X, found Y`` for each known action field of a Parquet ``schema`` with another type."""
    for column in schema:
        expected = ACTION_STRUCTS.get(column.name)
        if expected is not None:
            yield from _compare(column.name, expected, column.type)


def _compare(path: str, expected: DataType, actual: Any) -> Iterator[str]:
    import pyarrow as pa

    want, got = _spark_kind(expected), _arrow_kind(actual)
    if want != got:
        yield f"{path}: expected {want}, found {got}"
        return
    if isinstance(expected, StructType):
        known = {f.name: f.dataType for f in expected.fields}
        for child in actual:
            if child.name in known and child.name not in TABLE_DEPENDENT:
                yield from _compare(f"{path}.{child.name}", known[child.name], child.type)
    elif isinstance(expected, ArrayType) and pa.types.is_list(actual):
        yield from _compare(f"{path}.element", expected.elementType, actual.value_type)
    elif isinstance(expected, MapType) and pa.types.is_map(actual):
        yield from _compare(f"{path}.key", expected.keyType, actual.key_type)
        yield from _compare(f"{path}.value", expected.valueType, actual.item_type)


def required_fields(schema: Any) -> Iterator[str]:
    """Paths of fields declared required (not null) at any level, map keys excepted."""
    import pyarrow as pa

    def walk(path: str, field: Any) -> Iterator[str]:
        if not field.nullable:
            yield path
        data_type = field.type
        if pa.types.is_struct(data_type):
            for child in data_type:
                yield from walk(f"{path}.{child.name}", child)
        elif pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
            yield from walk(f"{path}.element", data_type.value_field)
        elif pa.types.is_map(data_type):
            yield from walk(f"{path}.value", data_type.item_field)

    for column in schema:
        yield from walk(column.name, column)
