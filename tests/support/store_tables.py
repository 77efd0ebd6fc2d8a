"""Test tables on a store through the :class:`~reference_impl.storage.Storage` protocol: upload, list, prune.

Spec: ``spec/checkpoints.md`` §19.4 Stores. Used by the S3 tests and by the tests of tables written
by a cluster on HDFS and S3 (``tests/reference_impl/write/test_s3.py``, ``test_cluster_stores.py``).
"""

from __future__ import annotations

from pathlib import Path

from reference_impl.log.naming import parse_log_file_name
from reference_impl.storage import Location, Storage


def upload(storage: Storage, local: Path, root: Location) -> Location:
    """Every file of the local table ``local`` (Hadoop's hidden ``.crc`` files left out) to ``root``."""
    for file in sorted(local.rglob("*")):
        if file.is_file() and not file.name.startswith("."):
            storage.write_new(root / file.relative_to(local).as_posix(), file.read_bytes())
    return root


def log_listing(storage: Storage, root: Location) -> list[str]:
    """Files in ``_delta_log`` and ``_delta_log/_sidecars`` (relative to ``_delta_log``), sorted."""
    log = root / "_delta_log"
    return sorted(
        [f.name for f in storage.list_dir(log)]
        + [f"_sidecars/{f.name}" for f in storage.list_dir(log / "_sidecars")]
    )


def prune_commits_before(storage: Storage, root: Location, version: int) -> list[str]:
    """Delete the commits before ``version`` (keep the one at it, spec D11); the deleted names."""
    log = root / "_delta_log"
    gone = [
        f.name
        for f in storage.list_dir(log)
        if f.name.endswith(".json") and (v := parse_log_file_name(f.name).version) is not None and v < version
    ]
    storage.delete_many(log / name for name in gone)
    return gone
