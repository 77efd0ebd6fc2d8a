"""A Spark scan over files the caller has already listed: no existence probe, no listing per file.

Spec: ``spec/checkpoints.md`` §16 Reader rules (the commits of a log segment are the files of one
listing of ``_delta_log``), §19.4 Stores (requests per checkpoint on an object store).

``spark.read.json(paths)`` with one explicit path per commit costs, per path and before the scan
reads a byte, Spark's own file-system calls (Spark 4.2, ``org.apache.spark.sql``):
``DataSource.checkAndGlobPathIfNecessary`` tests that the path exists, then
``InMemoryFileIndex.listLeafFiles`` (through ``bulkListLeafFiles``) lists it as a root path. Through
S3A that is 3 ``HEAD`` requests and a ``LIST`` a commit, in the driver, one after the other (measured
by ``benchmarks/run_s3_bench.py --trace``: 303 ``HEAD`` + 101 ``LIST`` for 101 commits).

:func:`listed_scan` builds the same relation Spark builds for that call — a ``HadoopFsRelation``
with Spark's ``JsonFileFormat`` (or ``ParquetFileFormat``), the given schema and options, over an
``InMemoryFileIndex`` — but with one root path, the listed directory, and the files' statuses from the
caller's listing: ``InMemoryFileIndex.listLeafFiles`` asks its ``FileStatusCache`` for each root path
first (``getLeafFiles``) and lists only the paths it misses, and the cache here is a private one that
holds, for the directory, exactly these files (``SharedInMemoryCache.createForNewClient`` +
``putLeafFiles``). The partition spec is given as empty (``PartitionSpec.emptySpec``), so no
directory name is ever parsed as a partition.

What stays per file is the read itself: Hadoop's ``LineRecordReader.initialize`` opens each split with
``FileSystem.openFile`` and the split's start and end only; S3A's ``OpenFileSupport`` takes a length
only from ``fs.option.openfile.length`` or a supplied status, not from the split end, so S3A still
sends one ``HEAD`` (``getFileStatus``) and then the ``GET``. The scan never sees a file the listing
did not show (a commit written after it is not read); a listed file deleted before the scan fails
the task that opens it, as a file deleted after Spark's own probe does.

One code path for every store: the statuses are plain Hadoop ``FileStatus`` objects built from
:class:`~reference_impl.storage.base.FileInfo` (length, modification time, the file's
:meth:`~reference_impl.storage.location.Location.spark_uri`), without block locations (only
locality hints on HDFS depend on them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from reference_impl.errors import InternalError
from reference_impl.storage.base import FileInfo
from reference_impl.storage.location import Location

#: ``SharedInMemoryCache(maxSizeInBytes, cacheTTL)``: no eviction by size that matters, no expiry.
_CACHE_BYTES = 1 << 60
_NO_TTL = -1
#: Spark's ``FileFormat`` of each format name, under ``org.apache.spark.sql.execution.datasources``.
FORMATS: Mapping[str, str] = {"json": "json.JsonFileFormat", "parquet": "parquet.ParquetFileFormat"}


def listed_scan(
    spark: SparkSession,
    directory: Location,
    files: Sequence[FileInfo],
    fmt: str,
    schema: StructType,
    options: Mapping[str, str],
) -> DataFrame:
    """The rows of ``files`` of ``directory`` in format ``fmt`` (:data:`FORMATS`) with ``schema``, as
    ``spark.read.schema(schema).options(options).format(fmt).load(paths)`` reads them.

    ``files`` come from a listing of ``directory``; no other file of it is read.
    """
    jvm: Any = spark._jvm
    session: Any = spark._jsparkSession
    gateway: Any = spark.sparkContext._gateway
    sources = jvm.org.apache.spark.sql.execution.datasources
    fs = jvm.org.apache.hadoop.fs
    root = fs.Path(directory.spark_uri())
    statuses = gateway.new_array(fs.FileStatus, len(files))
    for i, info in enumerate(files):
        statuses[i] = fs.FileStatus(info.size, False, 1, 0, info.mtime_ms, fs.Path(root, info.name))
    cache = sources.SharedInMemoryCache(_CACHE_BYTES, _NO_TTL).createForNewClient()
    cache.putLeafFiles(root, statuses)
    utils = jvm.org.apache.spark.api.python.PythonUtils
    scala_options = utils.toScalaMap(dict(options))
    data_schema = session.parseDataType(schema.json())
    none = jvm.scala.Option.empty()
    index = sources.InMemoryFileIndex(
        session,
        utils.toSeq([root]),
        scala_options,
        jvm.scala.Option.apply(data_schema),
        cache,
        jvm.scala.Option.apply(sources.PartitionSpec.emptySpec()),
        none,
    )
    found = index.allFiles().size()
    if found != len(files):
        raise InternalError(
            f"Spark's file index holds {found} of the {len(files)} listed files", path=str(directory)
        )
    relation = sources.HadoopFsRelation(
        index,
        session.parseDataType(StructType([]).json()),
        data_schema,
        none,
        getattr(sources, FORMATS[fmt])(),
        scala_options,
        session,
    )
    return DataFrame(session.baseRelationToDataFrame(relation), spark)
