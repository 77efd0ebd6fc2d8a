"""Choose the :class:`~reference_impl.storage.base.Storage` of a table location by its URI scheme.

| scheme | storage |
|---|---|
| none (a local path), ``file:`` | :class:`~reference_impl.storage.local.LocalStorage` |
| ``s3:`` | :class:`~reference_impl.storage.object_store.ObjectStoreStorage` (obstore; Spark reaches it as ``s3a:``) |
| ``hdfs:``, ``s3a:``, ``abfss:``, ``gs:``, … (:data:`HADOOP_SCHEMES`), or any scheme whose ``fs.<scheme>.impl`` is a storage option | :class:`~reference_impl.storage.hadoop.HadoopStorage` (Hadoop's FileSystem API in the Spark session's JVM; guarantees per scheme, :data:`~reference_impl.storage.hadoop.GUARANTEES`) |

Any other scheme is a ``STORAGE_ERROR`` naming the supported ones, before anything is read; a
Hadoop scheme whose file system is not on Spark's classpath is one when the storage starts
(:func:`~reference_impl.storage.connectors.require_file_system`). Storage options are checked
before the JVM starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from reference_impl.errors import InvalidOption, StorageError
from reference_impl.storage.base import Storage
from reference_impl.storage.local import LocalStorage
from reference_impl.storage.location import Location

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Returns the Spark session whose JVM a Hadoop file system is reached through (started on first use).
SessionSource = Callable[[], "SparkSession"]
#: Builds the storage of a location from its storage options and a session source.
StorageFactory = Callable[[Location, Mapping[str, str], "SessionSource | None"], Storage]


def _local(location: Location, options: Mapping[str, str], session: SessionSource | None) -> Storage:
    if options:
        raise InvalidOption(
            f"storage options ({', '.join(sorted(options))}) do not apply to a local path", path=str(location)
        )
    return LocalStorage()


def _object_store(location: Location, options: Mapping[str, str], session: SessionSource | None) -> Storage:
    from reference_impl.storage.object_store import ObjectStoreStorage

    return ObjectStoreStorage(location, options)


def _hadoop(location: Location, options: Mapping[str, str], session: SessionSource | None) -> Storage:
    from reference_impl.storage.hadoop import HadoopStorage, hadoop_conf

    hadoop_conf(location, options)  # an INVALID_OPTION before the JVM starts
    if session is None:
        raise StorageError(
            f"a {location.scheme}:// table is reached through Spark's JVM, and no Spark session was given",
            path=location.uri,
        )
    return HadoopStorage(location, options, session())


#: Schemes of Hadoop file systems (Hadoop's own and the common connectors'), reached through Spark's JVM.
HADOOP_SCHEMES = (
    "hdfs",
    "viewfs",
    "webhdfs",
    "swebhdfs",
    "s3a",
    "abfs",
    "abfss",
    "wasb",
    "wasbs",
    "gs",
    "oss",
)
#: URI scheme -> the storage for it.
STORAGES: dict[str, StorageFactory] = {
    "file": _local,
    "s3": _object_store,
    **dict.fromkeys(HADOOP_SCHEMES, _hadoop),
}


def supported_schemes() -> str:
    return ", ".join(
        ["local paths", *(f"{s}://" for s in STORAGES), "any scheme with a fs.<scheme>.impl option"]
    )


def _factory(location: Location, options: Mapping[str, str]) -> StorageFactory | None:
    if location.scheme in STORAGES:
        return STORAGES[location.scheme]
    return _hadoop if f"fs.{location.scheme}.impl" in options else None


def parse_location(
    location: str | os.PathLike[str] | Location, options: Mapping[str, str] | None = None
) -> Location:
    """The :class:`Location` of a path or URI; a ``STORAGE_ERROR`` for an unsupported scheme."""
    try:
        parsed = Location.parse(location)
    except ValueError as exc:
        raise StorageError(
            str(exc), path=os.fspath(location) if not isinstance(location, Location) else None
        ) from None
    if _factory(parsed, options or {}) is None:
        raise StorageError(
            f"no storage for the URI scheme {parsed.scheme!r}; supported: {supported_schemes()}",
            path=parsed.uri,
        )
    return parsed


def storage_for(
    location: str | os.PathLike[str] | Location,
    options: Mapping[str, str] | None = None,
    *,
    session: SessionSource | None = None,
) -> Storage:
    """The storage that serves ``location`` (a path or a URI), configured with ``options``.

    ``session`` is needed only by stores reached through Spark's JVM (Hadoop file systems).
    """
    parsed = parse_location(location, options)
    factory = _factory(parsed, options or {})
    assert factory is not None
    return factory(parsed, dict(options or {}), session)


def open_location(
    location: str | os.PathLike[str] | Location,
    options: Mapping[str, str] | None = None,
    *,
    session: SessionSource | None = None,
) -> tuple[Location, Storage]:
    """``location`` parsed, and its storage."""
    parsed = parse_location(location, options)
    return parsed, storage_for(parsed, options, session=session)
