"""The shape of a schema — its field names, nested through structs, arrays and maps — in two notations.

Spec: ``spec/checkpoints.md`` §14 (``CKPT-LAST-005``: ``checkpointSchema``) and §11
(``CKPT-V2-006``: ``sidecarFileSchema``), both Spark ``StructType`` JSON describing a Parquet file.

Comparing shapes, not types, is deliberate: Spark's JSON and a Parquet footer name the same
integer or timestamp differently depending on the writer, but a missing or misnamed column or
field is the same mistake in both. A shape is a sorted tuple of ``(name, child shape)`` pairs.
"""

from __future__ import annotations

from typing import Any

Shape = tuple[tuple[str, Any], ...]


def spark_shape(data_type: Any) -> Shape:
    """The shape of a Spark ``StructType`` JSON value (or any nested type in it)."""
    if isinstance(data_type, dict):
        kind = data_type.get("type")
        if kind == "struct":
            fields = data_type.get("fields") or []
            return tuple(
                sorted(
                    (str(f.get("name")), spark_shape(f.get("type"))) for f in fields if isinstance(f, dict)
                )
            )
        if kind == "array":
            return (("element", spark_shape(data_type.get("elementType"))),)
        if kind == "map":
            return (
                ("key", spark_shape(data_type.get("keyType"))),
                ("value", spark_shape(data_type.get("valueType"))),
            )
    return ()


def arrow_shape(data_type: Any) -> Shape:
    """The shape of a ``pyarrow`` schema or data type."""
    import pyarrow as pa

    if isinstance(data_type, pa.Schema):
        return tuple(sorted((f.name, arrow_shape(f.type)) for f in data_type))
    if pa.types.is_struct(data_type):
        return tuple(sorted((f.name, arrow_shape(f.type)) for f in data_type))
    if pa.types.is_map(data_type):
        return (("key", arrow_shape(data_type.key_type)), ("value", arrow_shape(data_type.item_type)))
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return (("element", arrow_shape(data_type.value_type)),)
    return ()


def describe_difference(expected: Shape, actual: Shape, prefix: str = "") -> str:
    """The first path where two shapes differ, for a finding's ``seen`` value."""
    left, right = dict(expected), dict(actual)
    for name in sorted(set(left) | set(right)):
        path = f"{prefix}{name}"
        if name not in right:
            return f"{path} missing from the file"
        if name not in left:
            return f"{path} not in the recorded schema"
        if left[name] != right[name]:
            return describe_difference(left[name], right[name], path + ".")
    return "equal"
