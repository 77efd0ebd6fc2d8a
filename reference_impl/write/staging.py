"""Write checkpoint files with Spark's executors into a hidden staging directory, verify, publish.

Spec: ``spec/checkpoints.md`` § Writer rules (``CKPT-WRITE-*``).

Executors write with Spark's own Parquet (or JSON) writer — the parquet-mr writer delta-spark
uses, so the physical layout matches — into ``_delta_log/.delta-ckpt-staging-<uuid>/``. Spark's
output-commit protocol keeps only the files of successful task attempts, so a failed or retried
task never leaves a file there. Nothing in staging is visible to readers: the directory is hidden,
and readers list only files directly in ``_delta_log`` and named ones in ``_sidecars``.

When a write job fails, Spark reports the failure while the job's other tasks may still be
running (they are cancelled asynchronously) and may still create files in staging. Every write
therefore runs in a Spark job group, and on failure :func:`_settle` waits until none of the
group's tasks is active (Spark kills them when it aborts the job), so that removing the staging
directory afterwards really leaves nothing behind.

Then, on the driver:

1. :func:`stage` maps each staged file to its Spark partition (``part-<partition>-…``) and creates
   empty files for empty partitions when asked (multi-part checkpoints need every part);
2. :func:`read_back_counts` reads every staged file back and counts its rows by action kind — the
   self-check compares those counts with the state before anything is published;
3. :func:`publish` links a staged file to its final name only if that name is free (never replaces)
   and returns the final file's real size and modification time.
"""

from __future__ import annotations

import re
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from reference_impl.errors import StorageError
from reference_impl.storage.local import FileInfo, LocalStorage, to_uri

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame
    from pyspark.status import SparkStageInfo

_SETTLE_TIMEOUT_S = 120.0

_PART_RE = re.compile(r"^part-(\d+)-.*\.(parquet|json)$")


@dataclass(frozen=True)
class StagedFile:
    """A file in staging and the Spark partition that wrote it."""

    partition: int
    path: Path


@dataclass(frozen=True)
class ActionCounts:
    rows: int
    adds: int
    removes: int

    @property
    def non_file(self) -> int:
        return self.rows - self.adds - self.removes


class StagingArea:
    """A hidden directory under ``_delta_log`` that is removed when the writer is done."""

    def __init__(self, log_dir: Path) -> None:
        self.root = log_dir / f".delta-ckpt-staging-{uuid.uuid4()}"
        self._count = 0

    def new_dir(self, label: str) -> Path:
        self._count += 1
        slug = re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")
        return self.root / f"{self._count:02d}-{slug}"

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def stage(
    df: DataFrame,
    directory: Path,
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
    with _job_group(df, directory.name):
        if fmt == "parquet":
            writer.option("compression", compression).parquet(to_uri(directory))
        else:
            writer.option("compression", "none").option("ignoreNullFields", "true").json(to_uri(directory))
    staged = _list_parts(directory)
    seen = {s.partition for s in staged}
    if fill_empty and len(seen) < num_partitions:
        template = _empty_file(
            df, directory.with_name(directory.name + "-empty"), fmt=fmt, compression=compression
        )
        for partition in range(num_partitions):
            if partition not in seen:
                target = directory / f"part-{partition:05d}-empty.{fmt}"
                shutil.copyfile(template, target)
                staged.append(StagedFile(partition, target))
    return sorted(staged, key=lambda s: s.partition)


@contextmanager
def _job_group(df: DataFrame, label: str) -> Iterator[None]:
    """Run the block's Spark jobs in a job group; if the block fails, wait for the group's tasks to end.

    A caller's job group is kept (its jobs are then waited for too); otherwise a fresh one is used.
    """
    sc = df.sparkSession.sparkContext
    keys = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
    group = sc.getLocalProperty(keys[0])
    previous = {key: sc.getLocalProperty(key) for key in keys} if group is None else None
    if group is None:
        group = f"delta-ckpt-{label}-{uuid.uuid4()}"
        sc.setJobGroup(group, f"delta-ckpt: write {label}")
    try:
        yield
    except BaseException:
        _settle(sc, group)
        raise
    finally:
        for key, value in (previous or {}).items():
            sc.setLocalProperty(key, value)  # type: ignore[arg-type]  # None removes the property


def job_group_stages(sc: SparkContext, group: str) -> list[SparkStageInfo]:
    """What Spark's status tracker knows of every stage of every job in the job group ``group``."""
    tracker = sc.statusTracker()
    infos = (
        tracker.getStageInfo(stage_id)
        for job_id in tracker.getJobIdsForGroup(group)
        if (job := tracker.getJobInfo(job_id)) is not None
        for stage_id in job.stageIds
    )
    return [info for info in infos if info is not None]


def _settle(sc: SparkContext, group: str) -> None:
    """Wait until no task of the job group ``group`` is still running (bounded by a timeout)."""
    deadline = time.monotonic() + _SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        if all(info.numActiveTasks == 0 for info in job_group_stages(sc, group)):
            return
        time.sleep(0.1)


def _list_parts(directory: Path) -> list[StagedFile]:
    out = []
    for info in LocalStorage().list_dir(directory):
        match = _PART_RE.match(info.name)
        if match:
            out.append(StagedFile(int(match.group(1)), directory / info.name))
    return out


def _empty_file(df: DataFrame, directory: Path, *, fmt: str, compression: str) -> Path:
    """Spark writes one schema-only file for an empty DataFrame; use it as the empty part."""
    empty = df.limit(0).coalesce(1)
    writer = empty.write.mode("errorifexists")
    with _job_group(df, directory.name):
        if fmt == "parquet":
            writer.option("compression", compression).parquet(to_uri(directory))
        else:
            writer.json(to_uri(directory))
    files = _list_parts(directory)
    if not files:
        # Spark 4 writes no file for an empty JSON output; an empty file is a valid empty JSON-lines file.
        target = directory / "part-00000-empty.json"
        directory.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"")
        return target
    return files[0].path


def read_back_counts(spark_df_reader: DataFrame) -> dict[str, ActionCounts]:
    """Per staged file (by name): rows, ``add`` rows and ``remove`` rows, read back from disk."""
    has_add = "add" in spark_df_reader.columns
    has_remove = "remove" in spark_df_reader.columns
    add_flag = F.col("add").isNotNull() if has_add else F.lit(False)
    remove_flag = F.col("remove").isNotNull() if has_remove else F.lit(False)
    rows = (
        spark_df_reader.groupBy(F.col("_metadata.file_name").alias("name"))
        .agg(
            F.count(F.lit(1)).alias("rows"),
            F.sum(F.when(add_flag, 1).otherwise(0)).alias("adds"),
            F.sum(F.when(remove_flag, 1).otherwise(0)).alias("removes"),
        )
        .collect()
    )
    return {
        r["name"]: ActionCounts(int(r["rows"]), int(r["adds"] or 0), int(r["removes"] or 0)) for r in rows
    }


def publish(staged: Path, final: Path) -> FileInfo:
    """Move ``staged`` to ``final`` unless ``final`` exists (then :class:`FileExistsError`)."""
    storage = LocalStorage()
    storage.publish_new(staged, final)
    info = storage.stat(final)
    if info is None:
        raise StorageError("published file vanished", path=str(final))
    return info
