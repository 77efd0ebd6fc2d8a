"""The sidecar tasks' Parquet encoder: identical rows give identical bytes, Spark's schema is in the footer,
unique columns are plain (no Spark; the tasks themselves run in test_content.py, test_crash_points.py and
test_cluster_stores.py); the sidecar job leaves the session's Arrow batch setting as it was (Spark); a small
state's one sidecar is written by the driver, without the sidecar job, into the bytes the task would write,
the write job's observation still reported (Spark).

Spec: ``spec/checkpoints.md`` §7 Parquet layout, §17.4 Retries, zombies and determinism (a retried or
zombie attempt of a sidecar task writes the same bytes under the same name).
"""

from __future__ import annotations

import io
import json
import shutil
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from reference_impl.storage import Location
from reference_impl.storage.sinks import LocalSink
from reference_impl.write import task_files
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.task_files import SPARK_SCHEMA_KEY, SPARK_VERSION_KEY, ParquetLayout, parquet_bytes
from reference_impl.write.writer import write_checkpoint
from tests.reference_impl.write.helpers import no_sidecar_job, small_v2_table
from tests.support.faults import FaultPlan, InjectedFault
from tests.support.listings import listing_diff, snapshot_files

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


@pytest.mark.spark
@pytest.mark.parametrize("session_value", [None, "77"])
def test_the_sidecar_job_puts_the_session_s_arrow_batch_setting_back(
    spark: SparkSession, tmp_path: Path, session_value: str | None
) -> None:
    """The sidecar job sends its rows in small Arrow batches (:data:`~task_files.ARROW_BATCH_ROWS`: Spark's
    Arrow writer is quadratic in a batch's null maps) for its own job only: the caller's session keeps its
    ``spark.sql.execution.arrow.maxRecordsPerBatch`` (unset stays unset), and the tasks still write every
    row (one file a partition)."""
    key = task_files.ARROW_BATCH_KEY
    if session_value is None:
        spark.conf.unset(key)
    else:
        spark.conf.set(key, session_value)
    try:
        df = spark.range(0, 3000, numPartitions=2).selectExpr(
            "named_struct('path', cast(id as string), 'tags', cast(null as map<string,string>)) as add"
        )
        directory = Location.parse(tmp_path)
        names = ("a.parquet", "b.parquet")
        layout = ParquetLayout.of(df.schema, "snappy", spark.version)
        task = task_files.SidecarTask(LocalSink(directory), names, layout)
        files = task_files.write_sidecar_files(df, task, driver=False)
        assert spark.conf.get(key, None) == session_value, (
            f"{key} is {spark.conf.get(key, None)!r} after the job"
        )
    finally:
        spark.conf.unset(key)
    assert [(f.name, f.rows) for f in files] == [("a.parquet", 1500), ("b.parquet", 1500)], files
    assert sum(pq.read_metadata(tmp_path / n).num_rows for n in names) == 3000


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-005")
def test_the_driver_writes_one_partition_into_the_task_s_bytes_and_the_observation_fires(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One sorted partition of sidecar rows (null maps, parsed statistics of timestamps with and without a
    time zone, dates and decimals, a null ``remove``) written by the sidecar job and by
    the driver (``driver=True``): the same name, rows and bytes; the driver builds no sidecar job; the
    observation on the DataFrame (the self-check's counts, :class:`~reference_impl.write.staging.ObservedCounts`)
    is reported by the driver's collection of it.

    Spec: CKPT-WRITE-005
    "Before publishing a checkpoint, a writer MUST verify that the number of `add` rows it wrote equals the
    number of live files of the version"
    """
    df = (
        spark.range(0, 2500, numPartitions=3)
        .selectExpr(
            "named_struct('path', concat('part-', cast(id as string)), 'partitionValues',"
            " map('p', cast(id % 3 as string)), 'size', id, 'tags', cast(null as map<string,string>),"
            " 'stats_parsed', named_struct('ts', timestamp_seconds(id), 'ntz', cast(timestamp_seconds(id) as"
            " timestamp_ntz), 'd', date_from_unix_date(cast(id as int)), 'dec', cast(id as decimal(12,2)))) as add",
            "cast(null as struct<path:string>) as remove",
        )
        .repartition(1)
        .sortWithinPartitions("add.path")
    )
    layout = ParquetLayout.of(df.schema, "snappy", spark.version)
    names = ("one.parquet",)
    written = {}
    for where in ("tasks", "driver"):
        (tmp_path / where).mkdir()
        sink = LocalSink(Location.parse(tmp_path / where))
        if where == "driver":
            monkeypatch.setattr(task_files, "_map_in_arrow", no_sidecar_job)
            observation = Observation()
            df = df.observe(observation, F.count(F.lit(1)).alias("rows"), F.count("add").alias("adds"))
        files = task_files.write_sidecar_files(
            df, task_files.SidecarTask(sink, names, layout), driver=where == "driver"
        )
        assert [(f.partition, f.name, f.rows) for f in files] == [(0, "one.parquet", 2500)], (
            f"{where}: {files}"
        )
        written[where] = (tmp_path / where / "one.parquet").read_bytes()
    assert observation.get == {"rows": 2500, "adds": 2500}, (
        f"observed by the driver's collection: {observation.get}"
    )
    assert written["driver"] == written["tasks"], (
        f"{tmp_path}/driver/one.parquet ({len(written['driver'])} bytes) differs from the task's "
        f"{tmp_path}/tasks/one.parquet ({len(written['tasks'])} bytes)"
    )


@pytest.mark.spark
def test_a_small_table_s_sidecar_is_written_by_the_driver_as_its_task_would(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seven-commit V2 table (one sidecar, its state not counted first): the writer writes the sidecar on
    the driver (its phase says so, no sidecar job); forced onto the task path (``DRIVER_ROWS`` below any
    state), the same table gets the same sidecar, byte for byte; both read back and counted (12 adds)."""
    source = small_v2_table(tmp_path / "source")
    sidecars = {}
    for where in ("driver", "tasks"):
        table = tmp_path / where
        shutil.copytree(source, table)
        progress = CheckpointOptions().progress
        options = CheckpointOptions(spec="v2", uuid_factory=lambda: uuid.UUID(int=7), progress=progress)
        with monkeypatch.context() as patch:
            if where == "tasks":
                patch.setattr(task_files, "DRIVER_ROWS", -1)
            else:
                patch.setattr(task_files, "_map_in_arrow", no_sidecar_job)
            result = write_checkpoint(table, options=options, spark=spark)
        phases = [p for p in progress.timings if p.startswith("write sidecars")]
        expected = (
            "write sidecars (by the driver)" if where == "driver" else "write sidecars (1 Spark task(s))"
        )
        assert phases == [expected], f"{table}: phases {list(progress.timings)}"
        assert [(f.rows, f.adds) for f in result.sidecars] == [(12, 12)], f"{table}: {result.sidecars}"
        sidecars[where] = (table / "_delta_log" / result.sidecars[0].name).read_bytes()
    assert sidecars["driver"] == sidecars["tasks"], (
        f"{tmp_path}: the driver's sidecar ({len(sidecars['driver'])} bytes) differs from the task's "
        f"({len(sidecars['tasks'])} bytes)"
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-005")
def test_the_driver_refuses_to_write_more_than_one_sidecar(spark: SparkSession, tmp_path: Path) -> None:
    """The driver writes what it collects as partition 0's sidecar: asked for two (two partitions, two
    names), it refuses before any job instead of putting both partitions' rows into the first name, and
    creates nothing.

    Spec: CKPT-WRITE-005
    "Before publishing a checkpoint, a writer MUST verify that the number of `add` rows it wrote equals the
    number of live files of the version"
    """
    df = spark.range(0, 20, numPartitions=2).selectExpr("named_struct('path', cast(id as string)) as add")
    task = task_files.SidecarTask(
        LocalSink(Location.parse(tmp_path)),
        ("a.parquet", "b.parquet"),
        ParquetLayout.of(df.schema, "snappy", spark.version),
    )
    sc = spark.sparkContext
    group = f"driver-refuses-{tmp_path.name}"
    sc.setJobGroup(group, "writer test: the driver asked for two sidecars")
    try:
        with pytest.raises(ValueError, match=r"the driver writes one sidecar, not 2"):
            task_files.write_sidecar_files(df, task, driver=True)
        ran = sc.statusTracker().getJobIdsForGroup(group)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]  # None removes it
    assert ran == [], f"Spark jobs {ran} ran before the refusal"
    assert sorted(p.name for p in tmp_path.iterdir()) == [], f"{tmp_path}: {sorted(tmp_path.iterdir())}"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-003", "CKPT-WRITE-004")
@pytest.mark.parametrize("point", ["staged", "sidecar:1"])
def test_a_write_that_fails_after_the_driver_created_its_sidecar_deletes_it(
    point: str, spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The crash tests force the task path (``--actions-per-sidecar``): here the driver writes the small
    table's one sidecar, then the write fails at ``point`` (read back and counted — so the sidecar was
    there —, or published); the run's sidecar (and any temporary) is deleted: the table's files are as
    they were.

    Spec: CKPT-WRITE-003
    "Writing a checkpoint MUST NOT change the table state that a conforming reader reports for
    any version."
    """
    table = small_v2_table(tmp_path / "table")
    (table / "_delta_log" / "_sidecars").mkdir()
    before = snapshot_files(table)
    monkeypatch.setattr(task_files, "_map_in_arrow", no_sidecar_job)
    progress = CheckpointOptions().progress
    options = CheckpointOptions(spec="v2", hooks=FaultPlan(raise_at=frozenset({point})), progress=progress)
    with pytest.raises(InjectedFault, match=f"injected fault at {point}"):
        write_checkpoint(table, options=options, spark=spark)
    phases = [p for p in progress.timings if p.startswith("write sidecars")]
    assert phases == ["write sidecars (by the driver)"], f"{table}: phases {list(progress.timings)}"
    changes = listing_diff(before, snapshot_files(table))
    assert not changes, f"{table}: after the fault at {point}: {changes}"
