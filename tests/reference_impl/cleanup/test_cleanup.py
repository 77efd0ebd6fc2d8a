"""The reference cleaner on a real delta-spark table: what it deletes, what readers see afterwards,
and how it compares with delta-spark's own metadata cleanup, and what becomes of a killed writer's
staging directory (``CKPT-CLEAN-025``, made by hand with explicit modification times).

The table is :func:`tests.cleanup.tables.build_base` (UUID-named V2 checkpoints at 2, 3, 4 and 6;
the one at 3 shares checkpoint 2's sidecars; a log compaction 1..2; version ``v`` stamped
``8 - v`` days before today). With the table's 3-day retention at ``NOW`` the cutoff commit is 4.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.adapters.deltalake import deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_spark import delta_snapshot, delta_spark_cleanup, delta_spark_state, jvm_of
from conformance.tables.mutations import rewrite_sidecar_paths
from conformance.tables.real_writers import NOW
from conformance.tables.real_writers import CleanupBase as Base
from fixtures import FIXTURES_DIR
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.cleanup.plan import format_ms
from reference_impl.cli.main import main
from reference_impl.errors import StorageError, VersionNotFound
from reference_impl.log.naming import (
    SIDECAR_DIR,
    classic_checkpoint_name,
    commit_name,
    crc_name,
    sidecar_temp_name,
)
from reference_impl.log.table_properties import MS_PER_DAY
from reference_impl.read.snapshot import read_snapshot
from reference_impl.storage import Location
from tests.reference_impl.cleanup.conftest import CleanupTables
from tests.reference_impl.cleanup.helpers import top_level_actions
from tests.support.listings import log_files, snapshot_files
from tests.support.stores import local_store_failing_a_delete_batch, local_store_without_atomic_create

if TYPE_CHECKING:
    from types import ModuleType

    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.delta_spark]


def _old_log_files(base: Base, below: int) -> set[str]:
    """Non-hidden commit, checksum and checkpoint files of versions < ``below``."""
    names = {commit_name(v) for v in range(below)} | {crc_name(v) for v in range(below)}
    return names | {n for v, n in base.checkpoints.items() if v < below}


def _sidecars(base: Base, version: int) -> set[str]:
    return {f"{SIDECAR_DIR}/{n}" for n in base.sidecars[version]}


def _visible(names: set[str] | frozenset[str]) -> set[str]:
    return {n for n in names if not n.rsplit("/", 1)[-1].startswith(".")}


def _checksum(relative: str) -> str:
    """The Hadoop checksum ``.<name>.crc`` of a file (a path relative to ``_delta_log``)."""
    head, _, name = relative.rpartition("/")
    return f"{head}/.{name}.crc" if head else f".{name}.crc"


def _write_commit(table: Path, version: int, actions: list[dict[str, object]]) -> None:
    path = table / "_delta_log" / commit_name(version)
    path.write_text("".join(json.dumps(a) + "\n" for a in actions))


@pytest.mark.requirement(
    "CKPT-CLEAN-001",
    "CKPT-CLEAN-002",
    "CKPT-CLEAN-003",
    "CKPT-CLEAN-009",
    "CKPT-CLEAN-010",
    "CKPT-CLEAN-013",
    "CKPT-CLEAN-015",
    "CKPT-CLEAN-017",
    "CKPT-COMPAT-004",
)
def test_cleanup_deletes_exactly_the_expired_files(
    delta_spark: SparkSession, cleanup_tables: CleanupTables
) -> None:
    """CKPT-CLEAN-009: keep "the newest complete checkpoint whose version is not greater than the cutoff
    commit's version" and delete "the commits, checkpoint files and checksum files of all lower
    versions"; CKPT-CLEAN-001: the oldest remaining commit is at a complete checkpoint;
    CKPT-CLEAN-017: delete the sidecars "that no remaining checkpoint references" and older than the
    cutoff; CKPT-COMPAT-004: write a compatibility checkpoint "before deleting any file".

    Spec: CKPT-CLEAN-009
    "A cleaner SHOULD keep the newest complete checkpoint whose version is not greater than the cutoff
    commit's version, and SHOULD delete the commits, checkpoint files and checksum files of all lower
    versions."
    """
    cleaned = cleanup_tables.cleaned()
    base, result = cleaned.base, cleaned.result
    assert result.status == "done", result.message
    assert result.cutoff_commit is not None and result.cutoff_commit["version"] == 4
    assert result.cutoff_checkpoint is not None and result.cutoff_checkpoint["version"] == 4
    expected = _old_log_files(base, 4) | {base.compaction} | _sidecars(base, 2)
    assert set(result.deleted_paths()) == expected
    gone = cleaned.before - cleaned.after
    assert _visible(gone) == expected
    assert gone == set(result.deleted_paths(with_companions=True)), "Hadoop checksums go with their files"
    assert cleaned.after - cleaned.before == {classic_checkpoint_name(6)}
    assert result.compat is not None and result.compat.action == "created" and result.compat.version == 6
    assert "_last_checkpoint" in cleaned.after and "_staged_commits/" in {k.name for k in result.kept}
    kept_sidecars = {d.name: d for d in result.kept_sidecars}
    assert set(kept_sidecars) == _sidecars(base, 4) | _sidecars(base, 6)
    assert all(d.referenced_by for d in kept_sidecars.values())
    assert all(c.ok for c in result.invariants) and result.verified_versions == [4, 5, 6]
    order = result.deleted_paths()
    assert order.index(commit_name(0)) < order.index(base.checkpoints[2]) < order.index(commit_name(2))
    assert all(n.startswith(SIDECAR_DIR) for n in order[-2:]), "sidecars go last"


@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-CLEAN-001", "CKPT-CLEAN-003", "CKPT-COMPAT-005")
def test_every_reader_reads_every_kept_version(
    delta_spark: SparkSession, deltalake: ModuleType, cleanup_tables: CleanupTables
) -> None:
    """CKPT-CLEAN-001: after the cleanup "the oldest remaining commit file MUST be at the version of a
    complete checkpoint" — so our reader, delta-spark and deltalake read the latest version and every
    kept version (4..6) as before; a deleted version is a clear error.

    Spec: CKPT-CLEAN-001
    "After a cleanup that deleted any commit file, the oldest remaining commit file MUST be at the
    version of a complete checkpoint, so that the commit at the cutoff checkpoint's version is always
    kept."
    """
    cleaned = cleanup_tables.cleaned()
    table = cleaned.path
    for version in (4, 5, 6):
        ours = read_snapshot(delta_spark, table, version=version, now_ms=NOW).table_state()
        if version in cleaned.states:
            assert ours.comparable() == cleaned.states[version].comparable(), f"v{version} changed"
        label = f"{table} v{version} after cleanup"
        assert_states_equal(
            ours,
            delta_spark_state(delta_spark, str(table), version),
            context=f"{label}: reference reader vs delta-spark",
        )
        rust = deltalake_state(table, version)
        assert_states_equal(
            ours, rust, context=f"{label}: reference reader vs deltalake", ignore=unavailable_fields(rust)
        )
    with pytest.raises(VersionNotFound) as info:
        read_snapshot(delta_spark, table, version=3, now_ms=NOW)
    assert (
        info.value.code == "VERSION_NOT_FOUND" and "earliest reconstructable version: 4" in info.value.message
    )
    with pytest.raises(Exception, match=r"(?i)version|not.*found|reconstruct") as spark_error:
        delta_snapshot(delta_spark, str(table), 3)
    assert "3" in str(spark_error.value)
    with pytest.raises(Exception):  # noqa: B017 - deltalake raises its own DeltaError subclasses
        deltalake.DeltaTable(str(table), version=3)


def _spark_vs_ours(
    spark: SparkSession,
    cleanup_tables: CleanupTables,
    tmp_path: Path,
    now: int,
    ours_after: frozenset[str] | None = None,
) -> tuple[set[str], set[str], set[str], set[str]]:
    """(ours - spark, spark - ours) deleted, and (ours, spark) created non-hidden files, on copies of the base."""
    theirs = cleanup_tables.copy(tmp_path / "delta-spark")
    before = log_files(theirs.path)
    delta_spark_cleanup(spark, str(theirs.path), now)
    spark_after = log_files(theirs.path)
    if ours_after is None:
        mine = cleanup_tables.copy(tmp_path / "ours")
        result = cleanup(mine.path, now_ms=now, spark=spark)
        assert result.status == "done", result.message
        ours_after = frozenset(log_files(mine.path))
    ours_deleted, spark_deleted = before - ours_after, before - spark_after
    return (
        ours_deleted - spark_deleted,
        spark_deleted - ours_deleted,
        _visible(ours_after - before),
        _visible(spark_after - before),
    )


@pytest.mark.requirement("CKPT-CLEAN-010", "CKPT-CLEAN-009", "CKPT-COMPAT-004")
def test_same_deletions_as_delta_spark_but_the_compaction(
    delta_spark: SparkSession, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """Identical tables, identical clocks: delta-spark's ``doLogCleanup`` and ours delete the same
    files — commits, checksums, checkpoints, sidecars and their Hadoop checksums — except the log
    compaction, which we delete (CKPT-CLEAN-010: "delete every log compaction file whose start version
    is not greater than the cutoff checkpoint's version") and delta-spark never does (D7). Both write
    the same compatibility checkpoint.

    Spec: CKPT-CLEAN-010
    "A cleaner SHOULD delete every log compaction file whose start version is not greater than the
    cutoff checkpoint's version."
    """
    cleaned = cleanup_tables.cleaned()
    only_ours, only_spark, ours_new, spark_new = _spark_vs_ours(
        delta_spark, cleanup_tables, tmp_path, NOW, cleaned.after
    )
    assert only_ours == {cleaned.base.compaction}, "D7"
    assert only_spark == set()
    assert ours_new == spark_new == {classic_checkpoint_name(6)}


@pytest.mark.requirement("CKPT-CLEAN-003", "CKPT-CLEAN-009")
def test_delta_spark_boundary_divergence(
    delta_spark: SparkSession, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """One day later the cutoff commit is 5, immediately followed by the checkpoint at 6. We keep the
    newest checkpoint at or before commit 5 — checkpoint 4 — and commits 4, 5 (CKPT-CLEAN-009);
    delta-spark deletes everything before checkpoint 6, including the cutoff commit 5 and checkpoint
    4 with its sidecars (D12). Ours on top: the compaction (D7). Nothing else differs.

    Spec: CKPT-CLEAN-009
    "A cleaner SHOULD keep the newest complete checkpoint whose version is not greater than the cutoff
    commit's version …"
    """
    base = cleanup_tables.base()
    only_ours, only_spark, ours_new, spark_new = _spark_vs_ours(
        delta_spark, cleanup_tables, tmp_path, NOW + MS_PER_DAY
    )
    d12 = {base.checkpoints[4], crc_name(4), commit_name(4), crc_name(5), commit_name(5)} | _sidecars(base, 4)
    d12_with_checksums = d12 | {
        f".{n}.crc" if "/" not in n else f"{SIDECAR_DIR}/.{n.split('/')[1]}.crc" for n in d12
    }
    assert only_ours == {base.compaction}, "D7"
    assert only_spark == d12_with_checksums, "D12"
    assert ours_new == spark_new == {classic_checkpoint_name(6)}


@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-COMPAT-001", "CKPT-COMPAT-002", "CKPT-COMPAT-003", "CKPT-COMPAT-005")
def test_compatibility_checkpoint_carries_the_state(
    delta_spark: SparkSession, deltalake: ModuleType, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """CKPT-COMPAT-003: the copy holds "the same checkpointMetadata action, the same non-file actions
    and the same sidecar actions as the UUID-named checkpoint it copies"; CKPT-COMPAT-002: it
    describes the same state — deleting the UUID-named file leaves every reader with the same table.

    Spec: CKPT-COMPAT-002
    "A compatibility checkpoint MUST describe the same table state as the UUID-named checkpoint of its
    version."
    """
    cleaned = cleanup_tables.cleaned()
    table = tmp_path / "table"
    shutil.copytree(cleaned.path, table)
    log_dir = table / "_delta_log"
    uuid_name = cleaned.base.checkpoints[6]
    original = top_level_actions(log_dir / uuid_name)
    copy = top_level_actions(log_dir / classic_checkpoint_name(6))

    def by_kind(actions: list[dict[str, object]], kind: str) -> list[object]:
        return sorted((a[kind] for a in actions if kind in a), key=lambda x: json.dumps(x, sort_keys=True))

    for kind in ("checkpointMetadata", "sidecar", "protocol", "metaData", "txn", "domainMetadata"):
        assert by_kind(copy, kind) == by_kind(original, kind), kind
    assert len(copy) == len(original) and not any("add" in a or "remove" in a for a in copy)

    (log_dir / uuid_name).unlink()
    (log_dir / f".{uuid_name}.crc").unlink(missing_ok=True)
    ours = read_snapshot(delta_spark, table, now_ms=NOW).table_state()
    assert ours.source["checkpoint"]["files"] == [classic_checkpoint_name(6)]
    assert ours.comparable() == cleaned.states[6].comparable()
    assert_states_equal(
        ours,
        delta_spark_state(delta_spark, str(table)),
        context=f"{table} without the UUID-named file: reference reader vs delta-spark",
    )
    rust = deltalake_state(table)
    assert_states_equal(
        ours,
        rust,
        context=f"{table} without the UUID-named file: reference reader vs deltalake",
        ignore=unavailable_fields(rust),
    )


@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-CLEAN-013")
def test_delta_spark_cleanup_keeps_shared_sidecars_and_every_reader_agrees(
    delta_spark: SparkSession, deltalake: ModuleType, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """delta-spark's own cleanup on a table whose checkpoints 2 and 3 share sidecars S2 (what an
    incremental V2 checkpoint does, docs/incremental-v2-checkpoints.md): with its clock two days
    before ``NOW`` the table's 3-day retention makes 2 the cutoff commit, and delta-spark deletes
    everything before the next checkpoint, 3 (D12): checkpoint 2 and commits 0..2 go while checkpoint
    3, which lists S2, stays. S2 must survive, and our reader, delta-spark
    and deltalake must read version 3 (from the checkpoint with the shared sidecars: its commits
    before are gone) and the latest version identically.

    Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint remaining
    after the cleanup references …"
    """
    base = cleanup_tables.copy(tmp_path / "table")
    shared = _sidecars(base, 2)
    assert shared and shared <= _sidecars(base, 3), f"{base.path}: checkpoints 2 and 3 do not share sidecars"
    delta_spark_cleanup(delta_spark, str(base.path), NOW - 2 * MS_PER_DAY)
    after = log_files(base.path)
    gone = {base.checkpoints[2], commit_name(0), commit_name(2)}
    assert not gone & after and base.checkpoints[3] in after, (
        f"{base.path}: delta-spark's cleanup left {sorted(gone & after)} of {sorted(gone)}; "
        f"checkpoint 3 kept: {base.checkpoints[3] in after}"
    )
    assert shared <= after, f"{base.path}: delta-spark deleted shared sidecars {sorted(shared - after)}"
    for version in (3, None):
        label = f"{base.path} v{version if version is not None else 'latest'} after delta-spark's cleanup"
        ours = read_snapshot(delta_spark, base.path, version=version, now_ms=NOW).table_state()
        if version == 3:
            used = set(ours.source["checkpoint"]["sidecars"])
            assert {s.rsplit("/", 1)[1] for s in shared} <= used, (
                f"{label}: read from sidecars {sorted(used)}"
            )
        assert_states_equal(
            ours,
            delta_spark_state(delta_spark, str(base.path), version),
            context=f"{label}: ours vs delta-spark",
        )
        rust = deltalake_state(base.path, version)
        assert_states_equal(
            ours, rust, context=f"{label}: ours vs deltalake", ignore=unavailable_fields(rust)
        )


def _reference_by_uri(base: Base, version: int) -> list[str]:
    """Make checkpoint ``version`` name its sidecars by absolute ``file:`` URI (file times kept)."""
    top = base.log_dir / base.checkpoints[version]
    times = top.stat()
    uris = rewrite_sidecar_paths(top, lambda name: Location.parse(base.log_dir / SIDECAR_DIR / name).uri)
    os.utime(top, ns=(times.st_atime_ns, times.st_mtime_ns))
    return uris


@pytest.mark.requirement("CKPT-CLEAN-013", "CKPT-CLEAN-015", "CKPT-CLEAN-017", "CKPT-SIDE-013")
@pytest.mark.parametrize("references", ["bare-names", "absolute-uris"])
def test_shared_sidecars_survive_until_their_last_checkpoint_goes(
    references: str, delta_spark: SparkSession, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """CKPT-CLEAN-013: never delete "a sidecar file that a classic-named or UUID-named checkpoint
    remaining after the cleanup references". Checkpoints 2 and 3 share sidecars S2; with
    ``absolute-uris`` checkpoint 3 names them by absolute ``file:`` URI (CKPT-SIDE-013), which the
    cleaner must resolve to the same files.

    1. retention 4 days: checkpoint 2 goes, S2 stays (checkpoint 3 references it);
    2. retention 3 days, sidecar window 10 days: checkpoint 3 goes, S2 stays (too young for the window);
    3. retention 3 days (window = log cutoff): S2 goes — in a round that deletes no checkpoint, where
       delta-spark would not collect sidecars (D6).

    Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint remaining
    after the cleanup references, resolving each reference as CKPT-SIDE-012 and CKPT-SIDE-013
    prescribe."
    Spec: CKPT-SIDE-013
    "An implementation SHOULD accept a sidecar `path` that is an absolute URI naming a file directly
    inside the table's own `_delta_log/_sidecars/` directory."
    """
    base = cleanup_tables.copy(tmp_path / "table")
    shared = _sidecars(base, 2)
    if references == "absolute-uris":
        uris = _reference_by_uri(base, 3)
        assert {u.rsplit("/", 1)[1] for u in uris} == {s.rsplit("/", 1)[1] for s in shared}, uris
    first = cleanup(base.path, now_ms=NOW, retention_ms=4 * MS_PER_DAY, spark=delta_spark)
    assert set(first.deleted_paths()) == _old_log_files(base, 3) | {base.compaction}
    kept = {d.name: d for d in first.kept_sidecars}
    assert all(kept[s].referenced_by == (base.checkpoints[3],) for s in shared)
    ours = read_snapshot(delta_spark, base.path, version=3, now_ms=NOW).table_state()
    assert {s.rsplit("/", 1)[1] for s in shared} <= set(ours.source["checkpoint"]["sidecars"])
    assert_states_equal(
        ours,
        delta_spark_state(delta_spark, str(base.path), 3),
        context="version 3 from the checkpoint that shares the sidecars",
    )

    second = cleanup(base.path, now_ms=NOW, sidecar_retention_ms=10 * MS_PER_DAY, spark=delta_spark)
    assert set(second.deleted_paths()) == {base.checkpoints[3], crc_name(3), commit_name(3)}
    kept = {d.name: d for d in second.kept_sidecars}
    assert all(not kept[s].referenced_by and kept[s].rule == "CKPT-CLEAN-015" for s in shared)
    assert second.compat is not None and second.compat.action == "exists"

    theirs = tmp_path / "delta-spark"
    shutil.copytree(base.path, theirs)
    before = log_files(theirs)
    delta_spark_cleanup(delta_spark, str(theirs), NOW)
    third = cleanup(base.path, now_ms=NOW, spark=delta_spark)
    assert set(third.deleted_paths()) == shared and third.status == "done"
    only_ours = (before - log_files(base.path)) - (before - log_files(theirs))
    assert only_ours == set(third.deleted_paths(with_companions=True)), "D6: delta-spark deletes nothing here"
    assert not (set(log_files(base.path)) & shared)
    latest = read_snapshot(delta_spark, base.path, now_ms=NOW).table_state()
    assert_states_equal(
        latest, delta_spark_state(delta_spark, str(base.path)), context="after three cleanups"
    )


@pytest.mark.requirement("CKPT-CLEAN-013", "CKPT-COMPAT-004", "CKPT-CLEAN-025")
def test_dry_run_plan_with_uuid_checkpoints_and_shared_sidecars(
    delta_spark: SparkSession,
    cleanup_tables: CleanupTables,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--dry-run`` prints the plan and changes nothing (sizes and modification times of every file
    under the table are identical). Retention 5 days: the cutoff checkpoint is 2, whose sidecars
    checkpoint 3 shares — both remain, so the plan shows each of those sidecars referenced by two.
    Of two writer staging directories, it shows the one older than the cutoff as to delete and the
    one at the cutoff as kept (``CKPT-CLEAN-025``).

    Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint remaining
    after the cleanup references …"

    Spec: CKPT-CLEAN-025
    "A cleaner MAY delete a directory directly in `_delta_log/` whose name is `.delta-ckpt-staging-`
    followed by a canonical UUID …"
    """
    base = cleanup_tables.copy(tmp_path / "table")
    old = _staging(base.log_dir, {"01-sidecars/part-00000-a.parquet": _cutoff(5) - 1})
    fresh = _staging(base.log_dir, {"01-sidecars/part-00000-a.parquet": _cutoff(5)})
    before = snapshot_files(base.path)
    argv = ["cleanup", str(base.path), "--now", str(NOW), "--retention", "5 days", "--dry-run", "--quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert snapshot_files(base.path) == before
    with capsys.disabled():
        print("\n" + out)
    assert "cleanup plan of" in out and "dry-run" in out
    assert "cutoff checkpoint: version 2 (uuid" in out
    assert "compatibility checkpoint: would-create" in out
    for name in _old_log_files(base, 2) | {base.compaction}:
        assert f"  {name} " in out, name
    for sidecar in _sidecars(base, 2):
        line = next(line for line in out.splitlines() if sidecar in line)
        assert "referenced by 2 remaining checkpoint(s)" in line and base.checkpoints[3] in line
    assert f"  delete {old}/  abandoned writer staging with 1 file(s)" in out, "CKPT-CLEAN-025"
    assert f"  keep   {fresh}/  writer staging with 1 file(s)" in out, "CKPT-CLEAN-025"
    assert "invariants: all hold" in out


@pytest.mark.requirement("CKPT-CLEAN-012")
def test_missing_sidecar_of_a_kept_checkpoint_aborts(
    delta_spark: SparkSession,
    cleanup_tables: CleanupTables,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A kept checkpoint whose sidecar is gone: exit 2, ``CLEANUP_INVARIANT_VIOLATED``, nothing written
    or deleted. CKPT-CLEAN-012 ("if the plan would violate one of them MUST delete nothing and fail
    with CLEANUP_INVARIANT_VIOLATED") is marked untestable for CKPT-CLEAN-001..003, which a
    conforming planner never violates; the same abort path is reached here through the cleaner's
    additional invariant that every sidecar of every kept checkpoint exists with its recorded size.

    Spec: CKPT-CLEAN-012
    "A cleaner MUST check its planned deletions against CKPT-CLEAN-001 to CKPT-CLEAN-003 before
    deleting anything, and if the plan would violate one of them MUST delete nothing and fail with
    `CLEANUP_INVARIANT_VIOLATED`."
    """
    base = cleanup_tables.copy(tmp_path / "table")
    (base.log_dir / SIDECAR_DIR / base.sidecars[6][0]).unlink()
    before = snapshot_files(base.path)
    assert main(["cleanup", str(base.path), "--now", str(NOW), "--json"]) == 2
    captured = capsys.readouterr()
    error = json.loads(captured.out)["error"]
    assert error["code"] == "CLEANUP_INVARIANT_VIOLATED", error
    assert base.sidecars[6][0] in error["message"]
    assert captured.err.startswith("CLEANUP_INVARIANT_VIOLATED: ")
    assert snapshot_files(base.path) == before


@pytest.mark.requirement("CKPT-CLEAN-011", "CKPT-CLEAN-019")
@pytest.mark.parametrize(
    ("feature", "rule"), [("madeUpWriterFeature", "CKPT-CLEAN-011"), ("catalogManaged", "CKPT-CLEAN-019")]
)
def test_unsupported_writer_feature_deletes_nothing(
    feature: str,
    rule: str,
    delta_spark: SparkSession,
    cleanup_tables: CleanupTables,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A writer feature the cleaner does not know, and ``catalogManaged`` (the reference cleaner has no
    catalog to ask): exit 2, one ``UNSUPPORTED_WRITER_FEATURE`` line naming the feature and the rule,
    nothing deleted.

    Spec: CKPT-CLEAN-011
    "A cleaner MUST NOT delete any file of a table whose protocol lists a writer feature that the
    cleaner does not support, and MUST fail with `UNSUPPORTED_WRITER_FEATURE` instead."
    Spec: CKPT-CLEAN-019
    "A cleaner MUST NOT delete any file of a table whose protocol lists `catalogManaged` unless the
    managing catalog permits it to run metadata cleanup; a cleaner that cannot ask the catalog MUST fail
    with `UNSUPPORTED_WRITER_FEATURE` and delete nothing."
    """
    base = cleanup_tables.copy(tmp_path / "table")
    protocol = delta_snapshot_protocol(base)
    protocol["writerFeatures"] = [*protocol["writerFeatures"], feature]
    _write_commit(base.path, 7, [{"protocol": protocol}])
    before = snapshot_files(base.path)
    assert main(["cleanup", str(base.path), "--now", str(NOW), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("UNSUPPORTED_WRITER_FEATURE: ") and feature in err, err
    assert f"[rule: {rule}]" in err, err
    assert snapshot_files(base.path) == before


def delta_snapshot_protocol(base: Base) -> dict[str, list[str]]:
    first = (base.log_dir / commit_name(0)).read_text().splitlines()
    protocol: dict[str, list[str]] = next(
        json.loads(line)["protocol"] for line in first if '"protocol"' in line
    )
    return protocol


@pytest.mark.requirement("CKPT-CLEAN-018")
def test_disabled_cleanup_deletes_nothing(
    delta_spark: SparkSession, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """``delta.enableExpiredLogCleanup = false`` set by the latest commit: nothing is written or deleted,
    and the result says why. delta-spark's own cleanup deletes nothing from the same table either.

    Spec: CKPT-CLEAN-018
    "A cleaner SHOULD NOT delete any file of a table whose latest metadata sets
    `delta.enableExpiredLogCleanup` to `false`."
    """
    base = cleanup_tables.copy(tmp_path / "table")
    commit3 = [json.loads(line) for line in (base.log_dir / commit_name(3)).read_text().splitlines()]
    metadata = next(a["metaData"] for a in commit3 if "metaData" in a)
    metadata["configuration"]["delta.enableExpiredLogCleanup"] = "false"
    _write_commit(base.path, 7, [{"metaData": metadata}])
    theirs = tmp_path / "theirs"
    shutil.copytree(base.path, theirs)
    before = snapshot_files(base.path)
    result = cleanup(base.path, now_ms=NOW, spark=delta_spark)
    assert result.status == "disabled" and "delta.enableExpiredLogCleanup is false" in result.message
    assert result.deleted == [] and snapshot_files(base.path) == before
    theirs_before = log_files(theirs)
    delta_spark_cleanup(delta_spark, str(theirs), NOW)
    assert log_files(theirs) == theirs_before, f"{theirs}: delta-spark's cleanup changed the log"


@pytest.mark.requirement("CKPT-COMPAT-002", "CKPT-COMPAT-003", "CKPT-COMPAT-004")
def test_compatibility_copy_of_a_checkpoint_without_sidecars(
    delta_spark: SparkSession, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """The newest checkpoint is UUID-named with its file actions inline (our writer, no sidecars):
    the copy carries the same inline ``add`` rows, and the cleaner's own check (the version read
    without the UUID-named file uses the copy and gives the same state) passes.

    Spec: CKPT-COMPAT-002
    "A compatibility checkpoint MUST describe the same table state as the UUID-named checkpoint of its
    version."
    """
    from reference_impl.write.options import CheckpointOptions
    from reference_impl.write.writer import write_checkpoint

    base = cleanup_tables.copy(tmp_path / "table")
    commit3 = [json.loads(line) for line in (base.log_dir / commit_name(3)).read_text().splitlines()]
    metadata = next(a["metaData"] for a in commit3 if "metaData" in a)
    metadata["configuration"]["y"] = "2"
    _write_commit(base.path, 7, [{"metaData": metadata}])
    options = CheckpointOptions(spec="v2", naming="uuid", sidecars=False, now_ms=NOW)
    written = write_checkpoint(base.path, 7, options, spark=delta_spark).top_level[0].name
    result = cleanup(base.path, now_ms=NOW, spark=delta_spark)
    assert result.compat is not None and result.compat.action == "created" and result.compat.version == 7
    original = top_level_actions(base.log_dir / written)
    copy = top_level_actions(base.log_dir / classic_checkpoint_name(7))
    adds = sorted(json.dumps(a["add"], sort_keys=True) for a in original if "add" in a)
    assert len(adds) == 10 and not any("sidecar" in a for a in copy)
    assert sorted(json.dumps(a["add"], sort_keys=True) for a in copy if "add" in a) == adds
    assert [a for a in copy if "checkpointMetadata" in a] == [
        a for a in original if "checkpointMetadata" in a
    ]


@pytest.mark.requirement("CKPT-CLEAN-021", "CKPT-CLEAN-022")
@pytest.mark.parametrize("protected_before", [6, 3])
def test_checkpoint_protection_keeps_history_whole(
    protected_before: int, delta_spark: SparkSession, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """Commit 7 adds ``checkpointProtection`` with *P* = ``protected_before``; the cutoff checkpoint is 4.
    *P* = 6: the plan would remove only part of the history before 6 (commits 0-3, checkpoints 2 and 3),
    so no commit or checkpoint is deleted; delta-spark on the same table deletes them anyway, since a
    checkpoint exists right after its newest deleted commit (spec D21). *P* = 3: all history before 3 goes
    in this run, so the cleanup (a dry run) plans the unprotected deletions (commits 0-3, checkpoints 2
    and 3), commits of versions below each checkpoint deleted before it.

    Spec: CKPT-CLEAN-021
    "A cleaner MUST NOT delete a commit or checkpoint file of a version less than *P* unless the same run
    deletes every commit and checkpoint file of a version less than *P*; when its plan would delete only
    part of that history, it MUST delete none of it."
    Spec: CKPT-CLEAN-022
    "A cleaner that deletes the history before *P* SHOULD delete every commit file of a version less than
    a checkpoint's version before it deletes that checkpoint's files."
    """
    base = cleanup_tables.copy(tmp_path / "table")
    protocol = delta_snapshot_protocol(base)
    protocol["writerFeatures"] = [*protocol["writerFeatures"], "checkpointProtection"]
    commit3 = [json.loads(line) for line in (base.log_dir / commit_name(3)).read_text().splitlines()]
    metadata = next(a["metaData"] for a in commit3 if "metaData" in a)
    metadata["configuration"]["delta.requireCheckpointProtectionBeforeVersion"] = str(protected_before)
    _write_commit(base.path, 7, [{"protocol": protocol}, {"metaData": metadata}])
    theirs = tmp_path / "theirs"
    shutil.copytree(base.path, theirs)
    before = log_files(base.path, hidden=False)
    dry_run = protected_before == 3  # the deletions themselves are those of the unprotected tests above
    result = cleanup(base.path, now_ms=NOW, spark=delta_spark, dry_run=dry_run)
    deleted = {d.name for d in result.deleted} if dry_run else before - log_files(base.path, hidden=False)
    history = _old_log_files(base, 4)
    if protected_before == 6:
        assert not deleted & (history | {base.compaction}), f"{base.path}: deleted {sorted(deleted)}"
        protected = {d.name for d in result.kept if d.rule == "CKPT-CLEAN-021"}
        assert history <= protected, (
            f"{base.path}: kept without CKPT-CLEAN-021: {sorted(history - protected)}"
        )
        spark_before = log_files(theirs, hidden=False)
        delta_spark_cleanup(delta_spark, str(theirs), NOW)
        assert history <= spark_before - log_files(theirs, hidden=False), "D21: delta-spark deletes them"
    else:
        assert history <= deleted, f"{base.path}: kept {sorted(history - deleted)}"
        order = [d.name for d in result.deleted]
        for version, checkpoint in base.checkpoints.items():
            if checkpoint in order:
                first = order.index(checkpoint)
                assert all(order.index(commit_name(v)) < first for v in range(version)), order


@pytest.mark.requirement("CKPT-CLEAN-020")
@pytest.mark.parametrize("hint", ["absent", "corrupt"])
def test_delta_spark_cleans_only_with_a_hint(
    hint: str, delta_spark: SparkSession, cleanup_tables: CleanupTables, tmp_path: Path
) -> None:
    """delta-spark's own cleanup deletes nothing when ``_last_checkpoint`` is absent, but lists the log
    and deletes the expired files (commits 0-3, checkpoints 2 and 3) when it is corrupt — the permission
    this rule gives, and its limit.

    Spec: CKPT-CLEAN-020
    "A cleaner MAY delete nothing when `_delta_log/_last_checkpoint` is absent."
    """
    base = cleanup_tables.copy(tmp_path / "table")
    (base.log_dir / "_last_checkpoint").unlink()
    (base.log_dir / "._last_checkpoint.crc").unlink(missing_ok=True)
    if hint == "corrupt":
        (base.log_dir / "_last_checkpoint").write_text("{not json")
    before = log_files(base.path, hidden=False)
    delta_spark_cleanup(delta_spark, str(base.path), NOW)
    deleted = before - log_files(base.path, hidden=False)
    if hint == "absent":
        assert not deleted, f"{base.path}: delta-spark deleted {sorted(deleted)} without _last_checkpoint"
    else:
        expired = _old_log_files(base, 4)
        assert expired <= deleted, (
            f"{base.path}: with a corrupt hint delta-spark kept {sorted(expired - deleted)}"
        )


@pytest.mark.requirement("CKPT-CLEAN-003")
def test_in_commit_timestamps_date_the_commits(delta_spark: SparkSession, tmp_path: Path) -> None:
    """A delta-spark table with in-commit timestamps (written now), checkpoint at 3, whose files of versions
    0-3 were given modification times about 40 days old (one second apart, increasing with the version);
    retention 3 days. We date commits by their in-commit timestamps, which are newer than the cutoff, and
    delete nothing (spec §18.1 step 2). delta-spark, on a copy, dates them by modification time and deletes
    versions 0-2 (D17): the test fails if either side changes.

    Spec: CKPT-CLEAN-003
    "A cleaner MUST NOT delete any commit file whose timestamp, as defined in …, is later than the
    cutoff timestamp, nor any checkpoint or checksum file of such a commit's version."
    """
    path = tmp_path / "ict"
    delta_spark.sql(
        f"CREATE TABLE delta.`{path}` (id LONG) USING delta TBLPROPERTIES "
        "('delta.enableInCommitTimestamps' = 'true', 'delta.logRetentionDuration' = 'interval 3 days', "
        "'delta.deletedFileRetentionDuration' = 'interval 1 days')"
    )
    for i in range(3):
        delta_spark.range(i, i + 1).write.format("delta").mode("append").save(str(path))
    snapshot = delta_snapshot(delta_spark, str(path))
    snapshot.deltaLog().checkpoint(snapshot, jvm_of(delta_spark).scala.Option.empty())
    now = int(time.time() * 1000)
    old = (now - 40 * MS_PER_DAY) * 1_000_000
    for file in (path / "_delta_log").iterdir():
        head = file.name.lstrip(".").split(".")[0]
        if file.is_file() and head.isdigit() and int(head) <= 3:
            stamp = old + int(head) * 1_000_000_000
            os.utime(file, ns=(stamp, stamp))
    copy = tmp_path / "ict-delta-spark"
    shutil.copytree(path, copy)  # copytree keeps the modification times (copy2)
    before = log_files(path, hidden=False)
    result = cleanup(path, now_ms=now, spark=delta_spark)
    assert log_files(path, hidden=False) == before, f"{path}: deleted {[d.name for d in result.deleted]}"
    assert result.cutoff_commit is None, result.cutoff_commit
    delta_spark_cleanup(delta_spark, str(copy), now)
    deleted = before - log_files(copy, hidden=False)
    expected = {name for name in before if name.split(".")[0].isdigit() and int(name.split(".")[0]) <= 2}
    assert expected and deleted == expected, (
        f"{copy}: delta-spark deleted {sorted(deleted)}, D17 expects {sorted(expected)}"
    )


def _staging(log_dir: Path, files: dict[str, int], *, empty: tuple[str, int] | None = None) -> str:
    """A staging directory ``.delta-ckpt-staging-<uuid>`` holding ``files`` (relative path → mtime ms);
    with ``empty`` (a relative path, a time in ms) it holds those directories only, all last modified then.

    The UUID is the number of entries in ``_delta_log`` (deterministic, and new at each call).
    """
    name = f".delta-ckpt-staging-{uuid.UUID(int=len(list(log_dir.iterdir())))}"
    (log_dir / name).mkdir()
    for relative, mtime_ms in files.items():
        path = log_dir / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"staged")
        os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    if empty is not None:
        relative, mtime_ms = empty
        (log_dir / name / relative).mkdir(parents=True)
        deepest_first = [*sorted((log_dir / name).rglob("*"), reverse=True), log_dir / name]
        for directory in deepest_first:
            os.utime(directory, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    return name


def _cutoff(retention_days: int) -> int:
    """The log cutoff at ``NOW`` for a retention of whole days: midnight UTC, ``retention_days`` before."""
    return NOW - NOW % MS_PER_DAY - retention_days * MS_PER_DAY


@pytest.mark.requirement("CKPT-CLEAN-025", "CKPT-CLEAN-028", "CKPT-CLEAN-024")
def test_old_staging_is_collected_and_a_fresh_one_kept(
    delta_spark: SparkSession,
    cleanup_tables: CleanupTables,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A staging directory whose every file (at any depth) is older than the cutoff goes with all it
    holds, last, and is reported as ``staging``; one with a single file at the cutoff stays whole. One
    with directories but no file (a cancelled write's leftovers) goes when they all last changed before
    the cutoff, and stays when one changed at it (a writer may just have made it). A directory that only
    looks like staging (no UUID) is never entered.
    Links in the old staging to a file and a directory outside ``_delta_log`` go as links. (The dry
    run shows the same decisions: ``test_dry_run_plan_with_uuid_checkpoints_and_shared_sidecars``.)

    Spec: CKPT-CLEAN-025
    "A cleaner MAY delete a directory directly in `_delta_log/` whose name is `.delta-ckpt-staging-`
    followed by a canonical UUID, with everything in it, when every file in it, at any depth, has a
    modification time before both the cutoff timestamp … and, when it holds no file, when it and every
    directory in it were last modified before both."

    Spec: CKPT-CLEAN-028
    "A cleaner MUST NOT delete `_last_checkpoint`, any file outside `_delta_log/`, or any file in
    `_delta_log/` other than commit, checkpoint, checksum and log compaction files, staged commits,
    sidecar files and the Hadoop checksum file `.<name>.crc` of a file it deletes, except the files of
    an abandoned writer staging directory as CKPT-CLEAN-025 allows …"

    Spec: CKPT-CLEAN-024
    "A cleaner MUST NOT delete a file outside `_delta_log/` through a symbolic link or a hostile name …"
    """
    base = cleanup_tables.copy(tmp_path / "table")
    log_dir, cutoff = base.log_dir, _cutoff(3)  # the table's retention
    old = _staging(
        log_dir,
        {
            "01-sidecars/part-00000-a.parquet": cutoff - 1,
            "01-sidecars/_temporary/0/task_1/part-00001-b.parquet": cutoff - 9 * MS_PER_DAY,
            "02-top-level/_SUCCESS": cutoff - 1,
        },
    )
    outside = tmp_path / "outside.parquet"
    outside.write_bytes(b"not the table's")
    os.utime(outside, ns=(0, 0))
    (log_dir / old / "02-top-level" / "link.parquet").symlink_to(outside)
    (log_dir / old / "03-linked-dir").symlink_to(tmp_path, target_is_directory=True)
    fresh = _staging(
        log_dir,
        {
            "01-sidecars/part-00000-a.parquet": cutoff - 9 * MS_PER_DAY,
            "01-sidecars/part-00001-b.parquet": cutoff,
        },
    )
    empty = _staging(log_dir, {}, empty=("01-sidecars/_temporary/0", cutoff))
    empty_old = _staging(log_dir, {}, empty=("01-sidecars/_temporary/0", cutoff - 1))
    foreign = ".delta-ckpt-staging-not-a-uuid"
    (log_dir / foreign).mkdir()
    (log_dir / foreign / "part-00000.parquet").write_bytes(b"x")
    os.utime(log_dir / foreign / "part-00000.parquet", ns=(0, 0))
    before = snapshot_files(base.path)

    assert main(["cleanup", str(base.path), "--now", str(NOW), "--json", "--quiet"]) == 0
    result = json.loads(capsys.readouterr().out)
    staging = result["staging"]
    deleted = {d["name"]: d for d in staging["deleted"]}
    assert sorted(deleted) == sorted([f"{old}/", f"{empty_old}/"]), (
        f"{base.path}: staging deleted {staging['deleted']}"
    )
    for name in (old, empty_old):
        assert (deleted[f"{name}/"]["kind"], deleted[f"{name}/"]["modificationTime"]) == (
            "staging",
            cutoff - 1,
        ), f"{base.path}: {deleted[f'{name}/']}"
    kept = {d["name"]: d["reason"] for d in staging["kept"]}
    assert set(kept) == {f"{fresh}/", f"{empty}/"}, f"{base.path}: staging kept {kept}"
    assert f"{foreign}/" in {d["name"] for d in result["kept"] if d["kind"] == "directory"}, result["kept"]
    for name in (old, empty_old):
        assert not (log_dir / name).exists(), f"{log_dir / name} survived the cleanup ({result['message']})"
    assert outside.read_bytes() == b"not the table's", f"{outside}: deleted through a link"
    assert (tmp_path / "table").is_dir(), f"{tmp_path}: deleted through a directory link"
    after = snapshot_files(base.path)
    for name in (fresh, empty, foreign):
        left = {p: s for p, s in after.items() if p.startswith(f"_delta_log/{name}/")}
        was = {p: s for p, s in before.items() if p.startswith(f"_delta_log/{name}/")}
        assert left == was and (log_dir / name).is_dir(), f"{log_dir / name}: changed by the cleanup"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-006")
def test_no_compatibility_checkpoint_on_a_store_without_atomic_create(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``v2_uuid_json_sidecars`` golden table, its UUID-named checkpoint the cutoff checkpoint, on a store
    that declares no atomic create-if-absent (as ``s3a://`` does): the cleaner would write a compatibility
    checkpoint, so it stops with one STORAGE_ERROR naming ``_delta_log`` and the rule; nothing written or
    deleted.

    Spec: CKPT-WRITE-006
    "A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    see it partially written, and MUST NOT publish a UUID-named top-level file under a name that an
    existing file already has"
    """

    table = tmp_path / "table"
    shutil.copytree(FIXTURES_DIR / "valid" / "v2_uuid_json_sidecars" / "table", table)
    before = {p: p.stat().st_mtime_ns for p in table.rglob("*")}
    now = max(before.values()) // 1_000_000 + 3 * MS_PER_DAY
    local_store_without_atomic_create(monkeypatch)
    with pytest.raises(StorageError) as info:
        cleanup(table, now_ms=now, retention_ms=MS_PER_DAY, spark=spark)
    error = info.value
    assert error.rule == "CKPT-WRITE-006" and error.path == str(table / "_delta_log"), str(error)
    assert "compatibility checkpoint" in error.message, str(error)
    after = {p: p.stat().st_mtime_ns for p in table.rglob("*")}
    assert after == before, f"{table}: changed {sorted(set(after) ^ set(before))}"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-CLEAN-002")
@pytest.mark.parametrize("listing_fails_after", [False, True], ids=["listed", "listing-fails"])
def test_a_failed_delete_batch_leaves_no_gap_and_says_what_is_gone(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listing_fails_after: bool
) -> None:
    """The ``time_travel_checkpoints`` golden table (checkpoints 2, 5, 8; cutoff checkpoint 8) on a
    store that deletes in batches and stops part-way through the batch of commit 3: one
    STORAGE_ERROR that says what of that batch is gone (or that it cannot tell, when the store's
    listing fails too) and that nothing after it was deleted; the commits left have no gap.

    Spec: CKPT-CLEAN-002
    "A cleaner MUST NOT delete a commit file while keeping a commit file of a lower version, so that
    the remaining commits have no gap."
    """
    table = tmp_path / "table"
    shutil.copytree(FIXTURES_DIR / "valid" / "time_travel_checkpoints" / "table", table)
    log = table / "_delta_log"
    now = max(p.stat().st_mtime_ns for p in table.rglob("*")) // 1_000_000 + 3 * MS_PER_DAY
    local_store_failing_a_delete_batch(monkeypatch, commit_name(3), listing_fails_after=listing_fails_after)
    with pytest.raises(StorageError) as info:
        cleanup(table, now_ms=now, retention_ms=MS_PER_DAY, spark=spark)
    message = info.value.message
    assert "nothing after it was deleted" in message, f"{log}: {message}"
    expected = "unknown (listing failed too)" if listing_fails_after else f"gone ['{commit_name(3)}']"
    assert expected in message, f"{log}: expected {expected!r} in {message!r}"
    left = sorted(
        int(p.name[:20]) for p in log.glob("*.json") if p.name[:20].isdigit() and p.name.count(".") == 1
    )
    assert left == list(range(4, 10)), f"{log}: commits left {left}, expected 4..9 without a gap"
    assert (log / classic_checkpoint_name(2)).exists() is False, (
        f"{log}: checkpoint 2 kept after commit 3 went"
    )


@pytest.mark.requirement("CKPT-CLEAN-027", "CKPT-CLEAN-028")
def test_old_sidecar_temporary_is_collected_and_other_hidden_files_kept(
    delta_spark: SparkSession,
    cleanup_tables: CleanupTables,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A killed task's sidecar temporary in ``_sidecars/`` modified before the sidecar cutoff goes with its
    Hadoop ``.crc`` and is reported as a ``temporary`` under CKPT-CLEAN-027 naming the cutoff; one
    modified at the cutoff stays, reported with the cutoff. Old hidden files of any other shape stay — in
    ``_sidecars/`` (a temporary without a UUID, the ``.crc`` of every remaining sidecar) and in
    ``_delta_log`` itself (a log store's ``.<commit>.<uuid>.tmp``).

    Spec: CKPT-CLEAN-027
    "A cleaner MAY delete a file directly in `_delta_log/_sidecars/` whose name is a sidecar temporary
    name and that no remaining checkpoint references, together with its Hadoop checksum file, when its
    modification time is before the sidecar cutoff."

    Spec: CKPT-CLEAN-028
    "… a file in `_delta_log/_sidecars/` whose name begins with `.` is not a sidecar file."
    """
    base = cleanup_tables.copy(tmp_path / "table")
    log_dir, cutoff = base.log_dir, _cutoff(3)  # the table's retention; the sidecar cutoff is the same
    sidecar = sorted(base.sidecars[6])[0]
    old, young = sidecar_temp_name(sidecar, uuid.UUID(int=1)), sidecar_temp_name(sidecar, uuid.UUID(int=2))
    planted = {
        f"{SIDECAR_DIR}/{old}": cutoff - 1,
        f"{SIDECAR_DIR}/.{old}.crc": cutoff - 1,
        f"{SIDECAR_DIR}/{young}": cutoff,
        f"{SIDECAR_DIR}/.{sidecar}.tmp": 0,
        f".{commit_name(0)}.{uuid.UUID(int=3)}.tmp": 0,
    }
    for relative, mtime_ms in planted.items():
        (log_dir / relative).write_bytes(b"partial")
        os.utime(log_dir / relative, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    before = log_files(base.path)

    assert main(["cleanup", str(base.path), "--now", str(NOW), "--json", "--quiet"]) == 0
    result = json.loads(capsys.readouterr().out)
    after = log_files(base.path)
    gone = before - after
    temporary = {f"{SIDECAR_DIR}/{old}", f"{SIDECAR_DIR}/.{old}.crc"}
    assert temporary <= gone, f"{log_dir}: deleted {sorted(gone)}"
    hidden_gone = gone - _visible(gone) - temporary
    assert hidden_gone <= {_checksum(n) for n in _visible(gone)}, (
        f"{log_dir}: hidden files deleted that are not the checksum of a deleted file: {sorted(hidden_gone)}"
    )
    kept = [
        f"{SIDECAR_DIR}/{young}",
        f"{SIDECAR_DIR}/.{sidecar}.tmp",
        f".{commit_name(0)}.{uuid.UUID(int=3)}.tmp",
    ]
    kept += [_checksum(n) for n in _visible(after) if _checksum(n) in before]
    assert not [n for n in kept if n not in after], (
        f"{log_dir}: deleted {[n for n in kept if n not in after]}"
    )
    reported = {d["name"]: d for d in result["sidecars"]["deleted"] + result["sidecars"]["kept"]}
    deleted, young_kept = reported[f"{SIDECAR_DIR}/{old}"], reported[f"{SIDECAR_DIR}/{young}"]
    assert (deleted["kind"], deleted["rule"], deleted["companions"]) == (
        "temporary",
        "CKPT-CLEAN-027",
        [f"{SIDECAR_DIR}/.{old}.crc"],
    ), deleted
    assert young_kept in result["sidecars"]["kept"], result["sidecars"]
    assert f", before the sidecar cutoff {format_ms(cutoff)}" in deleted["reason"], deleted
    assert f"not before the sidecar cutoff {format_ms(cutoff)}" in young_kept["reason"], young_kept
