"""Task sinks: an executor creates a complete file at its final name in the table's store, never replacing one.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``: no file is ever replaced, no
reader sees a partial file), §17.4 Retries, zombies and determinism, §19.4 Stores.

The writer's Spark tasks encode each sidecar themselves and hand its bytes to a sink, which they
got from the driver's :meth:`~reference_impl.storage.base.Storage.task_sink` (pickled with the
task: a sink holds a directory and the store's options, and opens its client in the task's Python
worker, once per worker). Its one operation, :meth:`TaskSink.create`, puts a complete file at a
name, create-if-absent, as delta-spark's checkpoint tasks do (``Checkpoints.writeCheckpoint``: the
final path, or on a store whose partial writes are visible a hidden ``.<name>.<uuid>.tmp`` in the
same directory and a rename):

| sink | how |
|---|---|
| :class:`LocalSink` (local paths) | ``.<name>.<uuid>.tmp`` written and fsynced, hard-linked to ``name`` (fails if it exists), unlinked |
| :class:`S3Sink` (``s3://``, obstore) | one PUT with ``If-None-Match: *``: the object appears complete or not at all |
| :class:`HdfsSink` (``hdfs://``, hdfs-native) | ``.<name>.<uuid>.tmp`` created and closed, renamed to ``name`` without overwrite (a NameNode operation) |

The directory is created when missing (by the first file in it). A name that is taken is kept: the names are unique per run (the driver draws them), so the file
there is an earlier attempt's of the same task, which wrote the same rows (:meth:`TaskSink.create`
returns ``False``). A task attempt killed while writing leaves at most a hidden temp file, never a
partial file at a final name; a cleaner collects those in ``_sidecars/`` once older than the sidecar
cutoff (``CKPT-CLEAN-027``; :func:`~reference_impl.log.naming.is_sidecar_temp_name` recognises them),
and a failed write deletes its own (the writer, :func:`~reference_impl.storage.local.is_temp_of`).
No sink uses the executor's or the driver's local disk for a file of another store.

HDFS through hdfs-native (a Rust client: no JVM in the Python worker): the NameNode (or name
service) is the location's authority; the storage options that are Hadoop keys are passed as its
configuration, over what it reads from ``$HADOOP_CONF_DIR``'s ``core-site.xml`` and ``hdfs-site.xml``
(it uses the keys it knows — name services, HA NameNodes, ``dfs.client.*`` — and ignores others).
Kerberos needs the system's ``libgssapi_krb5`` on every executor; files in HDFS encryption zones
need its Rust crate's ``kms`` feature, off by default (not verified here).
"""

from __future__ import annotations

import contextlib
import functools
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from reference_impl.errors import StorageError
from reference_impl.storage.local import LocalStorage, temp_name
from reference_impl.storage.location import Location
from reference_impl.storage.options import S3Options


class TaskSink(Protocol):
    """Where one write's tasks create their files: one directory of one store (module docs)."""

    @property
    def directory(self) -> Location: ...

    def create(self, name: str, data: bytes) -> bool:
        """Create ``directory/name`` holding ``data``, complete at once; ``False`` when ``name`` was
        taken already (that file is kept, this one discarded). Other failures: ``StorageError``."""
        ...


@dataclass(frozen=True)
class LocalSink:
    """Local paths (every executor must mount the table at the same path): the local storage's own
    create-if-absent (:meth:`~reference_impl.storage.local.LocalStorage.write_new`: a temp file fsynced,
    hard-linked to the name, the directory synced)."""

    directory: Location

    def create(self, name: str, data: bytes) -> bool:
        storage, final = LocalStorage(), self.directory / name
        storage.mkdirs(final.parent)
        try:
            storage.write_new(final, data)
        except FileExistsError:
            return False
        return True


@dataclass(frozen=True)
class S3Sink:
    """An S3-compatible bucket through obstore: one conditional PUT a file."""

    directory: Location
    #: The canonical S3 options (:class:`~reference_impl.storage.options.S3Options`), environment filled in.
    options: tuple[tuple[str, str], ...]

    def create(self, name: str, data: bytes) -> bool:
        import obstore
        from obstore.exceptions import AlreadyExistsError, BaseError, PreconditionError

        target = self.directory / name
        try:
            obstore.put(
                _s3_store(self.directory.authority, self.options),
                target.key,
                data,
                mode="create",
                use_multipart=False,
            )
        except (AlreadyExistsError, PreconditionError):
            return False
        except BaseError as exc:
            raise StorageError(f"cannot create: {exc}", path=target.uri) from None
        return True


@dataclass(frozen=True)
class HdfsSink:
    """HDFS through hdfs-native: a hidden temp file, then a rename that fails if the name is taken."""

    directory: Location
    #: Hadoop configuration keys from the storage options.
    conf: tuple[tuple[str, str], ...] = field(default=())

    def create(self, name: str, data: bytes) -> bool:
        from hdfs_native import WriteOptions

        client = _hdfs_client(self.directory.authority, self.conf)
        final = self.directory / name
        tmp = self.directory / temp_name(name, uuid.uuid4())
        try:
            with client.create(tmp.path, WriteOptions(overwrite=False, create_parent=True)) as out:
                out.write(data)
            client.rename(tmp.path, final.path, overwrite=False)
        except FileExistsError:
            _discard(client, tmp)
            return False
        except (OSError, RuntimeError) as exc:
            _discard(client, tmp)
            raise StorageError(f"cannot create: {exc}", path=final.uri) from None
        return True


def _discard(client: Any, tmp: Location) -> None:
    """Delete a temp file if it is there; one that cannot be is left for cleanup (it is hidden)."""
    with contextlib.suppress(OSError, RuntimeError):
        client.delete(tmp.path, False)


@functools.cache
def _s3_store(bucket: str, options: tuple[tuple[str, str], ...]) -> Any:
    """One obstore client per bucket and options in a Python worker (its tasks reuse it)."""
    from reference_impl.storage.object_store import s3_store

    return s3_store(bucket, S3Options(dict(options)))


@functools.cache
def _hdfs_client(authority: str, conf: tuple[tuple[str, str], ...]) -> Any:
    """One hdfs-native client per NameNode and configuration in a Python worker."""
    from hdfs_native import Client

    return Client(f"hdfs://{authority}", dict(conf))
