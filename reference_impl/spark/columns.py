"""Column helpers shared by the reader and the writer: conform a struct to a target schema, etc.

Checkpoints written by different producers carry different Parquet schemas (missing columns,
extra fields, other nullability). Spec ``CKPT-SCHEMA``: a missing column reads as null. These
helpers turn whatever a file holds into the one schema of :mod:`reference_impl.spark.schemas`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

from reference_impl.errors import CheckpointCorrupt

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def same_type(a: DataType, b: DataType) -> bool:
    """Equal up to nullability."""
    if isinstance(a, StructType) and isinstance(b, StructType):
        return [f.name for f in a.fields] == [f.name for f in b.fields] and all(
            same_type(x.dataType, y.dataType) for x, y in zip(a.fields, b.fields, strict=True)
        )
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        return same_type(a.elementType, b.elementType)
    if isinstance(a, MapType) and isinstance(b, MapType):
        return same_type(a.keyType, b.keyType) and same_type(a.valueType, b.valueType)
    return a == b


def conform(column: Column, actual: DataType | None, target: DataType, *, where: str) -> Column:
    """``column`` (of type ``actual``, or absent when ``None``) reshaped to ``target``.

    Missing fields become typed nulls, extra fields are dropped, a null struct stays null. A struct
    where a scalar is expected (or the reverse) is a :class:`CheckpointCorrupt` naming ``where``.
    """
    if actual is None:
        return F.lit(None).cast(target)
    if isinstance(target, StructType):
        if not isinstance(actual, StructType):
            raise CheckpointCorrupt(f"{where} is {actual.simpleString()}, expected a struct", path=where)
        if same_type(actual, target):
            return column
        present = {f.name: f.dataType for f in actual.fields}
        fields = [
            conform(
                column.getField(f.name), present.get(f.name), f.dataType, where=f"{where}.{f.name}"
            ).alias(f.name)
            for f in target.fields
        ]
        return F.when(column.isNotNull(), F.struct(*fields))
    if isinstance(actual, StructType):
        raise CheckpointCorrupt(f"{where} is a struct, expected {target.simpleString()}", path=where)
    if same_type(actual, target):
        return column
    return column.cast(target)


def select_conformed(df: DataFrame, targets: Mapping[str, DataType], *, where: str) -> DataFrame:
    """Project ``df`` to exactly the columns of ``targets`` (in that order), conformed."""
    present = {f.name: f.dataType for f in df.schema.fields}
    return df.select(
        *[
            conform(F.col(name), present.get(name), dtype, where=f"{where}:{name}").alias(name)
            for name, dtype in targets.items()
        ]
    )


def dv_unique_id(dv: Column) -> Column:
    """delta-spark's legacy deletion-vector unique id: ``storageType + pathOrInlineDv [+ '@' + offset]``."""
    base = F.concat(dv.getField("storageType"), dv.getField("pathOrInlineDv"))
    with_offset = F.concat(base, F.lit("@"), dv.getField("offset").cast("string"))
    return F.when(dv.isNull(), F.lit(None).cast("string")).otherwise(
        F.when(dv.getField("offset").isNotNull(), with_offset).otherwise(base)
    )
