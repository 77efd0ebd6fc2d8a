"""Column helpers shared by the reader and the writer: conform to a schema, make nullable, file identity.

Spec: ``spec/checkpoints.md`` §7 Parquet layout (``CKPT-SCHEMA-*``: a missing column reads as
null; every written field is optional). Checkpoints written by different producers carry
different Parquet schemas (missing columns, extra fields, other nullability): :func:`conform` and
:func:`select_conformed` turn whatever a file holds into the one schema of
:mod:`reference_impl.spark.schemas`; :func:`nullable_df` makes Spark write every field optional.
File identity (§6, ``CKPT-CONTENT-003``, ``CKPT-CONTENT-014``) is ``(canonical_path(path),
dv_unique_id(deletionVector))``: :func:`canonical_path` and :func:`dv_unique_id`; a writer partitions file
actions by :func:`placement_key`, one key per canonical path.
"""

from __future__ import annotations

import operator
import string
from collections.abc import Mapping
from functools import reduce
from typing import TYPE_CHECKING
from urllib.parse import quote

from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, MapType, StructField, StructType

from reference_impl.errors import CheckpointCorrupt
from reference_impl.storage import Location

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
    where a scalar is expected (or the reverse) is a :class:`CheckpointCorrupt` naming ``where``
    (:func:`check_conformable`).
    """
    check_conformable(actual, target, where=where)
    return _conformed(column, actual, target)


def check_conformable(actual: DataType | None, target: DataType, *, where: str) -> None:
    """Raise :class:`CheckpointCorrupt` naming ``where`` (and the field) when :func:`conform` cannot
    reshape ``actual`` to ``target``: a struct where a scalar is expected, or the reverse, at any
    depth. Types only: a caller that plans its read later can refuse a file now."""
    if actual is None or same_type(actual, target):
        return
    if isinstance(target, StructType):
        if not isinstance(actual, StructType):
            raise CheckpointCorrupt(f"{where} is {actual.simpleString()}, expected a struct", path=where)
        present = {f.name: f.dataType for f in actual.fields}
        for f in target.fields:
            check_conformable(present.get(f.name), f.dataType, where=f"{where}.{f.name}")
    elif isinstance(actual, StructType):
        raise CheckpointCorrupt(f"{where} is a struct, expected {target.simpleString()}", path=where)


def _conformed(column: Column, actual: DataType | None, target: DataType) -> Column:
    """:func:`conform` once :func:`check_conformable` passed."""
    if actual is None:
        return F.lit(None).cast(target)
    if same_type(actual, target):
        return column
    if isinstance(target, StructType) and isinstance(actual, StructType):
        present = {f.name: f.dataType for f in actual.fields}
        fields = [
            _conformed(column.getField(f.name), present.get(f.name), f.dataType).alias(f.name)
            for f in target.fields
        ]
        return F.when(column.isNotNull(), F.struct(*fields))
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


def as_nullable(dtype: DataType) -> DataType:
    """The same type with every field, element and value nullable (map keys stay required)."""
    if isinstance(dtype, StructType):
        return StructType([StructField(f.name, as_nullable(f.dataType), True) for f in dtype.fields])
    if isinstance(dtype, ArrayType):
        return ArrayType(as_nullable(dtype.elementType), True)
    if isinstance(dtype, MapType):
        return MapType(dtype.keyType, as_nullable(dtype.valueType), True)
    return dtype


def nullable_df(df: DataFrame) -> DataFrame:
    """Cast every column to its all-nullable type (Spark then writes every Parquet field optional);
    ``df`` itself when every column's type is all-nullable already: no DataFrame whose casts Spark
    would drop, but whose ``select`` it analyses as it is made (issue #12)."""
    fields = df.schema.fields
    if all(f.dataType == as_nullable(f.dataType) for f in fields):
        return df
    return df.select(*[F.col(f.name).cast(as_nullable(f.dataType)).alias(f.name) for f in fields])


#: A URI scheme at the start of a path (RFC 3986 §3.1).
_SCHEME_RE = r"^[A-Za-z][A-Za-z0-9+.\-]*:"
_UPPER, _LOWER = string.ascii_uppercase, string.ascii_lowercase


def table_root_uri(root: Location) -> str:
    """The table root ``R`` of ``CKPT-CONTENT-014``: ``scheme:[//authority]path``, the path percent-encoded."""
    authority = f"//{root.authority}" if root.authority else ""
    return f"{root.scheme}:{authority}{quote(root.path, safe='/')}"


def canonical_path(path: Column, root: Location) -> Column:
    """The canonical form of a file action's ``path`` (``CKPT-CONTENT-014``): the key of file identity.

    1. a path with a scheme is taken as it is; one starting with ``/`` gets the root's scheme and
       authority; any other is appended to the table root;
    2. the scheme is lower-cased and an empty authority dropped (``file:///p`` is ``file:/p``);
    3. empty and ``.`` segments are dropped, each ``..`` removes the segment before it;
    4. the path is percent-decoded (a ``%`` without two hex digits, and ``+``, stay themselves).

    One Spark expression (no Python UDF): it runs where the actions are, for any number of files.
    A plain relative path (:func:`_plain_relative`: how writers spell nearly every path) is the
    canonical root, ``/`` and the path as it is; only other spellings take the steps above, whose
    segment walk Spark evaluates without code generation (issue #12: at 1M files that walk was most
    of the reconciliation's time).
    """
    root_uri = table_root_uri(root)
    prefix = f"{root.scheme}:" + (f"//{root.authority}" if root.authority else "")
    absolute = (
        F.when(path.rlike(_SCHEME_RE), path)
        .when(path.startswith("/"), F.concat(F.lit(prefix), path))
        .otherwise(F.concat(F.lit(root_uri.rstrip("/") + "/"), path))
    )
    # The scheme is ASCII (RFC 3986): lower-cased by translate, not F.lower, whose first use in a JVM
    # builds Spark's ICU title-case table (CollationAwareUTF8String: ~0.5 s of a short command's CPU).
    scheme = F.translate(F.regexp_extract(absolute, r"^([A-Za-z][A-Za-z0-9+.\-]*):", 1), _UPPER, _LOWER)
    after_scheme = F.regexp_replace(absolute, _SCHEME_RE, "")
    authority = F.regexp_extract(after_scheme, r"^//([^/]*)", 1)
    rest = F.regexp_replace(after_scheme, r"^//[^/]*", "")
    segments = F.aggregate(
        F.split(rest, "/"),
        F.array().cast("array<string>"),
        lambda kept, segment: (
            F.when((segment == "") | (segment == "."), kept)
            .when(segment == "..", F.slice(kept, 1, F.greatest(F.size(kept) - 1, F.lit(0))))
            .otherwise(F.concat(kept, F.array(segment)))
        ),
    )
    encoded = F.concat(F.lit("/"), F.array_join(segments, "/"))
    general = F.concat(
        scheme,
        F.lit(":"),
        F.when(authority != "", F.concat(F.lit("//"), authority)).otherwise(F.lit("")),
        _percent_decoded(encoded),
    )
    return F.when(_plain_relative(path), F.concat(F.lit(canonical_root(root)), path)).otherwise(general)


def canonical_root(root: Location) -> str:
    """What :func:`canonical_path` puts before a path relative to ``root``: the root's canonical form
    and ``/`` (the root is a normalised, decoded Location: its scheme, authority and path)."""
    return f"{root.scheme}:" + (f"//{root.authority}" if root.authority else "") + root.path.rstrip("/") + "/"


def placement_key(path: Column, root: Location) -> Column:
    """The key a writer hash-partitions file actions by, from their ``path``.

    The canonical path (:func:`canonical_path`) without :func:`canonical_root` when it starts with
    it (the rest never starts with ``/``: canonical paths have no empty segment), else ``/`` and the
    canonical path: one key per canonical path and one canonical path per key. A plain relative path
    (how writers spell nearly every path) is its own key, with no string built: rows land in the
    partitions of ``coalesce(add.path, remove.path)``, delta-spark's partitioning.
    """
    canonical = canonical_path(path, root)
    prefix = canonical_root(root)
    relative = F.substring(canonical, len(prefix) + 1, 1 << 30)
    other = F.when(canonical.startswith(prefix), relative).otherwise(F.concat(F.lit("/"), canonical))
    return F.when(_plain_relative(path), path).otherwise(other)


def _plain_relative(path: Column) -> Column:
    """True when steps 1-4 of :func:`canonical_path` only append ``path`` to the root: a non-empty
    relative path (no ``/`` first, no ``:`` so no scheme) with no ``%`` to decode and no empty,
    ``.`` or ``..`` segment. Plain string tests, cheaper than any regular expression."""
    special = [path.contains(text) for text in ("%", ":", "//", "/./", "/../")]
    special += [path.startswith(text) for text in ("/", "./", "../")]
    special += [path.endswith(text) for text in ("/", "/.", "/..")]
    special += [path.isin("", ".", "..")]
    return ~reduce(operator.or_, special)


def _percent_decoded(text: Column) -> Column:
    """Step 4 of :func:`canonical_path`: percent-decoded; a ``%`` without two hex digits, and ``+``, stay themselves."""
    escaped = F.regexp_replace(F.regexp_replace(text, r"\+", "%2B"), r"%(?![0-9A-Fa-f]{2})", "%25")
    return F.url_decode(escaped)


def canonical_name(path: Column) -> Column:
    """What follows the last ``/`` of :func:`canonical_path` of ``path`` (for any root), without
    canonicalizing the path: its last segment, percent-decoded when it holds a ``%``. Null when
    that cannot be told from the last segment alone (it is empty, ``.`` or ``..``, or the path is
    ``scheme:name`` without a ``/`` or only an authority). Paths whose names are both non-null and differ have different
    canonical paths: a cheap test before the canonical comparison. A path without ``%`` in its last
    segment, ``:`` or ``//`` (most relative paths) is answered without a regular expression."""
    segment = F.substring_index(path, "/", -1)
    name = F.when(segment.contains("%"), F.substring_index(_percent_decoded(segment), "/", -1)).otherwise(
        segment
    )
    authority_only = r"^([A-Za-z][A-Za-z0-9+.\-]*:)?//[^/]*$"  # its last segment is an authority
    unknown = (
        segment.isin("", ".", "..")
        | (~path.contains("/") & path.rlike(_SCHEME_RE))
        | path.rlike(authority_only)
    )
    # Neither a scheme (it needs ':') nor an authority (it needs '//'), nothing to decode.
    plain = ~segment.contains("%") & ~segment.isin("", ".", "..") & ~path.contains(":") & ~path.contains("//")
    return F.when(plain, segment).otherwise(F.when(unknown, F.lit(None).cast("string")).otherwise(name))


def dv_unique_id(dv: Column) -> Column:
    """delta-spark's legacy deletion-vector unique id: ``storageType + pathOrInlineDv [+ '@' + offset]``."""
    base = F.concat(dv.getField("storageType"), dv.getField("pathOrInlineDv"))
    with_offset = F.concat(base, F.lit("@"), dv.getField("offset").cast("string"))
    return F.when(dv.isNull(), F.lit(None).cast("string")).otherwise(
        F.when(dv.getField("offset").isNotNull(), with_offset).otherwise(base)
    )
