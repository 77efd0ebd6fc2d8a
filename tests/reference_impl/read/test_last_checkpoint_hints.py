"""A bad ``_last_checkpoint`` never changes the state: our reader recovers exactly as delta-spark does.

Base table: delta-spark's V2 JSON table (UUID-named checkpoints with sidecars at 2 and 4, commits
0..5; its ``_last_checkpoint`` carries ``v2Checkpoint`` with ``nonFileActions`` and
``sidecarFiles``). Each case damages the hint (or what it points at) in a private copy, then
compares our ``TableState`` with delta-spark's and checks the hint state our reader reports in
``source["hint"]``.

deltalake 1.6.6 is compared too. It ignores an unparsable hint and does not validate the checksum,
so it agrees in the missing / empty / truncated / wrong-checksum / stale cases; but it **fails** when
the hint names a checkpoint that is gone or a version beyond the log ("Had a _last_checkpoint hint
but didn't find any checkpoints", ecosystem-notes §0.5). Those two cases assert that error, so a
deltalake release that fixes it makes the test fail and the expectation gets updated.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from pyspark.sql import SparkSession

from conformance.adapters.deltalake import deltalake_row_count, deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_spark import delta_spark_state
from conformance.tables.real_writers import BuiltTable, checkpoint_files
from reference_impl.log.last_checkpoint import LastCheckpoint, LastCheckpointV2, parse_last_checkpoint
from reference_impl.log.naming import LAST_CHECKPOINT
from reference_impl.read.snapshot import read_snapshot
from tests.reference_impl.read.helpers import checkpoint_version_of, expected_rows, log_dir

CopyOf = Callable[[str], tuple[BuiltTable, Path]]
SHAPE = "v2-json"


def _hint_path(table: Path) -> Path:
    return log_dir(table) / LAST_CHECKPOINT


def _missing(table: Path, built: BuiltTable) -> None:
    _hint_path(table).unlink()


def _empty(table: Path, built: BuiltTable) -> None:
    _hint_path(table).write_bytes(b"")


def _truncated(table: Path, built: BuiltTable) -> None:
    data = _hint_path(table).read_bytes()
    _hint_path(table).write_bytes(data[: len(data) // 2])


def _wrong_checksum(table: Path, built: BuiltTable) -> None:
    document = json.loads(_hint_path(table).read_text())
    document["checksum"] = "0" * 32
    _hint_path(table).write_text(json.dumps(document, separators=(",", ":")))


def _stale(table: Path, built: BuiltTable) -> None:
    """A valid hint (correct checksum) describing the *older* UUID-named checkpoint at 2."""
    assert built.older_checkpoint_version is not None
    (name,) = checkpoint_files(log_dir(table), built.older_checkpoint_version)
    info = (log_dir(table) / name).stat()
    hint = LastCheckpoint(
        version=built.older_checkpoint_version,
        size=4,
        v2_checkpoint=LastCheckpointV2(
            path=name, size_in_bytes=info.st_size, modification_time=int(info.st_mtime * 1000)
        ),
    )
    _hint_path(table).write_text(hint.to_json_text())


def _dangling(table: Path, built: BuiltTable) -> None:
    """Delete the UUID-named top-level file the hint names (its sidecars stay); checkpoint 2 remains."""
    for name in checkpoint_files(log_dir(table), built.checkpoint_version):
        (log_dir(table) / name).unlink()


def _ahead(table: Path, built: BuiltTable) -> None:
    """A valid hint (correct checksum) for version 99, far beyond the log."""
    _hint_path(table).write_text(LastCheckpoint(version=99, size=5).to_json_text())


@dataclass(frozen=True)
class Case:
    damage: Callable[[Path, BuiltTable], None]
    hint_state: str
    checkpoint: str  # "newest" or "older": which checkpoint our reader must end up using
    deltalake_error: str | None  # None: deltalake agrees; else the error text it raises


CASES: dict[str, Case] = {
    "missing": Case(_missing, "missing", "newest", None),
    "empty": Case(_empty, "corrupt", "newest", None),
    "truncated": Case(_truncated, "corrupt", "newest", None),
    "wrong-checksum": Case(_wrong_checksum, "corrupt", "newest", None),
    "stale": Case(_stale, "stale", "newest", None),
    "dangling": Case(_dangling, "dangling", "older", "didn't find any checkpoints"),
    "ahead": Case(_ahead, "ahead", "newest", "didn't find any checkpoints"),
}


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-CKSUM-004")
def test_the_intact_hint_is_valid_and_used(delta_spark: SparkSession, copy_of: CopyOf) -> None:
    """Baseline: delta-spark's own ``_last_checkpoint`` (with ``v2Checkpoint``) parses and its checksum validates.

    Spec: CKPT-CKSUM-004
    "A reader SHOULD validate the `checksum` of `_last_checkpoint` when the member is present."
    """
    built, table = copy_of(SHAPE)
    hint = parse_last_checkpoint(_hint_path(table).read_text(), path=str(_hint_path(table)))
    assert hint.checksum is not None and hint.v2_checkpoint is not None, f"{_hint_path(table)}: {hint.raw}"
    assert hint.v2_checkpoint.path == built.checkpoint_files[0]
    assert hint.version == built.checkpoint_version
    # That the reader then *uses* it (source["hint"] == "used") is checked for every shape in
    # test_reader_vs_oracles.py::test_checkpoint_plus_tail_matches_oracles.


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-READ-016", "CKPT-READ-010", "CKPT-READ-018", "CKPT-READ-019", "CKPT-CKSUM-005")
@pytest.mark.parametrize("case", list(CASES))
def test_damaged_hint_recovers_like_delta_spark(
    case: str, delta_spark: SparkSession, deltalake: ModuleType, copy_of: CopyOf
) -> None:
    """Each damaged hint: same state as delta-spark, the right checkpoint, the hint state reported.

    Spec: CKPT-READ-016
    "A reader MUST report the same table state for every version whether `_last_checkpoint` is
    absent, describes the newest checkpoint, is stale, names a version beyond the log, names a
    missing checkpoint or is corrupt …"
    Spec: CKPT-READ-010
    "A reader MUST treat a `_last_checkpoint` that is empty, is not a JSON object, lacks `version`
    or `size`, has a member of the wrong type, or is corrupt by CKPT-CKSUM-005 exactly as if the
    file did not exist."
    Spec: CKPT-CKSUM-005
    "A reader that validates `_last_checkpoint` and finds a checksum mismatch or a duplicate key
    MUST treat the hint as corrupt, which means ignoring it as if it were absent."
    Spec: CKPT-READ-018
    "A reader MUST NOT fail because `_last_checkpoint` names a version newer than every checkpoint
    or commit in the listing; it MUST then find the checkpoint to use by listing from an earlier
    version, from version 0 if necessary."
    Spec: CKPT-READ-019
    "A reader MUST NOT fail because the checkpoint that `_last_checkpoint` describes does not exist
    or is incomplete, as long as an older complete checkpoint or the commits from version 0 allow it
    to reconstruct the requested version."
    """
    spec = CASES[case]
    built, table = copy_of(SHAPE)
    spec.damage(table, built)
    ours = read_snapshot(delta_spark, table).table_state()
    label = f"{table} ({SHAPE}, hint {case})"
    assert ours.source["hint"] == spec.hint_state, f"{label}: source {ours.source}"
    expected_cp = built.checkpoint_version if spec.checkpoint == "newest" else built.older_checkpoint_version
    assert checkpoint_version_of(ours) == expected_cp, f"{label}: source {ours.source}"
    assert ours.version == built.latest_version
    theirs = delta_spark_state(delta_spark, str(table))
    assert_states_equal(ours, theirs, context=f"{label}: reference reader (expected) vs delta-spark (actual)")
    assert (
        theirs.source["checkpoint"] is not None and theirs.source["checkpoint"]["version"] == expected_cp
    ), f"{label}: delta-spark used {theirs.source['checkpoint']}"
    if spec.deltalake_error is None:
        rust = deltalake_state(table)
        assert_states_equal(
            ours, rust, context=f"{label}: reference reader vs deltalake", ignore=unavailable_fields(rust)
        )
        assert deltalake_row_count(table) == expected_rows(ours)
    else:
        with pytest.raises(Exception, match=spec.deltalake_error):
            deltalake_state(table)
