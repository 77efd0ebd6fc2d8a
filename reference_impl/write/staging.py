"""Staging: Spark's executors write checkpoint parts and classic or top-level files into a hidden directory; the driver counts them back.

Spec: ``spec/checkpoints.md`` §17.2 Publication order and self-checks (``CKPT-WRITE-005``), §17.4
Retries, zombies and determinism, §19.4 Stores.

Sidecars are not staged: the tasks of the sidecar job create each one at its final name in
``_sidecars/`` (:mod:`reference_impl.write.task_files`). A file with a fixed name — a classic
checkpoint, a multi-part part, a V2 top-level file — is staged, then published create-if-absent
(:mod:`reference_impl.write.publish`). Executors write it with Spark's own Parquet (or JSON) writer
— the parquet-mr writer delta-spark uses, so the physical layout matches — into
``_delta_log/.delta-ckpt-staging-<uuid>/``. Spark's output-commit protocol keeps only the files of
successful task attempts, so a failed or retried task never leaves a file there. Nothing in staging
is visible to readers: the directory is hidden, and readers list only files directly in
``_delta_log`` and named ones in ``_sidecars``. Every write runs in a Spark job group
(:func:`reference_impl.spark.jobs.job_group`), so that after a failure no task is still writing when
the staging directory is removed.

1. :func:`stage` maps each staged file to its Spark partition (``part-<partition>-…``) and creates
   empty files for empty partitions when asked (multi-part checkpoints need every part); Parquet
   columns whose values are unique per file action (:func:`plain_columns`) are written without
   parquet-mr's dictionary encoding, which would hash every value only to fall back to plain;
2. :func:`read_back_counts` reads every written file back (staged, or a task's sidecar) and counts
   its rows by action kind — the self-check compares those counts with the state before anything is
   published. The state's counts are either known before the write (a counted state) or
   :class:`ObservedCounts`: counted by the write job itself, in its writing tasks (after the
   shuffle), with ``DataFrame.observe``.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from pyspark.sql import types as T

from reference_impl.log.naming import staging_dir_name
from reference_impl.spark.jobs import ObservedMetrics, job_group
from reference_impl.storage import Location, Storage

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, DataFrameWriter

_PART_RE = re.compile(r"^part-(\d+)-.*\.(parquet|json)$")

#: Fields of a file action whose values are unique per file, besides the bounds of ``stats_parsed``
#: (:func:`plain_columns`).
_UNIQUE_FIELDS: dict[str, tuple[str, ...]] = {"add": ("path", "stats")}
_UNIQUE_STATS = ("minValues", "maxValues")


def _leaves(dtype: T.DataType, prefix: str) -> list[str]:
    if isinstance(dtype, T.StructType):
        return [leaf for f in dtype.fields for leaf in _leaves(f.dataType, f"{prefix}.{f.name}")]
    return [prefix]


def plain_columns(schema: T.StructType) -> list[str]:
    """Parquet column paths of ``schema`` written without dictionary encoding (issue #12).

    An ``add``'s ``path`` and ``stats`` and the ``minValues``/``maxValues`` leaves of its
    ``stats_parsed`` hold a value per file: parquet-mr's dictionary writer hashes each of them and,
    once the dictionary outgrows its page or does not compress, re-encodes the page plain: the same
    column chunks at a cost (dictionary frames were 13 % of the write job's executor samples on the
    1,000,000-add benchmark table, Java Flight Recorder). Columns whose values repeat (``size``, ``partitionValues``, ``nullCount``, a ``remove``'s
    path under several deletion vectors) keep the dictionary where it pays.
    """
    out: list[str] = []
    for action, names in _UNIQUE_FIELDS.items():
        struct = schema[action].dataType if action in schema.names else None
        if not isinstance(struct, T.StructType):
            continue
        out += [f"{action}.{name}" for name in names if name in struct.names]
        stats = struct["stats_parsed"].dataType if "stats_parsed" in struct.names else None
        if isinstance(stats, T.StructType):
            for bound in _UNIQUE_STATS:
                if bound in stats.names:
                    out += _leaves(stats[bound].dataType, f"{action}.stats_parsed.{bound}")
    return out


def _parquet(writer: DataFrameWriter, schema: T.StructType, compression: str, directory: Location) -> None:
    """``writer`` writes Parquet files into ``directory``: ``compression``, :func:`plain_columns` plain."""
    for column in plain_columns(schema):
        writer = writer.option(f"parquet.enable.dictionary#{column}", "false")
    writer.option("compression", compression).parquet(directory.spark_uri())


@dataclass(frozen=True)
class StagedFile:
    """A file in staging and the Spark partition that wrote it."""

    partition: int
    path: Location


@dataclass(frozen=True)
class ActionCounts:
    """Rows of a file (or a set of files), and how many of them are ``add`` and ``remove`` rows."""

    rows: int
    adds: int
    removes: int
    #: The least ``remove.deletionTimestamp`` (None: no tombstone has one); not part of equality.
    oldest_tombstone: int | None = field(default=None, compare=False)
    #: The rows' name hashes when asked for (:mod:`~reference_impl.write.name_sets`); None: not asked
    #: for, or a row's name cannot be told. Not part of equality.
    names: list[int] | None = field(default=None, compare=False)

    @staticmethod
    def total(counts: dict[str, ActionCounts]) -> ActionCounts:
        return ActionCounts(
            rows=sum(c.rows for c in counts.values()),
            adds=sum(c.adds for c in counts.values()),
            removes=sum(c.removes for c in counts.values()),
        )


class ObservedCounts:
    """Rows, ``add`` rows and ``remove`` rows of ``df`` as counted by the job that consumes :attr:`df`.

    ``DataFrame.observe`` aggregates them in that job's tasks — no pass of its own. ``df`` is the
    state as the write tasks receive it (partitioned and sorted): the observation then sits in the
    job's result stage, whose metrics Spark merges once per partition — a retried, speculative or
    zombie attempt of a partition already merged is not counted again, a failed attempt never
    (Spark 4.2 ``DAGScheduler.handleTaskCompletion``, DAGScheduler.scala:2239-2240; failed tasks
    report only ``countFailedValues`` accumulators, Task.scala:219). Before the shuffle, in a
    shuffle-map stage, every successful attempt is merged (DAGScheduler.scala:2245): a map stage
    re-run after a lost shuffle output counted the state twice, and the self-check failed on a
    correct checkpoint (``test_crash_points.py``, a lost shuffle output). delta-spark counts its
    checkpoint's files at the same place, after its ``repartition`` (Checkpoints.scala:738-743 in
    4.4.0). The self-check thus compares the files read back with the rows the write tasks
    wrote: it catches rows lost or duplicated by the tasks and their attempts, the output
    committer, staging or a task's sink; the shuffle before it is hash partitioning by path, whose re-run yields
    the same rows.

    The first job that consumes :attr:`df` reports the metrics; later jobs (a multi-part
    checkpoint's empty-part file, ``df.limit(0)``) do not replace them. Spark reports none when
    adaptive execution replaces the plan of an empty stage: then :meth:`get` counts the state in a
    job of its own (:class:`~reference_impl.spark.jobs.ObservedMetrics`; and the sidecar writer,
    to keep that count honest, adds no empty-file job).
    """

    def __init__(self, df: DataFrame) -> None:
        self._metrics = ObservedMetrics(
            df,
            F.count(F.lit(1)).alias("rows"),
            F.count("add").alias("adds"),
            F.count("remove").alias("removes"),
        )
        self.df = self._metrics.df

    def get(self) -> ActionCounts:
        """The counts; only after the job that consumed :attr:`df` finished."""
        seen = self._metrics.get()
        return ActionCounts(int(seen["rows"]), int(seen["adds"]), int(seen["removes"]))


class StagingArea:
    """A hidden directory under ``_delta_log`` that is removed when the writer is done.

    A killed writer leaves it behind, and a write cancelled by Ctrl-C may leave it empty (its tasks end in
    the JVM while the writer removes it); cleanup collects it once every file in it — for an empty one,
    its directories' last change — is older than the log cutoff (``CKPT-CLEAN-025``).
    """

    def __init__(self, storage: Storage, log_dir: Location) -> None:
        self.storage = storage
        self.root = log_dir / staging_dir_name(uuid.uuid4())
        self._count = 0

    def new_dir(self, label: str) -> Location:
        self._count += 1
        slug = re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")
        return self.root / f"{self._count:02d}-{slug}"

    def remove(self) -> None:
        self.storage.remove_tree(self.root)


def stage(
    df: DataFrame,
    storage: Storage,
    directory: Location,
    *,
    fmt: str,
    compression: str,
    num_partitions: int,
    fill_empty: bool,
) -> list[StagedFile]:
    """Write ``df`` (already partitioned) to ``directory``; one file per non-empty partition.

    With ``fill_empty``, partitions that produced no file get an empty file with the same schema,
    so the result has exactly ``num_partitions`` files, sorted by partition.
    """
    writer = df.write.mode("errorifexists").option("maxRecordsPerFile", 0)
    with job_group(df.sparkSession.sparkContext, directory.name):
        if fmt == "parquet":
            _parquet(writer, df.schema, compression, directory)
        else:
            writer.option("compression", "none").option("ignoreNullFields", "true").json(
                directory.spark_uri()
            )
    staged = _list_parts(storage, directory)
    seen = {s.partition for s in staged}
    if fill_empty and len(seen) < num_partitions:
        template = _empty_file(
            df, storage, directory.parent / (directory.name + "-empty"), fmt=fmt, compression=compression
        )
        for partition in range(num_partitions):
            if partition not in seen:
                target = directory / f"part-{partition:05d}-empty.{fmt}"
                storage.copy(template, target)
                staged.append(StagedFile(partition, target))
    return sorted(staged, key=lambda s: s.partition)


def _list_parts(storage: Storage, directory: Location) -> list[StagedFile]:
    out = []
    for info in storage.list_dir(directory):
        match = _PART_RE.match(info.name)
        if match:
            out.append(StagedFile(int(match.group(1)), directory / info.name))
    return out


def _empty_file(
    df: DataFrame, storage: Storage, directory: Location, *, fmt: str, compression: str
) -> Location:
    """Spark writes one schema-only file for an empty DataFrame; use it as the empty part."""
    empty = df.limit(0).coalesce(1)
    writer = empty.write.mode("errorifexists")
    with job_group(df.sparkSession.sparkContext, directory.name):
        if fmt == "parquet":
            _parquet(writer, df.schema, compression, directory)
        else:
            writer.json(directory.spark_uri())
    files = _list_parts(storage, directory)
    if not files:
        # Spark 4 writes no file for an empty JSON output; an empty file is a valid empty JSON-lines file.
        target = directory / "part-00000-empty.json"
        storage.mkdirs(directory)
        storage.write_new(target, b"")
        return target
    return files[0].path


def read_back_counts(df: DataFrame, names: Column | None = None) -> dict[str, ActionCounts]:
    """Per file (by name): rows, ``add`` rows, ``remove`` rows and oldest tombstone of ``df`` as read back
    from disk; with ``names`` (a per-row hash, null when unknown), also the distinct hashes of the file's
    rows, in the same aggregation (:func:`~reference_impl.write.name_sets.row_name_hash`)."""
    add_flag = F.col("add").isNotNull() if "add" in df.columns else F.lit(False)
    remove_flag = F.col("remove").isNotNull() if "remove" in df.columns else F.lit(False)
    # A tombstone without a deletion time counts as deleted at 0, as the state's expiry has it (``unexpired``).
    deleted = (
        F.when(remove_flag, F.coalesce(F.col("remove.deletionTimestamp"), F.lit(0)))
        if "remove" in df.columns
        else F.lit(None).cast("long")
    )
    rows = (
        df.groupBy(F.col("_metadata.file_name").alias("name"))
        .agg(
            F.count(F.lit(1)).alias("rows"),
            F.sum(F.when(add_flag, 1).otherwise(0)).alias("adds"),
            F.sum(F.when(remove_flag, 1).otherwise(0)).alias("removes"),
            F.min(deleted).alias("oldest"),
            *(
                []
                if names is None
                else [F.collect_set(names).alias("names"), F.count_if(names.isNull()).alias("unnamed")]
            ),
        )
        .collect()
    )
    return {
        r["name"]: ActionCounts(
            int(r["rows"]),
            int(r["adds"] or 0),
            int(r["removes"] or 0),
            None if r["oldest"] is None else int(r["oldest"]),
            None if names is None or r["unnamed"] else list(r["names"]),
        )
        for r in rows
    }
