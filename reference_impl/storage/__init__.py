"""Storage: every file operation of the reference implementation, behind one small contract.

Modules, in the order a newcomer reads them:

| module | holds |
|---|---|
| :mod:`~reference_impl.storage.location` | :class:`~reference_impl.storage.location.Location`: a table or file as one normalised URI |
| :mod:`~reference_impl.storage.base` | :class:`~reference_impl.storage.base.Storage` (the protocol), :class:`~reference_impl.storage.base.StorageGuarantees`, :class:`~reference_impl.storage.base.FileInfo` |
| :mod:`~reference_impl.storage.options` | storage options as deltalake names them, and their translation for Spark's S3A |
| :mod:`~reference_impl.storage.local` | :class:`~reference_impl.storage.local.LocalStorage`: local paths and ``file:`` URIs |
| :mod:`~reference_impl.storage.object_store` | :class:`~reference_impl.storage.object_store.ObjectStoreStorage`: ``s3://`` through obstore (conditional PUTs, batched deletes) |
| :mod:`~reference_impl.storage.hadoop` | :class:`~reference_impl.storage.hadoop.HadoopStorage`: ``hdfs://``, ``s3a://``, … through Hadoop's FileSystem API in the Spark session's JVM (temp file + rename; guarantees per scheme) |
| :mod:`~reference_impl.storage.sinks` | :class:`~reference_impl.storage.sinks.TaskSink`: Spark tasks create complete files at their final names, create-if-absent (local, ``s3://``, ``hdfs://`` through hdfs-native) |
| :mod:`~reference_impl.storage.ranges` | a seekable stream over a remote file read by byte ranges (Parquet footers) |
| :mod:`~reference_impl.storage.listed_scan` | a Spark scan over files already listed (their statuses handed to Spark: no probe or listing per file) |
| :mod:`~reference_impl.storage.connectors` | whether Spark has a Hadoop file system for a location (one clear error if not) |
| :mod:`~reference_impl.storage.factory` | :func:`~reference_impl.storage.factory.storage_for`: the storage of a location, by URI scheme |
| :mod:`~reference_impl.storage.class_archive` | not a table's files: the driver JVM's class archive in the local cache (where it is, whether a session maps it) |

Storage is the bottom layer: it imports only :mod:`reference_impl.errors`. Nothing else in
``reference_impl`` touches the OS file API or the Hadoop API (``tests/test_boundaries.py``).
"""

from reference_impl.storage.base import FileInfo, Storage, StorageGuarantees
from reference_impl.storage.factory import SessionSource, open_location, parse_location, storage_for
from reference_impl.storage.location import Location

__all__ = [
    "FileInfo",
    "Location",
    "SessionSource",
    "Storage",
    "StorageGuarantees",
    "open_location",
    "parse_location",
    "storage_for",
]
