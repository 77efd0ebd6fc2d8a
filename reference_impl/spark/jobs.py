"""Spark jobs of the reference implementation: job groups, waiting for their tasks, Spark's exceptions,
aggregates observed by a job (:class:`ObservedMetrics`).

When a write job fails, Spark reports the failure while the job's other tasks may still be
running (they are cancelled asynchronously) and may still create files. :func:`job_group` runs a
block's jobs in one Spark job group and, when the block fails, waits until none of the group's
tasks is active (:func:`settle`), so that cleaning up afterwards really leaves nothing behind.

When a job that reads a table's files fails, the Java cause chain says whose fault it is
(spec §16.4, ``CKPT-READ-027``): :func:`store_failure` is the store's failure (an
``IOException``) unless the chain blames the file itself (:data:`FILE_FAULTS`: missing, failing its
Hadoop checksum, bytes that do not decode) — the reader's classifier
(:func:`reference_impl.read.checkpoint.job_error`). :func:`io_cause` is any ``IOException`` of the
chain, for a caller that has already decoded the file on the driver, so that a failure Spark meets
reading it again is not about its bytes (the writer's publisher, for a file it keeps).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import Column, DataFrame
    from pyspark.status import SparkStageInfo

SETTLE_TIMEOUT_S = 120.0


def spark_errors() -> tuple[type[BaseException], ...]:
    """Exception types a failing Spark job raises in Python."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JJavaError)


def io_cause(exc: BaseException) -> str | None:
    """``Class: message`` of the first ``java.io.IOException`` in the Java cause chain of the Spark error
    ``exc``, or None when the chain holds none. It blames the store only when the file is known to decode
    (module docs); a reader classifies with :func:`store_failure`."""
    return _first_io(list(_java_causes(exc)))


def store_failure(exc: BaseException) -> str | None:
    """:func:`io_cause` of the Spark error ``exc`` when nothing in its cause chain says that the file the
    job read is at fault; else None. At fault: the file is gone (``FileNotFoundException``), fails its
    Hadoop checksum file (``ChecksumException``), or holds bytes that do not decode (:data:`FILE_FAULTS`:
    Parquet's and Jackson's decode errors, which are ``IOException``\\ s too, and an early end of file)."""
    causes = list(_java_causes(exc))
    if any(classes & FILE_FAULTS for _, classes in causes):
        return None
    return _first_io(causes)


def _first_io(causes: list[tuple[Any, frozenset[str]]]) -> str | None:
    """``Class: message`` of the first ``java.io.IOException`` of ``causes`` (:func:`_java_causes`), or None."""
    for java, classes in causes:
        if "java.io.IOException" in classes:
            return f"{java.getClass().getSimpleName()}: {java.getMessage()}".splitlines()[0][:300]
    return None


#: Java exceptions that blame the file a job read, not the store that served it (:func:`store_failure`).
FILE_FAULTS = frozenset(
    {
        "java.io.FileNotFoundException",
        "java.io.EOFException",
        "org.apache.hadoop.fs.ChecksumException",
        "org.apache.parquet.ParquetRuntimeException",
        "shaded.parquet.org.apache.thrift.TException",
        "com.fasterxml.jackson.core.JsonProcessingException",
        "org.apache.spark.sql.catalyst.util.BadRecordException",
    }
)


def _java_causes(exc: BaseException) -> Iterator[tuple[Any, frozenset[str]]]:
    """Each Java exception of the cause chain of the Spark error ``exc`` (at most :data:`_MAX_CAUSES`), with
    the names of its class and of every superclass."""
    from pyspark import SparkContext

    java = getattr(exc, "java_exception", None)
    if SparkContext._gateway is None:
        return
    for _ in range(_MAX_CAUSES):
        if java is None:
            return
        names, cls = set(), java.getClass()
        while cls is not None:
            names.add(str(cls.getName()))
            cls = cls.getSuperclass()
        yield java, frozenset(names)
        cause = java.getCause()
        java = None if cause is None or cause.equals(java) else cause


#: How deep :func:`_java_causes` follows a Java cause chain (Spark's are a handful deep).
_MAX_CAUSES = 20


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (Spark's are long), at most 300 characters."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


class ObservedMetrics:
    """Aggregates (``columns``) of ``df`` computed by the job that consumes :attr:`df` — no pass of its own.

    ``DataFrame.observe``: the first job that consumes :attr:`df` reports them; later jobs do not
    replace them. Spark reports none when the optimizer removes the observed node with the plan
    under it (an empty stage that adaptive execution replaces, a filter it proves false above the
    node): then ``Observation.get`` raises (pyspark 4.2: an assertion in ``PythonSQLUtils.toPyRow``)
    and :meth:`get` computes the aggregates in a job of its own — so "no metrics" is never taken
    for a failure of the data the job read.
    """

    def __init__(self, df: DataFrame, *columns: Column) -> None:
        from pyspark.sql import Observation

        self._source = df
        self._columns = columns
        self._observation = Observation()
        self.df = df.observe(self._observation, *columns)

    def get(self) -> dict[str, Any]:
        """The aggregates by name; only after the job that consumed :attr:`df` finished."""
        try:
            return self._observation.get
        except spark_errors():  # no metrics row (see the class docs)
            row: dict[str, Any] = self._source.agg(*self._columns).collect()[0].asDict()
            return row


@contextmanager
def job_group(sc: SparkContext, label: str) -> Iterator[None]:
    """Run the block's Spark jobs in a job group; if the block fails, wait for the group's tasks to end.

    A caller's job group is kept (its jobs are then waited for too); otherwise a fresh one is used.
    """
    keys = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
    group = sc.getLocalProperty(keys[0])
    previous = {key: sc.getLocalProperty(key) for key in keys} if group is None else None
    if group is None:
        group = f"delta-ckpt-{label}-{uuid.uuid4()}"
        sc.setJobGroup(group, f"delta-ckpt: write {label}")
    try:
        yield
    except BaseException:
        settle(sc, group)
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


def settle(sc: SparkContext, group: str) -> None:
    """Wait until no task of the job group ``group`` is still running (bounded by a timeout)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        if all(info.numActiveTasks == 0 for info in job_group_stages(sc, group)):
            return
        time.sleep(0.1)
