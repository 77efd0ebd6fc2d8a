"""The sidecar tasks' Parquet encoder: identical rows give identical bytes, Spark's schema is in the footer,
unique columns are plain (no Spark; the tasks themselves run in test_content.py, test_crash_points.py and
test_cluster_stores.py).

Spec: ``spec/checkpoints.md`` §7 Parquet layout, §17.4 Retries, zombies and determinism (a retried or
zombie attempt of a sidecar task writes the same bytes under the same name).
"""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import types as T

from reference_impl.write import task_files
from reference_impl.write.task_files import SPARK_SCHEMA_KEY, SPARK_VERSION_KEY, ParquetLayout, parquet_bytes

SCHEMA = T.StructType(
    [
        T.StructField(
            "add",
            T.StructType(
                [
                    T.StructField("path", T.StringType()),
                    T.StructField("partitionValues", T.MapType(T.StringType(), T.StringType())),
                    T.StructField("size", T.LongType()),
                    T.StructField("stats", T.StringType()),
                ]
            ),
        ),
        T.StructField("remove", T.StructType([T.StructField("path", T.StringType())])),
    ]
)
ARROW = pa.schema(
    [
        ("add", pa.struct([("path", pa.string()), ("partitionValues", pa.map_(pa.string(), pa.string())),
                           ("size", pa.int64()), ("stats", pa.string())])),
        ("remove", pa.struct([("path", pa.string())])),
    ]
)  # fmt: skip


def _rows(n: int) -> pa.Table:
    adds = [
        {"path": f"part-{i:05d}.parquet", "partitionValues": [("p", str(i % 3))], "size": i, "stats": "{}"}
        for i in range(n)
    ]
    return pa.table({"add": adds, "remove": [None] * n}, schema=ARROW)


def _batched(table: pa.Table, sizes: list[int]) -> list[pa.RecordBatch]:
    out, start = [], 0
    for size in sizes:
        out += table.slice(start, size).to_batches()
        start += size
    return out


def test_identical_rows_give_identical_bytes_whatever_the_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same 25 rows in Arrow batches cut three ways: the same bytes, row groups of ROW_GROUP_ROWS rows."""
    monkeypatch.setattr(task_files, "ROW_GROUP_ROWS", 10)
    layout = ParquetLayout.of(SCHEMA, "zstd", "4.2.0")
    rows = _rows(25)
    encoded = [parquet_bytes(_batched(rows, sizes), ARROW, layout) for sizes in ([25], [3, 7, 15], [1] * 25)]
    assert set(encoded) == {encoded[0]}, "the bytes depend on how the rows were batched"
    data, count = encoded[0]
    assert count == 25
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert groups == [10, 10, 5], f"row groups {groups}"


def test_footer_holds_spark_s_schema_and_unique_columns_are_plain() -> None:
    """Spark reads the exact types back from the footer's Spark schema; ``add.path`` and ``add.stats`` carry
    no dictionary page, ``add.partitionValues`` and ``add.size`` do; the codec is the plan's."""
    data, _ = parquet_bytes(_rows(50).to_batches(), ARROW, ParquetLayout.of(SCHEMA, "snappy", "4.2.0"))
    parquet = pq.ParquetFile(io.BytesIO(data))
    meta = parquet.metadata.metadata
    assert json.loads(meta[SPARK_SCHEMA_KEY.encode()]) == json.loads(SCHEMA.json()), meta
    assert meta[SPARK_VERSION_KEY.encode()] == b"4.2.0", meta
    group = parquet.metadata.row_group(0)
    columns = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
    dictionary = {p for p, c in columns.items() if c.dictionary_page_offset is not None}
    assert {"add.path", "add.stats"}.isdisjoint(dictionary), f"dictionary-encoded: {sorted(dictionary)}"
    assert {"add.partitionValues.key_value.key", "add.size"} <= dictionary, sorted(dictionary)
    assert {c.compression for c in columns.values()} == {"SNAPPY"}


def test_an_empty_file_holds_the_schema_and_no_rows() -> None:
    """The one sidecar of an empty state: a schema, no row group, Spark's schema in the footer; ``uncompressed``
    is pyarrow's ``none``."""
    data, rows = parquet_bytes([], ARROW, ParquetLayout.of(SCHEMA, "uncompressed", "4.2.0"))
    parquet = pq.ParquetFile(io.BytesIO(data))
    assert (
        rows == 0 and parquet.metadata.num_row_groups == 0 and parquet.schema_arrow.names == ["add", "remove"]
    )
    assert SPARK_SCHEMA_KEY.encode() in parquet.metadata.metadata
