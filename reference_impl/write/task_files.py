"""Sidecars written by Spark's tasks themselves, each straight to its final name in ``_sidecars/``.

Spec: ``spec/checkpoints.md`` §12 Sidecars, §17.2 Publication order and self-checks
(``CKPT-WRITE-004``, ``CKPT-WRITE-005``), §17.3 Atomicity (``CKPT-WRITE-006``), §17.4 Retries,
zombies and determinism, §19.4 Stores.

PySpark cannot name the files its ``DataFrameWriter`` writes, so the sidecar job is a
``mapInArrow`` over the partitioned, sorted sidecar rows (the DataFrame the self-check's
:class:`~reference_impl.write.staging.ObservedCounts` wraps: the observation stays in this job). Each
task (:class:`SidecarTask`) encodes its partition's rows as Parquet with pyarrow
(:func:`parquet_bytes`) and hands the bytes to the store's
:class:`~reference_impl.storage.sinks.TaskSink`, which creates the file at the name the driver chose
for that partition, create-if-absent — as delta-spark's checkpoint tasks do
(``Checkpoints.writeCheckpoint``). The driver draws the names' UUIDs (``options.uuid_factory``: fixture
generation stays reproducible), one a partition; a task whose partition is empty writes nothing.

A small state is written by the driver instead (:func:`on_driver`: one sidecar of at most
:data:`DRIVER_ROWS` file actions to write): it collects the same partitioned, sorted DataFrame as
Arrow batches from the JVM (the job that consumes it still carries the observation) and runs the same
:meth:`SidecarTask.write` — the same encoding, the same sink's create-if-absent, the same error
reports — so no Spark Python worker starts (issue #12: starting one, with pyarrow and this module
imported, cost the 10-commit table's checkpoint ~1.8 s). Larger states keep the job, whose tasks
spread the encoding over the executors and send the driver no rows.

A retried, speculative or zombie attempt of a partition encodes the same rows in the same order
(the sort) into the same bytes, and finds the name taken: the earlier attempt's file is kept. A
task attempt killed while writing leaves at most a hidden temp file of the sink, never a partial
file at a final name.

Encoding, so that identical rows give identical bytes and Spark reads exact types:

* row groups are cut every :data:`ROW_GROUP_ROWS` rows, whatever Spark's Arrow batches are;
* ``compression`` is the plan's; the columns whose values are unique per file action
  (:func:`~reference_impl.write.staging.plain_columns`) are written without a dictionary, the others
  with one;
* Spark's schema is kept in the footer under ``org.apache.spark.sql.parquet.row.metadata`` (Spark reads
  it back as the exact types, as from files its own writer wrote), with ``org.apache.spark.version``
  (dates and timestamps are proleptic Gregorian, as pyarrow writes them).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from reference_impl.errors import StorageError
from reference_impl.storage.sinks import TaskSink
from reference_impl.write.staging import plain_columns

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql import types as T

#: Rows per Parquet row group of a task-written file.
ROW_GROUP_ROWS = 131_072
#: The driver writes a state's one sidecar itself when it holds at most this many file actions
#: (:func:`on_driver`): twice the fewest actions a sidecar gets to use another core
#: (:data:`~reference_impl.write.sizing.MIN_ACTIONS_PER_CORE_SIDECAR`), so on two or more cores
#: a state the sizing gives one sidecar is written by the driver; a few MB of Arrow on the driver. For a
#: state not counted first the actions are an estimate from the log's bytes (``log_estimate``), which a
#: log of short lines exceeds (25,000 adds of ~95 bytes: 9,235): the driver's rows are bounded by the
#: 2.56 MB of commits (640 kB of checkpoint files) such an estimate allows, not by this count.
DRIVER_ROWS = 10_000
#: Rows per Arrow batch Spark sends the tasks (``spark.sql.execution.arrow.maxRecordsPerBatch``, 10,000
#: by default): Spark's Arrow writer takes time quadratic in a batch's rows for a column of null maps
#: (``add.tags``, a ``remove``'s ``partitionValues`` under every ``add`` row). Measured at 100,000 adds
#: (4 partitions, load ~5): sending the rows took 9-11 s in batches of 10,000, 2.4-2.8 s in batches of
#: 256-1,024 — as long as Spark's own Parquet writer took to write them (2.5-3.2 s); 2,048: 3.7-4.0 s.
ARROW_BATCH_ROWS = 512
ARROW_BATCH_KEY = "spark.sql.execution.arrow.maxRecordsPerBatch"
#: The footer key under which Spark's Parquet writer keeps the Spark schema (``ParquetWriteSupport``).
SPARK_SCHEMA_KEY = "org.apache.spark.sql.parquet.row.metadata"
#: The footer key with the Spark version that wrote a file (Spark reads dates and times by it).
SPARK_VERSION_KEY = "org.apache.spark.version"
#: pyarrow's names of the plan's codecs, where they differ.
_CODECS = {"uncompressed": "none"}
#: What each task reports: the sidecar it created (nothing for an empty partition), or the store's
#: error (``error`` and ``path`` of its :class:`~reference_impl.errors.StorageError`) that stopped it.
RESULT_SCHEMA = "partition int, name string, rows long, bytes long, error string, path string"
_RESULT_ARROW = pa.schema(
    [
        ("partition", pa.int32()),
        ("name", pa.string()),
        ("rows", pa.int64()),
        ("bytes", pa.int64()),
        ("error", pa.string()),
        ("path", pa.string()),
    ]
)


@dataclass(frozen=True)
class ParquetLayout:
    """How a task-written Parquet file is encoded (module docs)."""

    compression: str
    spark_schema: str
    spark_version: str
    plain: tuple[str, ...]

    @classmethod
    def of(cls, schema: T.StructType, compression: str, spark_version: str) -> ParquetLayout:
        return cls(
            _CODECS.get(compression, compression), schema.json(), spark_version, tuple(plain_columns(schema))
        )


def _leaf_paths(dtype: pa.DataType, prefix: str) -> list[str]:
    """The Parquet column paths under a field of type ``dtype`` (as pyarrow names them)."""
    if pa.types.is_struct(dtype):
        return [p for f in dtype for p in _leaf_paths(f.type, f"{prefix}.{f.name}")]
    if pa.types.is_map(dtype):
        return [
            *_leaf_paths(dtype.key_type, f"{prefix}.key_value.key"),
            *_leaf_paths(dtype.item_type, f"{prefix}.key_value.value"),
        ]
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _leaf_paths(dtype.value_type, f"{prefix}.list.element")
    return [prefix]


def parquet_bytes(
    batches: Iterable[pa.RecordBatch], schema: pa.Schema, layout: ParquetLayout
) -> tuple[bytes, int]:
    """``batches`` (of ``schema``) as one Parquet file encoded as the module docs say; its bytes and rows."""
    plain = set(layout.plain)
    dictionary = [p for f in schema for p in _leaf_paths(f.type, f.name) if p not in plain]
    out = pa.BufferOutputStream()
    rows = 0
    with pq.ParquetWriter(
        out, schema, compression=layout.compression, use_dictionary=dictionary, store_schema=False
    ) as writer:
        pending: list[pa.RecordBatch] = []
        held = 0
        for batch in itertools.chain(batches, [None]):
            if batch is not None:
                pending.append(batch)
                held += batch.num_rows
            while held >= ROW_GROUP_ROWS or (batch is None and held):
                table = pa.Table.from_batches(pending, schema=schema).combine_chunks()
                group = table.slice(0, ROW_GROUP_ROWS)
                writer.write_table(group, row_group_size=ROW_GROUP_ROWS)
                rows += group.num_rows
                rest = table.slice(group.num_rows)
                pending, held = rest.to_batches(), rest.num_rows
        writer.add_key_value_metadata(
            {SPARK_SCHEMA_KEY: layout.spark_schema, SPARK_VERSION_KEY: layout.spark_version}
        )
    return out.getvalue().to_pybytes(), rows


@dataclass(frozen=True)
class SidecarTask:
    """The function each task of the sidecar job runs (pickled with the job): encode, create, report."""

    sink: TaskSink
    #: The final name of each partition's sidecar, by partition id.
    names: tuple[str, ...]
    layout: ParquetLayout

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None, "a sidecar task runs in a Spark task"
        report = self.write(context.partitionId(), batches, "the executor's")
        if report is not None:
            yield pa.RecordBatch.from_pylist([report], schema=_RESULT_ARROW)

    def write(self, partition: int, batches: Iterator[pa.RecordBatch], where: str) -> dict[str, Any] | None:
        """Encode ``partition``'s rows and create its sidecar; the report (a :data:`RESULT_SCHEMA` row),
        None for an empty partition. ``where`` names the Python that runs it, for an import error."""
        first = next(batches, None)
        if first is None:
            return None
        data, rows = parquet_bytes(
            itertools.chain([first], batches), first.schema.remove_metadata(), self.layout
        )
        if rows == 0:
            return None
        report: dict[str, Any] = {
            "partition": partition,
            "name": self.names[partition],
            "rows": rows,
            "bytes": len(data),
            "error": None,
            "path": None,
        }
        try:
            self.sink.create(self.names[partition], data)
        except StorageError as exc:  # reported to the driver as the store's error, not a task's crash
            report |= {"error": exc.message, "path": exc.path}
        except ImportError as exc:  # that Python lacks the store's client
            report |= {
                "error": f"{where} Python cannot import {exc.name!r}: install it on the driver and every executor",
                "path": self.sink.directory.uri,
            }
        return report


@dataclass(frozen=True)
class TaskFile:
    """A file a task reported: its partition, name and rows."""

    partition: int
    name: str
    rows: int


def on_driver(sidecars: int, rows: int) -> bool:
    """Whether the driver writes the sidecars (module docs): one sidecar of at most :data:`DRIVER_ROWS`
    file actions to write (``rows``: the state's, or an estimate of them for a state not counted first)."""
    return sidecars == 1 and rows <= DRIVER_ROWS


def write_sidecar_files(df: DataFrame, task: SidecarTask, *, driver: bool) -> list[TaskFile]:
    """Write ``df``'s partitions as sidecars: by the sidecar job (one task a partition) or, with
    ``driver`` (:func:`on_driver`; ``df`` must then be one partition), by the driver from ``df``
    collected as Arrow batches. The files created, by partition.

    Either way, a partition the store failed is reported, not raised where it ran (a task would show
    Spark's Python traceback of the worker): the first such failure is raised here as the one
    :class:`~reference_impl.errors.StorageError` naming its file, with how many other partitions
    failed (``CKPT-WRITE-011``: the writer cannot create files in ``_delta_log/``).

    The driver names what it collects by partition 0: given more than one name, it would put every
    partition's rows into the first sidecar, so it refuses before any job."""
    if driver and len(task.names) != 1:
        raise ValueError(f"the driver writes one sidecar, not {len(task.names)}: {task.names}")
    spark = df.sparkSession
    before = spark.conf.get(ARROW_BATCH_KEY, None)
    spark.conf.set(ARROW_BATCH_KEY, str(ARROW_BATCH_ROWS))  # this job's only (put back below)
    try:
        if driver:
            report = task.write(0, iter(_collect_as_arrow(df)), "the driver's")
            reported = [] if report is None else [report]
        else:
            reported = [row.asDict() for row in _map_in_arrow(df, task, RESULT_SCHEMA).collect()]
    finally:
        if before is None:
            spark.conf.unset(ARROW_BATCH_KEY)
        else:
            spark.conf.set(ARROW_BATCH_KEY, before)
    failed = sorted((r for r in reported if r["error"] is not None), key=lambda r: int(r["partition"]))
    if failed:
        more = f" ({len(failed) - 1} other sidecar write(s) failed too)" if len(failed) > 1 else ""
        raise StorageError(f"{failed[0]['error']}{more}", path=failed[0]["path"], rule="CKPT-WRITE-011")
    return sorted(
        (TaskFile(int(r["partition"]), str(r["name"]), int(r["rows"])) for r in reported),
        key=lambda f: f.partition,
    )


def _collect_as_arrow(df: DataFrame) -> list[pa.RecordBatch]:
    """``df``'s rows as the JVM's Arrow batches, in partition order: what the sidecar job's tasks
    would receive (pyspark's ``toArrow`` casts them to a schema of its own; pyspark is pinned:
    ``pyproject.toml``)."""
    from pyspark.sql.pandas.conversion import PandasConversionMixin

    assert isinstance(df, PandasConversionMixin), "a classic DataFrame (the writer runs no Spark Connect)"
    return df._collect_as_arrow()


def _map_in_arrow(df: DataFrame, func: SidecarTask, schema: str) -> DataFrame:
    """``df.mapInArrow(func, schema)`` without pyspark's demand for pandas: pyspark 4.2 builds the
    function of ``mapInArrow`` through ``pandas_udf``, which requires pandas (``pyspark/sql/pandas/map_ops.py``
    ``mapInArrow``), though an Arrow map runs on pyarrow alone. The same UDF and plan, made as
    ``mapInArrow`` makes them (pyspark is pinned: ``pyproject.toml``)."""
    from pyspark.sql import DataFrame
    from pyspark.sql.udf import UserDefinedFunction
    from pyspark.util import PythonEvalType

    udf = UserDefinedFunction(func, returnType=schema, evalType=PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    column = udf(*[df[c] for c in df.columns])
    return DataFrame(df._jdf.mapInArrow(column._jc, False, None), df.sparkSession)


def write_empty(schema: T.StructType, sink: TaskSink, name: str, layout: ParquetLayout) -> None:
    """The one empty sidecar of an empty state (as delta-spark writes it), created by the driver through the sink."""
    from pyspark.sql.pandas.types import to_arrow_schema

    data, _ = parquet_bytes([], to_arrow_schema(schema), layout)
    sink.create(name, data)
