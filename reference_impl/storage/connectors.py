"""Whether Spark can reach a table's store: a Hadoop file system for the location's Spark scheme.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (nothing is written before the writer knows it can
finish). Executors read and write checkpoint files through Hadoop's ``FileSystem`` for
:meth:`~reference_impl.storage.location.Location.spark_uri` (``s3://`` is ``s3a://`` there). When
no file system is registered for that scheme (``hadoop-aws`` and the AWS SDK are not on Spark's
classpath, for example), this says so in one ``STORAGE_ERROR`` before any Spark job runs, instead
of a Java stack trace from inside a job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reference_impl.errors import StorageError
from reference_impl.storage.location import Location

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: What puts a Hadoop file system for a scheme on Spark's classpath.
CONNECTOR_HINTS: dict[str, str] = {
    "s3a": "hadoop-aws (the Hadoop version pyspark ships) and the AWS SDK v2 S3 jars it needs "
    "(software.amazon.awssdk:s3-transfer-manager; `delta-ckpt env --resolve-jars` lists a tested set) "
    "with --conf spark.jars=...",
    "abfss": "hadoop-azure",
    "gs": "the Google Cloud Storage connector (gcs-connector)",
}


def require_file_system(jvm: Any, conf: Any, location: Location) -> None:
    """A ``STORAGE_ERROR`` naming ``location`` unless Hadoop (``jvm``, configuration ``conf``) has a
    file system for its Spark scheme; the message says what puts one on the classpath."""
    scheme = location.spark_uri().split("://", 1)[0]
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, conf)
    except Exception as exc:  # py4j's error for Hadoop's UnsupportedFileSystemException
        if "UnsupportedFileSystemException" not in str(exc) and "ClassNotFound" not in str(exc):
            raise
        hint = CONNECTOR_HINTS.get(scheme, f"the Hadoop connector for {scheme}:// (or set fs.{scheme}.impl)")
        raise StorageError(
            f"Spark has no Hadoop file system for {scheme}://, so it cannot reach this table; "
            f"put {hint} on Spark's classpath",
            path=str(location),
        ) from None


def require_spark_connector(spark: SparkSession, location: Location) -> None:
    """:func:`require_file_system` with the Hadoop configuration of ``spark``'s jobs."""
    require_file_system(spark.sparkContext._jvm, spark.sparkContext._jsc.hadoopConfiguration(), location)
