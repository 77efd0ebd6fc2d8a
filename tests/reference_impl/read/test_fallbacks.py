"""Unreadable checkpoints and broken logs: fall back as delta-spark does, or fail with a clear code.

When the checkpoint a reader would use cannot be read (a torn file, a torn part, a missing
sidecar), our reader tries the next older checkpoint, then the commits from version 0 — and the
state it reports must be delta-spark's for the same files. When nothing can replace the broken
checkpoint, or the log itself is broken, it fails with a stable ``CheckpointError`` code whose
message names the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from conformance.compare import assert_states_equal
from conformance.oracles.delta_spark import delta_spark_state
from conformance.tables.mutations import delete_commits_before
from conformance.tables.real_writers import BuiltTable, sidecar_files
from reference_impl.errors import CheckpointError
from reference_impl.log.naming import DELTA_LOG, SIDECAR_DIR, commit_name, parse_log_file_name
from reference_impl.read.snapshot import read_snapshot
from spec.table_state import TableState
from spec.vocabulary import LogFileKind
from tests.reference_impl.read.helpers import checkpoint_version_of, log_dir, prune_commits_before, truncate

CopyOf = Callable[[str], tuple[BuiltTable, Path]]


def drop_crc_files(table: Path) -> list[str]:
    """Delete the ``n.crc`` version checksum files, so delta-spark must load protocol and metadata from
    the checkpoint (with them, it takes both from the ``.crc`` and only reads the checkpoint later,
    where a failure is no longer retried — protocol-notes §3.4)."""
    removed = []
    for entry in sorted(log_dir(table).iterdir()):
        if parse_log_file_name(entry.name).kind is LogFileKind.CRC:
            entry.unlink()
            removed.append(entry.name)
    assert removed, f"no .crc files in {log_dir(table)}"
    return removed


def _ours_after_fallback(
    spark: SparkSession, table: Path, label: str, expected_cp: int | None, skipped: list[str]
) -> TableState:
    ours = read_snapshot(spark, table).table_state()
    assert checkpoint_version_of(ours) == expected_cp, f"{label}: {table} source {ours.source}"
    assert ours.source["fallbackFrom"] == skipped, f"{label}: {table} source {ours.source}"
    return ours


def _compare_fallback(
    spark: SparkSession, table: Path, label: str, expected_cp: int | None, skipped: list[str]
) -> None:
    """Our fallback state equals delta-spark's, and both used the same (older) checkpoint."""
    ours = _ours_after_fallback(spark, table, label, expected_cp, skipped)
    theirs = delta_spark_state(spark, str(table))
    assert_states_equal(
        ours, theirs, context=f"{table} ({label}): reference reader (expected) vs delta-spark (actual)"
    )
    their_cp = theirs.source["checkpoint"]
    assert (their_cp["version"] if their_cp else None) == expected_cp, f"{label}: delta-spark used {their_cp}"


def _delta_spark_fails_late(
    spark: SparkSession, damaged: Path, intact: Path, ours: TableState, label: str, error: str
) -> None:
    """delta-spark does not fall back here: it fails reading the files. Our fallback state equals the state
    delta-spark reports for the undamaged table (the same version, so the same state)."""
    with pytest.raises(Exception, match=error):
        delta_spark_state(spark, str(damaged))
    theirs = delta_spark_state(spark, str(intact))
    assert_states_equal(
        ours, theirs, context=f"{damaged} ({label}): reference reader vs delta-spark on the intact copy"
    )


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-READ-011", "CKPT-READ-012")
@pytest.mark.parametrize("shape", ["v1-classic", "v2-parquet"])
def test_truncated_newest_checkpoint_falls_back(
    shape: str, delta_spark: SparkSession, copy_of: CopyOf
) -> None:
    """The newest checkpoint's (top-level) file cut to 10 bytes, no ``.crc`` files: the older checkpoint
    (or, without one, the commits) gives the state — the same one delta-spark's fallback gives.

    Spec: CKPT-READ-012
    "When the checkpoint it would use is invalid or unreadable, a reader SHOULD fall back to the
    newest older complete checkpoint, or to the commits from version 0, from which a gap-free chain
    of commits reaches the requested version."
    Spec: CKPT-READ-011
    "A reader MUST NOT report a table state built from a checkpoint that is invalid under this
    specification or that it cannot read completely."
    """
    built, table = copy_of(shape)
    drop_crc_files(table)
    (name,) = built.checkpoint_files
    truncate(log_dir(table) / name)
    _compare_fallback(
        delta_spark, table, f"{shape}, {name} truncated", built.older_checkpoint_version, [name]
    )


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-READ-012")
def test_truncated_checkpoint_with_crc_delta_spark_does_not_fall_back(
    delta_spark: SparkSession, copy_of: CopyOf, tmp_path: Path
) -> None:
    """DIFFERENCE: with delta-spark's ``.crc`` files present, delta-spark takes protocol and metadata from
    the ``.crc``, reads the torn checkpoint only when listing files, and fails without a fallback
    (``FAILED_READ_FILE``). Our reader falls back to checkpoint 2 and reports the table's true state.

    Spec: CKPT-READ-012
    "When the checkpoint it would use is invalid or unreadable, a reader SHOULD fall back to the
    newest older complete checkpoint, or to the commits from version 0, from which a gap-free chain
    of commits reaches the requested version."
    """
    built, table = copy_of("v1-classic")
    (name,) = built.checkpoint_files
    truncate(log_dir(table) / name)
    ours = _ours_after_fallback(
        delta_spark, table, "v1-classic with .crc", built.older_checkpoint_version, [name]
    )
    _delta_spark_fails_late(
        delta_spark,
        table,
        built.path,
        ours,
        f"{name} truncated, .crc present",
        "FAILED_READ_FILE|CANNOT_READ",
    )


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-READ-012", "CKPT-PART-006")
def test_truncated_part_falls_back_to_commits(delta_spark: SparkSession, copy_of: CopyOf) -> None:
    """One part of the only (3-part) checkpoint cut to 10 bytes, no ``.crc``: the state comes from commits 0..4,
    as delta-spark's.

    Spec: CKPT-READ-012
    "When the checkpoint it would use is invalid or unreadable, a reader SHOULD fall back to the
    newest older complete checkpoint, or to the commits from version 0, from which a gap-free chain
    of commits reaches the requested version."
    Spec: CKPT-PART-006
    "A reader MUST NOT use a multi-part checkpoint of version `n` with part count `p` unless
    non-empty files for all parts `1..p` of `(n, p)` are present, judging each part count found at
    version `n` separately."
    """
    built, table = copy_of("multi-part")
    drop_crc_files(table)
    part = built.checkpoint_files[1]
    truncate(log_dir(table) / part)
    _compare_fallback(delta_spark, table, f"multi-part, {part} truncated", None, [built.checkpoint_files[0]])


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-SIDE-007", "CKPT-READ-012")
def test_missing_sidecar_falls_back(delta_spark: SparkSession, copy_of: CopyOf) -> None:
    """A sidecar of the newest V2 checkpoint deleted: our reader uses the older V2 checkpoint.

    DIFFERENCE: delta-spark takes protocol and metadata from the top-level file (which is intact), finds
    the sidecar missing only when it lists the files, and fails (``FAILED_READ_FILE.FILE_NOT_EXIST``)
    instead of falling back — with or without ``.crc`` files.

    Spec: CKPT-SIDE-007
    "A reader MUST treat a checkpoint that references a sidecar file which does not exist as
    invalid, with error code `SIDECAR_MISSING`."
    Spec: CKPT-READ-012
    "When the checkpoint it would use is invalid or unreadable, a reader SHOULD fall back to the
    newest older complete checkpoint, or to the commits from version 0, from which a gap-free chain
    of commits reaches the requested version."
    """
    built, table = copy_of("v2-json")
    drop_crc_files(table)
    prefix = f"{built.checkpoint_version:020d}."
    victim = next(n for n in sidecar_files(log_dir(table)) if n.startswith(prefix))
    (log_dir(table) / SIDECAR_DIR / victim).unlink()
    label = f"v2-json, sidecar {victim} deleted"
    ours = _ours_after_fallback(
        delta_spark, table, label, built.older_checkpoint_version, list(built.checkpoint_files)
    )
    _delta_spark_fails_late(delta_spark, table, built.path, ours, label, "FILE_NOT_EXIST")


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-SIDE-007", "CKPT-READ-013")
def test_missing_sidecar_without_fallback_is_sidecar_missing(
    delta_spark: SparkSession, copy_of: CopyOf
) -> None:
    """Commits before the V2 checkpoint deleted and one of its sidecars gone: ``SIDECAR_MISSING`` naming the sidecar.

    Spec: CKPT-SIDE-007
    "A reader MUST treat a checkpoint that references a sidecar file which does not exist as
    invalid, with error code `SIDECAR_MISSING`."
    Spec: CKPT-READ-013
    "A reader that does not or cannot fall back from an invalid or unreadable checkpoint MUST fail
    with the error code of the problem, and with `CHECKPOINT_CORRUPT` when a checkpoint file cannot
    be parsed."
    """
    built, table = copy_of("v2-json")
    prune_commits_before(table, built.checkpoint_version)
    prefix = f"{built.checkpoint_version:020d}."
    victim = next(n for n in sidecar_files(log_dir(table)) if n.startswith(prefix))
    (log_dir(table) / SIDECAR_DIR / victim).unlink()
    with pytest.raises(CheckpointError) as info:
        read_snapshot(delta_spark, table).table_state()
    assert info.value.code == "SIDECAR_MISSING", str(info.value)
    assert info.value.path == str(log_dir(table) / SIDECAR_DIR / victim), str(info.value)


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-READ-013")
def test_no_fallback_is_checkpoint_corrupt(delta_spark: SparkSession, copy_of: CopyOf) -> None:
    """Commits before the checkpoint deleted and the checkpoint torn: ``CHECKPOINT_CORRUPT`` naming the file;
    delta-spark cannot read the table either.

    Spec: CKPT-READ-013
    "A reader that does not or cannot fall back from an invalid or unreadable checkpoint MUST fail
    with the error code of the problem, and with `CHECKPOINT_CORRUPT` when a checkpoint file cannot
    be parsed."
    """
    built, table = copy_of("v1-classic")
    prune_commits_before(table, built.checkpoint_version)
    (name,) = built.checkpoint_files
    truncate(log_dir(table) / name)
    with pytest.raises(CheckpointError) as info:
        read_snapshot(delta_spark, table).table_state()
    assert info.value.code == "CHECKPOINT_CORRUPT", str(info.value)
    assert info.value.path is not None and info.value.path.endswith(name), str(info.value)
    assert name in str(info.value)
    with pytest.raises(Exception, match=r"FAILED_READ_FILE[\s\S]*" + re.escape(name)):
        delta_spark_state(delta_spark, str(table))


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-READ-006")
def test_gap_after_checkpoint_is_log_gap(delta_spark: SparkSession, copy_of: CopyOf) -> None:
    """Checkpoint 4 deleted and commit 3 missing: checkpoint 2 cannot reach version 5 → ``LOG_GAP``;
    delta-spark fails too.

    Spec: CKPT-READ-006
    "… when no checkpoint and commit chain without a gap reaches the requested version it MUST fail
    with `LOG_GAP`."
    """
    built, table = copy_of("v1-classic")
    for name in built.checkpoint_files:
        (log_dir(table) / name).unlink()
    (log_dir(table) / commit_name(3)).unlink()
    with pytest.raises(CheckpointError) as info:
        read_snapshot(delta_spark, table)
    assert info.value.code == "LOG_GAP", str(info.value)
    assert "version 3 is" in info.value.message, info.value.message
    # delta-spark first follows the hint to the deleted checkpoint 4 and reports that instead.
    with pytest.raises(Exception, match="DELTA_MISSING_PART_FILES"):
        delta_spark_state(delta_spark, str(table))


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-READ-007")
def test_checkpoint_without_a_commit_at_or_after_it(delta_spark: SparkSession, copy_of: CopyOf) -> None:
    """Every commit file and ``.crc`` deleted, the checkpoint at 4 kept: our reader uses the permission not to
    fail and reports version 4 from the checkpoint alone — the state delta-spark reports for version 4 of the
    intact table. delta-spark itself fails (D11), as the rule allows.

    Spec: CKPT-READ-007
    "A reader MAY fail with `LOG_CORRUPT` when the log contains no commit file at or after the version of
    the checkpoint it would use."
    """
    built, table = copy_of("v1-classic")
    gone = delete_commits_before(log_dir(table), built.latest_version + 1)
    assert commit_name(built.checkpoint_version) in gone, f"{table}: deleted {gone}"
    assert not any(parse_log_file_name(p.name).kind is LogFileKind.COMMIT for p in log_dir(table).iterdir())
    ours = read_snapshot(delta_spark, table).table_state()
    assert ours.version == built.checkpoint_version, f"{table}: our reader reported {ours.source}"
    assert checkpoint_version_of(ours) == built.checkpoint_version, f"{table}: {ours.source}"
    theirs = delta_spark_state(delta_spark, str(built.path), built.checkpoint_version)
    assert_states_equal(
        ours, theirs, context=f"{table} without commits: ours vs delta-spark at v{built.checkpoint_version}"
    )
    with pytest.raises(
        Exception, match=f"Could not find any delta files for version {built.checkpoint_version}"
    ):
        delta_spark_state(delta_spark, str(table))


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-READ-008")
def test_time_travel_below_oldest_is_version_not_found(delta_spark: SparkSession, copy_of: CopyOf) -> None:
    """Commits before checkpoint 4 deleted: version 1 (no checkpoint at or below it) is ``VERSION_NOT_FOUND``;
    so is a version beyond the newest commit. delta-spark refuses both as well.

    Spec: CKPT-READ-008
    "A reader asked for a version newer than the newest commit, or older than the oldest version it
    can reconstruct from the remaining files, MUST fail with `VERSION_NOT_FOUND`."
    """
    built, table = copy_of("v1-classic")
    prune_commits_before(table, built.checkpoint_version)
    for version in (1, built.latest_version + 1):
        with pytest.raises(CheckpointError) as info:
            read_snapshot(delta_spark, table, version=version)
        assert info.value.code == "VERSION_NOT_FOUND", f"v{version}: {info.value}"
        assert info.value.path == str(table / DELTA_LOG)
        with pytest.raises(Exception, match=r"DELTA_LOG_FILE_NOT_FOUND|non-existent version"):
            delta_spark_state(delta_spark, str(table), version)


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-009")
def test_missing_delta_log_is_table_not_found(spark: SparkSession, tmp_path: Path) -> None:
    """A directory without ``_delta_log`` is ``TABLE_NOT_FOUND`` naming the missing directory.

    Spec: CKPT-READ-009
    "An implementation asked to operate on a directory that has no `_delta_log/` subdirectory, or
    whose `_delta_log/` holds no commit file and no checkpoint, MUST fail with `TABLE_NOT_FOUND`."
    """
    (tmp_path / "t").mkdir()
    with pytest.raises(CheckpointError) as info:
        read_snapshot(spark, tmp_path / "t")
    assert info.value.code == "TABLE_NOT_FOUND"
    assert info.value.path == str(tmp_path / "t" / DELTA_LOG)
    (tmp_path / "t" / DELTA_LOG).mkdir()
    (tmp_path / "t" / DELTA_LOG / "README").write_text("x")
    with pytest.raises(CheckpointError) as info:
        read_snapshot(spark, tmp_path / "t")
    assert info.value.code == "TABLE_NOT_FOUND"


@pytest.mark.spark
@pytest.mark.delta_spark
def test_broken_commit_line_is_log_corrupt(delta_spark: SparkSession, copy_of: CopyOf) -> None:
    """A commit after the checkpoint with a line that is not JSON: ``LOG_CORRUPT`` naming the file and line."""
    built, table = copy_of("v1-classic")
    commit = log_dir(table) / commit_name(built.latest_version)
    lines = commit.read_text().splitlines()
    commit.write_text("\n".join([*lines[:1], '{"add": {"path": "x", "size": ', *lines[1:]]) + "\n")
    with pytest.raises(CheckpointError) as info:
        read_snapshot(delta_spark, table)
    assert info.value.code == "LOG_CORRUPT", str(info.value)
    assert info.value.path == str(commit), str(info.value)
    assert "line 2" in info.value.message, info.value.message


def test_truncate_refuses_short_files(tmp_path: Path) -> None:
    """``truncate`` refuses files already smaller than the cut (a test could otherwise pass vacuously)."""
    small = tmp_path / "f"
    small.write_bytes(b"12345")
    with pytest.raises(AssertionError, match="only 5 bytes"):
        truncate(small)
