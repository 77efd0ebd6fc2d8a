"""Name sets: which canonical file names a sidecar holds, so an incremental writer reads no row of it.

Spec: ``spec/checkpoints.md`` §12.1 Sidecar reuse (``CKPT-INC-007``, ``CKPT-INC-008``); why and the
numbers in ``docs/incremental-v2-checkpoints.md``.

An ``add`` of a path the base checkpoint already holds (a re-add) supersedes the base's action, so
the next incremental writer must know which base sidecars may hold a touched file; nothing in an
``add`` says whether its path is new. A **name set** answers that without reading the sidecar: the
sorted, distinct 64-bit hashes (Spark's ``xxhash64``, seed 42) of the canonical names
(:func:`~reference_impl.spark.columns.canonical_name`) of all the sidecar's ``add`` and ``remove``
rows. Exact up to hash collisions, which only mark a sidecar that holds no touched file (a rewrite,
never a wrong reuse); a Bloom filter would not do: 10,000 touched names probed against 36 sidecars
at a 1 % false-positive rate mark every sidecar.

* **Built** by the executors in the read-back every staged sidecar already has
  (:func:`~reference_impl.write.staging.read_back_counts`, no pass of its own); none when a row's
  canonical name cannot be told from its path (the sidecar is then always searched).
* **Stored** in a file of its own next to the sidecar, ``_sidecars/<sidecar name>.names``
  (:func:`name_set_file`): 8 bytes of :data:`MAGIC`, then the hashes as little-endian signed 64-bit
  integers, ascending. Not in the ``sidecar`` action's tags (8 bytes a name would be in every
  reader's top-level file: 8 MB at 1,000,000 files) and not in the Parquet file (Spark's writer
  takes no per-file footer metadata). The ``sidecar`` action's tag :data:`NAME_SET_TAG` records the
  number of hashes and the file's SHA-256 (:func:`tag_value`), and is copied with the sidecar's
  other tags when the sidecar is listed again.
* **Used** (:func:`load`, :func:`load_all`) only when the file exists, has the recorded digest and
  is well formed; else the writer reads the sidecar's paths as before (``CKPT-INC-008``). The
  touched names' hashes are probed against all usable sets in one pass (:func:`holders`).
* **Collected** as any file of ``_sidecars/`` no checkpoint references (``CKPT-CLEAN-017``: ours
  and delta-spark's cleaners delete it once older than the sidecar cutoff, by default the log
  retention); the writer needs it only while its sidecar may be listed again, which is never after
  half the log retention (``CKPT-INC-004``), and a cleaner with a shorter window costs a read.
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import accumulate
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import functions as F

from reference_impl.errors import StorageError
from reference_impl.log.naming import name_set_name
from reference_impl.spark.columns import canonical_name

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from reference_impl.storage import Location, Storage

NAME_SET_TAG = "delta-ckpt.nameSet"
#: File header: format and hash function (xxhash64 of the canonical name, seed 42).
MAGIC = b"DCKNSET1"
#: Bytes of one hash in the file (a little-endian signed 64-bit integer).
_WIDTH = 8
#: Name-set files :func:`load_all` reads at once.
_READERS = 8


def name_set_file(sidecar: Location) -> Location:
    """The name-set file of the sidecar at ``sidecar``: ``<sidecar name>.names`` in its directory."""
    return sidecar.parent / name_set_name(sidecar.name)


def row_name_hash() -> Column:
    """Per sidecar row: the hash of the canonical name of its ``add.path`` or ``remove.path``; null when
    that name cannot be told from the path (``canonical_name`` is null)."""
    name = canonical_name(F.coalesce(F.col("add.path"), F.col("remove.path")))
    return F.when(name.isNotNull(), F.xxhash64(name))


def touched_hashes(touched: DataFrame) -> tuple[pa.Array, int]:
    """The distinct hashes of the last path segments of ``touched``'s canonical paths (``_path``),
    sorted, and how many rows ``touched`` has; one Spark job, no shuffle (the commits after the base
    are read and canonicalized once; made distinct on the driver), collected as Arrow."""
    key = F.xxhash64(F.substring_index("_path", "/", -1)).alias("_h")
    column = touched.select(key).toArrow().column("_h").combine_chunks()
    return pc.unique(column.cast(pa.int64())), len(column)


def encode(hashes: list[int]) -> bytes:
    """The name-set file's bytes for ``hashes`` (any order, duplicates allowed)."""
    body = array("q", sorted(set(hashes)))
    if sys.byteorder == "big":
        body.byteswap()
    return MAGIC + body.tobytes()


def tag_value(data: bytes) -> str:
    """The :data:`NAME_SET_TAG` value for a name-set file with these bytes: ``<count>:<sha256 hex>``."""
    return f"{(len(data) - len(MAGIC)) // _WIDTH}:{hashlib.sha256(data).hexdigest()}"


def write(storage: Storage, sidecar: Location, hashes: list[int], mtime_ms: int | None) -> str:
    """Write the name set of the published sidecar at ``sidecar``; returns its tag value."""
    data = encode(hashes)
    target = name_set_file(sidecar)
    storage.write_new(target, data)
    if mtime_ms is not None:
        storage.set_mtime(target, mtime_ms)
    return tag_value(data)


def load(storage: Storage, sidecar: Location, tag: object) -> pa.Array | None:
    """The hashes of the sidecar's name set when its file exists, has the digest and count ``tag``
    records, starts with :data:`MAGIC` and holds strictly ascending hashes; else None
    (``CKPT-INC-008``: the caller then reads the sidecar's paths)."""
    if not isinstance(tag, str):
        return None
    try:
        data = storage.read_bytes(name_set_file(sidecar))
    except (OSError, StorageError):
        return None
    body = data[len(MAGIC) :]
    if not data.startswith(MAGIC) or len(body) % _WIDTH or tag_value(data) != tag:
        return None
    values = array("q")
    values.frombytes(body)
    if sys.byteorder == "big":
        values.byteswap()
    hashes = pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])
    if len(hashes) > 1 and not pc.all(pc.less(hashes[:-1], hashes[1:])).as_py():
        return None
    return hashes


def load_all(storage: Storage, sidecars: Sequence[tuple[Location, object]]) -> list[pa.Array | None]:
    """:func:`load` of every ``(sidecar, tag)``, in order; the files are read by a few threads at
    once (one request each on an object store: their latencies overlap)."""
    if not sidecars:
        return []
    with ThreadPoolExecutor(max_workers=min(_READERS, len(sidecars))) as pool:
        return list(pool.map(lambda item: load(storage, *item), sidecars))


def holders(sets: Mapping[str, pa.Array], probes: pa.Array) -> set[str]:
    """The keys of ``sets`` (name sets by sidecar) that hold one of the hashes ``probes``: one pass
    over all the sets' hashes, looked up in one hash table of the probes (Arrow's ``is_in``)."""
    keys = [k for k, hashes in sets.items() if len(hashes)]
    if not keys or len(probes) == 0:
        return set()
    found = pc.is_in(pa.concat_arrays([sets[k] for k in keys]), value_set=probes)
    ends = list(accumulate(len(sets[k]) for k in keys))  # set i holds positions ends[i-1] .. ends[i]-1
    return {keys[bisect_right(ends, i)] for i in pc.indices_nonzero(found).to_pylist()}
