"""Sidecars: the one interpretation of ``sidecar.path``, and reading a checkpoint's sidecar references.

Spec: ``spec/checkpoints.md`` §12 Sidecar files and §19.1 Sidecar paths (``CKPT-SIDE-013``,
``CKPT-SIDE-014``, ``CKPT-SIDE-016``, ``CKPT-SIDE-017``), divergences D14 (encoding of ``sidecar.path``)
and D22 (symbolic links).

| function | used by | what it does |
|---|---|---|
| :func:`resolve_sidecar` | the reader, the cleaner's invariants | the file a ``sidecar`` action names, or ``SIDECAR_PATH_INVALID`` |
| :func:`sidecars_dir_is_own` | the cleaner | whether ``_sidecars/`` may be listed and collected at all (not a link out of ``_delta_log/``) |
| :func:`reference_names` | the cleaner | every bare name a ``sidecar.path`` may denote, so no sidecar a remaining checkpoint might mean is deleted |
| :func:`read_sidecar_actions` | the cleaner | the ``sidecar`` actions of one top-level file, read on the driver without Spark |
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from reference_impl.errors import CheckpointCorrupt, SidecarPathInvalid, StorageError
from reference_impl.log.naming import SIDECAR_DIR
from reference_impl.storage import Location, Storage


@dataclass(frozen=True)
class ResolvedSidecar:
    """A ``sidecar`` action and the file it resolves to."""

    action: dict[str, Any]
    path: Location

    @property
    def name(self) -> str:
        return self.path.name


def resolve_sidecar(storage: Storage, log_dir: Location, action: dict[str, Any]) -> ResolvedSidecar:
    """Resolve ``sidecar.path``: a bare (URI-encoded) file name under ``_delta_log/_sidecars``.

    An absolute URI naming a file directly inside this table's ``_delta_log/_sidecars`` is
    accepted (CKPT-SIDE-013; delta-spark resolves it too; ``s3a://`` names the same file as
    ``s3://``); any other URI, and a relative path with a directory, is
    :class:`SidecarPathInvalid` (CKPT-SIDE-014). The decoded name is tried first, then the literal
    name (delta-spark does not decode); a name that decodes to a path (``..%2Fx``) is taken literally,
    so resolution never leaves ``_sidecars/`` (``CKPT-SIDE-016``). A name with a NUL byte or of more
    than 255 bytes names no file anywhere, and a resolution that symbolic links carry out of this
    table's ``_delta_log/_sidecars/`` (a link as the sidecar, ``_sidecars`` itself a link) is refused
    (``CKPT-SIDE-017``): both are :class:`SidecarPathInvalid`.
    """
    raw = action.get("path")
    sidecars = log_dir / SIDECAR_DIR
    if not isinstance(raw, str) or not raw:
        raise SidecarPathInvalid("sidecar action without a path", path=str(log_dir), rule="CKPT-SIDE-014")
    if _is_uri(raw):
        try:
            target = Location.parse(raw)
        except ValueError:
            target = None
        if target is None or target.parent.spark_uri() != sidecars.spark_uri():
            raise SidecarPathInvalid(
                f"sidecar path {raw!r} is not a file directly inside this table's {SIDECAR_DIR}/ directory",
                path=str(sidecars),
                rule="CKPT-SIDE-014",
            )
        return _contained(storage, log_dir, ResolvedSidecar(action, sidecars / target.name))
    if "/" in raw or "\\" in raw:
        raise SidecarPathInvalid(
            f"sidecar path {raw!r} is not a bare file name",
            path=str(sidecars),
            rule="CKPT-SIDE-014",
        )
    name = unquote(raw)
    for candidate in (raw, name):
        if (
            raw in (".", "..")
            or "\x00" in candidate
            or len(candidate.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES
        ):
            raise SidecarPathInvalid(
                f"sidecar path {raw!r} cannot name a file in {SIDECAR_DIR}/ (a dot segment, a NUL byte, "
                f"or more than {MAX_NAME_BYTES} bytes)",
                path=str(sidecars),
                rule="CKPT-SIDE-016",
            )
    literal = sidecars / raw
    # Decoding made a path (``%2F``, ``%2E%2E``): only the literal name is a file directly in ``_sidecars/``.
    if not _is_bare_name(name):
        return _contained(storage, log_dir, ResolvedSidecar(action, literal))
    decoded = sidecars / name
    chosen = decoded if _exists(storage, decoded) or not _exists(storage, literal) else literal
    return _contained(storage, log_dir, ResolvedSidecar(action, chosen))


#: The longest file name local file systems and object-store key segments take (bytes).
MAX_NAME_BYTES = 255


def _exists(storage: Storage, location: Location) -> bool:
    return storage.stat(location) is not None or storage.real(location) != location


def sidecars_dir_is_own(storage: Storage, log_dir: Location) -> bool:
    """Whether ``_delta_log/_sidecars`` really is this table's (no symbolic link carries it elsewhere)."""
    return storage.real(log_dir / SIDECAR_DIR) == storage.real(log_dir) / SIDECAR_DIR


def _contained(storage: Storage, log_dir: Location, resolved: ResolvedSidecar) -> ResolvedSidecar:
    """Refuse a resolution that symbolic links carry out of this table's ``_delta_log/_sidecars/``."""
    home = storage.real(log_dir) / SIDECAR_DIR
    if not sidecars_dir_is_own(storage, log_dir):
        raise SidecarPathInvalid(
            f"{SIDECAR_DIR}/ is a symbolic link to {storage.real(resolved.path.parent)}, "
            "outside this table's _delta_log/",
            path=str(resolved.path),
            rule="CKPT-SIDE-017",
        )
    real = storage.real(resolved.path)
    if real.parent != home:
        raise SidecarPathInvalid(
            f"the sidecar is a symbolic link to {real}, outside this table's {SIDECAR_DIR}/",
            path=str(resolved.path),
            rule="CKPT-SIDE-017",
        )
    return resolved


def _is_bare_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name


def _is_uri(raw: str) -> bool:
    return raw.startswith("file:") or "://" in raw


def reference_names(raw: str) -> set[str]:
    """Every bare name a ``sidecar.path`` may denote (decoded and literal; delta-spark's ``getName``)."""
    if _is_uri(raw):
        try:
            return {Location.parse(raw).name}
        except ValueError:
            return set()
    last = raw.replace("\\", "/").rsplit("/", 1)[-1]
    return {last, unquote(last)} - {""}


def read_sidecar_actions(storage: Storage, log_dir: Location, name: str) -> list[dict[str, Any]]:
    """The ``sidecar`` actions of one top-level checkpoint file, read on the driver (no Spark).

    JSON top-level files line by line; Parquet files through their ``sidecar`` column only.
    Raises :class:`CheckpointCorrupt` naming the file when its bytes do not parse (the cleaner then
    skips sidecar collection, ``CKPT-CLEAN-013``). The store failing a read of it (an unreachable
    store, credentials it refuses, a ``GET`` answered 503) is the store's
    :class:`~reference_impl.errors.StorageError`, raised as the store raised it: nothing says the file
    is bad, and ``CHECKPOINT_CORRUPT`` would tell the user so (spec §21 error codes: ``STORAGE_ERROR``
    is the storage failing; ``CHECKPOINT_CORRUPT`` a file that cannot be parsed).
    """
    path = log_dir / name
    out: list[dict[str, Any]] = []
    try:
        if name.endswith(".json"):
            for line in storage.read_bytes(path).decode("utf-8").splitlines():
                if line.strip():
                    action = json.loads(line)
                    if isinstance(action, dict) and isinstance(action.get("sidecar"), dict):
                        out.append(action["sidecar"])
            return out
        import pyarrow.parquet as pq

        with storage.open_read(path) as handle:
            parquet = pq.ParquetFile(handle)
            if "sidecar" not in parquet.schema_arrow.names:
                return []
            column = parquet.read(columns=["sidecar"]).column("sidecar").to_pylist()
        return [row for row in column if isinstance(row, dict) and row.get("path") is not None]
    except StorageError:
        raise
    except Exception as exc:  # json / pyarrow errors: the bytes are no top-level checkpoint file
        raise CheckpointCorrupt(f"cannot read the sidecar references: {exc}", path=str(path)) from exc
