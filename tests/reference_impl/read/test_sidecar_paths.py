"""How a reader resolves ``sidecar.path`` (spec §19.1 Sidecar paths).

delta-spark writes bare file names; the spec also asks readers to accept an absolute URI that names
a file directly inside the table's own ``_delta_log/_sidecars/`` (CKPT-SIDE-013), and to reject any
other location (CKPT-SIDE-014). Each test rewrites the sidecar paths of a delta-spark V2 checkpoint
(JSON top-level file) after deleting the commits before it, so a reader must use the checkpoint.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from pyspark.sql import SparkSession

from conformance.adapters.deltalake import deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_spark import delta_spark_state
from conformance.tables.mutations import delete_checkpoints_before, rewrite_sidecar_paths
from conformance.tables.real_writers import BuiltTable
from reference_impl.errors import CheckpointError
from reference_impl.log.naming import SIDECAR_DIR
from reference_impl.read.sidecars import resolve_sidecar
from reference_impl.read.snapshot import read_snapshot
from reference_impl.storage import Location
from reference_impl.storage.local import LocalStorage
from tests.reference_impl.read.helpers import log_dir, prune_commits_before

CopyOf = Callable[[str], tuple[BuiltTable, Path]]


def _checkpoint_only(copy_of: CopyOf) -> tuple[BuiltTable, Path, Path]:
    """A copy of ``v2-json`` that only its newest checkpoint (and the commits from it) can describe.

    ``_last_checkpoint`` is removed too: its ``v2Checkpoint.sidecarFiles`` would let a reader skip
    the top-level file whose paths the test rewrites.
    """
    built, table = copy_of("v2-json")
    prune_commits_before(table, built.checkpoint_version)
    delete_checkpoints_before(log_dir(table), built.checkpoint_version)
    (log_dir(table) / "_last_checkpoint").unlink()
    (top,) = built.checkpoint_files
    assert top.endswith(".json"), f"{built.path}: expected a JSON top-level file, found {top}"
    return built, table, log_dir(table) / top


def _point_sidecars(top: Path, where: Callable[[str], Path]) -> list[str]:
    """Replace each sidecar path in ``top`` by the absolute ``file:`` URI of ``where(bare name)``."""
    uris = rewrite_sidecar_paths(top, lambda name: Location.parse(where(name)).uri)
    assert len(uris) >= 2, f"{top}: expected at least 2 sidecar actions, rewrote {uris}"
    return uris


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-SIDE-013", "CKPT-SIDE-012")
def test_absolute_uri_inside_own_sidecars_dir_is_read(
    delta_spark: SparkSession, deltalake: ModuleType, copy_of: CopyOf
) -> None:
    """Every sidecar path an absolute ``file:`` URI of the same file: our reader reports the state it reports
    for bare names, and so do delta-spark and deltalake.

    Spec: CKPT-SIDE-013
    "An implementation SHOULD accept a sidecar `path` that is an absolute URI naming a file directly
    inside the table's own `_delta_log/_sidecars/` directory."
    """
    _, table, top = _checkpoint_only(copy_of)
    bare = read_snapshot(delta_spark, table).table_state()
    uris = _point_sidecars(top, lambda name: log_dir(table) / SIDECAR_DIR / name)
    ours = read_snapshot(delta_spark, table).table_state()
    context = f"{top} with sidecar paths {uris}"
    assert ours.source["checkpoint"]["files"] == [top.name], f"{context}: our reader used {ours.source}"
    assert sorted(ours.source["checkpoint"]["sidecars"]) == sorted(u.rsplit("/", 1)[1] for u in uris)
    assert_states_equal(bare, ours, context=f"{context}: bare names (expected) vs absolute URIs (actual)")
    assert ours.files, f"{context}: the state has no files, so the sidecars were not exercised"
    assert_states_equal(
        ours, delta_spark_state(delta_spark, str(table)), context=f"{context}: ours vs delta-spark"
    )
    rust = deltalake_state(table)
    assert_states_equal(ours, rust, context=f"{context}: ours vs deltalake", ignore=unavailable_fields(rust))


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-SIDE-014")
def test_absolute_uri_outside_own_sidecars_dir_is_invalid(
    delta_spark: SparkSession, copy_of: CopyOf, tmp_path: Path
) -> None:
    """Sidecar paths that are absolute URIs of identical copies outside the table (no fallback left):
    ``SIDECAR_PATH_INVALID`` naming the table's ``_sidecars`` directory — even though each copy is a
    readable sidecar with the recorded size.

    Spec: CKPT-SIDE-014
    "A reader SHOULD treat a checkpoint as invalid, with error code `SIDECAR_PATH_INVALID`, when one of
    its sidecar paths neither is a bare file name nor resolves to a file directly inside the table's
    own `_delta_log/_sidecars/` directory."
    """
    _, table, top = _checkpoint_only(copy_of)
    elsewhere = tmp_path / "elsewhere" / SIDECAR_DIR
    shutil.copytree(log_dir(table) / SIDECAR_DIR, elsewhere)
    uris = _point_sidecars(top, lambda name: elsewhere / name)
    with pytest.raises(CheckpointError) as info:
        read_snapshot(delta_spark, table).table_state()
    assert info.value.code == "SIDECAR_PATH_INVALID", f"{top} with {uris}: {info.value}"
    assert info.value.path == str(log_dir(table) / SIDECAR_DIR), str(info.value)
    assert uris[0] in str(info.value), str(info.value)


@pytest.mark.requirement("CKPT-SIDE-014")
@pytest.mark.parametrize(
    "raw", ["..%2F..%2Fsecret.parquet", "%2E%2E", "a%2Fb.parquet", "a%5Cb.parquet", "%2E"]
)
def test_encoded_separators_never_leave_the_sidecars_dir(raw: str, tmp_path: Path) -> None:
    """A bare name that percent-decodes to a path (traversal, a sub-directory, a backslash, a dot segment) is
    resolved as the literal file name directly inside ``_delta_log/_sidecars/``, as delta-spark (which
    never decodes) resolves it — never outside that directory, whatever exists there.

    Spec: CKPT-SIDE-014
    "A reader SHOULD treat a checkpoint as invalid, with error code `SIDECAR_PATH_INVALID`, when one of
    its sidecar paths neither is a bare file name nor resolves to a file directly inside the table's
    own `_delta_log/_sidecars/` directory."
    """
    log = tmp_path / "table" / "_delta_log"
    (log / SIDECAR_DIR / "a").mkdir(parents=True)
    (log / SIDECAR_DIR / "a" / "b.parquet").write_bytes(b"decoy")
    (tmp_path / "secret.parquet").write_bytes(b"outside the table")
    resolved = resolve_sidecar(LocalStorage(), Location.parse(str(log)), {"path": raw})
    expected = Location.parse(str(log / SIDECAR_DIR)) / raw
    assert resolved.path == expected, (
        f"{log}: sidecar path {raw!r} resolved to {resolved.path}, not {expected}"
    )


@pytest.mark.requirement("CKPT-SIDE-016")
@pytest.mark.parametrize(
    "raw",
    [".", "..", "a\x00b.parquet", "a%00b.parquet", "x" * 256 + ".parquet", "%78" * 100 + ".parquet"],
    ids=["dot", "dot-dot", "nul", "encoded-nul", "256-bytes", "300-bytes-encoded"],
)
def test_names_no_file_system_holds_are_invalid(raw: str, tmp_path: Path) -> None:
    """A dot segment, a NUL byte (raw or ``%00``) and a name longer than 255 bytes (raw or decoded) name no file in
    ``_sidecars/``: ``SIDECAR_PATH_INVALID`` with the rule, never an OS error.

    Spec: CKPT-SIDE-016
    "A reader MUST NOT take actions from any file but one directly inside the table's own
    `_delta_log/_sidecars/` for a `sidecar.path` without a scheme, whatever the path holds before or after
    percent-decoding (…); when no such file exists it MUST fail with `SIDECAR_MISSING` or `SIDECAR_PATH_INVALID`."
    """
    log = tmp_path / "table" / "_delta_log"
    (log / SIDECAR_DIR).mkdir(parents=True)
    with pytest.raises(CheckpointError) as info:
        resolve_sidecar(LocalStorage(), Location.parse(log), {"path": raw})
    assert (info.value.code, info.value.rule) == ("SIDECAR_PATH_INVALID", "CKPT-SIDE-016"), (
        f"{raw!r}: {info.value}"
    )


@pytest.mark.requirement("CKPT-SIDE-017")
@pytest.mark.parametrize("link", ["sidecar", "sidecars-dir", "same-dir"])
def test_symbolic_links_do_not_carry_a_sidecar_out_of_the_table(link: str, tmp_path: Path) -> None:
    """A sidecar that is a link to a file outside ``_sidecars/``, and ``_sidecars`` itself a link to a directory
    outside ``_delta_log/``, are ``SIDECAR_PATH_INVALID``; a link to another file in ``_sidecars/`` resolves.

    Spec: CKPT-SIDE-017
    "a reader SHOULD treat a sidecar that is a symbolic link to a file outside the table's own
    `_delta_log/_sidecars/`, or any sidecar when `_delta_log/_sidecars` itself is a symbolic link leading out
    of `_delta_log/`, as `SIDECAR_PATH_INVALID`"
    """
    log = tmp_path / "table" / "_delta_log"
    log.mkdir(parents=True)
    other = tmp_path / "other" / "_delta_log" / SIDECAR_DIR
    other.mkdir(parents=True)
    (other / "s.parquet").write_bytes(b"another table's sidecar")
    if link == "sidecars-dir":
        (log / SIDECAR_DIR).symlink_to(other, target_is_directory=True)
    else:
        (log / SIDECAR_DIR).mkdir()
        (log / SIDECAR_DIR / "own.parquet").write_bytes(b"own")
        target = other / "s.parquet" if link == "sidecar" else log / SIDECAR_DIR / "own.parquet"
        (log / SIDECAR_DIR / "s.parquet").symlink_to(target)
    where = Location.parse(log)
    if link == "same-dir":
        resolved = resolve_sidecar(LocalStorage(), where, {"path": "s.parquet"})
        assert resolved.path == where / SIDECAR_DIR / "s.parquet", f"{log}: resolved to {resolved.path}"
        return
    with pytest.raises(CheckpointError) as info:
        resolve_sidecar(LocalStorage(), where, {"path": "s.parquet"})
    assert (info.value.code, info.value.rule) == ("SIDECAR_PATH_INVALID", "CKPT-SIDE-017"), (
        f"{link}: {info.value}"
    )
    assert (other / "s.parquet").read_bytes() == b"another table's sidecar"
