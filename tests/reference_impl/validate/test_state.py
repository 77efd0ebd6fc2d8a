"""The STATE check: each checkpoint's state equals its commits' state (Spark, the reference reader).

One golden table per checkpoint kind validates clean with the state check on; a copy whose
checkpoint lost one file action reports ``CKPT-CONTENT-001`` naming what differs. Without a
session (``--no-state``) the check is listed as skipped, never silently passed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from reference_impl.validate import validate_table
from tests.reference_impl.validate.helpers import copy_fixture, describe, edit_top_level, log
from tests.support.listings import listing_diff, tree_listing

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

STATE = "checkpoint state equals commit state"
#: One table per kind: classic V1, multi-part, UUID-named JSON and Parquet with sidecars, classic-named V2, inline V2.
CLEAN = ["v1_classic", "multipart_2", "v2_uuid_json_sidecars", "v2_uuid_parquet_sidecars",
         "v2_classic_named_sidecars", "v2_inline_file_actions"]  # fmt: skip


@pytest.mark.parametrize("fixture", CLEAN)
def test_checkpoint_state_equals_commit_state(fixture: str, spark: SparkSession, tmp_path: Path) -> None:
    """A golden checkpoint describes exactly the state of its commits: no STATE finding, one comparison."""
    table = copy_fixture(fixture, tmp_path)
    before = tree_listing(table)
    report = validate_table(table, session=lambda: spark)
    assert STATE in report.checks and report.checked["statesCompared"] >= 1, report.to_json()
    assert not [f for f in report.findings if f.area == "STATE"], describe(report)
    assert not listing_diff(before, tree_listing(table)), "the state check wrote something"


def _drop_first_add(actions: list[dict[str, Any]]) -> None:
    actions.remove(next(a for a in actions if "add" in a))


def test_a_lost_file_action_breaks_content_001(spark: SparkSession, tmp_path: Path) -> None:
    """An inline V2 checkpoint without one of its add actions: MUST CKPT-CONTENT-001, the files named as differing."""
    table = copy_fixture("v2_inline_file_actions", tmp_path)
    edit_top_level(_drop_first_add)(table)
    report = validate_table(table, session=lambda: spark)
    state = [f for f in report.findings if f.area == "STATE"]
    assert [(f.rule, str(f.level)) for f in state] == [("CKPT-CONTENT-001", "MUST")], describe(report)
    assert state[0].seen == "files: 0 only in the checkpoint, 1 only in the commits", state[0].seen
    assert report.exit_status == 1


def test_a_checkpoint_named_for_a_later_version_breaks_content_001(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The v3 checkpoint renamed to v4: commit 4's file is missing from it, and the check says so."""
    table = copy_fixture("v1_classic", tmp_path)
    checkpoint = log(table) / "00000000000000000003.checkpoint.parquet"
    checkpoint.rename(log(table) / "00000000000000000004.checkpoint.parquet")
    (log(table) / "_last_checkpoint").unlink()
    report = validate_table(table, session=lambda: spark)
    state = [f for f in report.findings if f.area == "STATE"]
    assert [f.rule for f in state] == ["CKPT-CONTENT-001"], describe(report)
    assert state[0].file == "_delta_log/00000000000000000004.checkpoint.parquet"
    assert state[0].seen == "files: 0 only in the checkpoint, 1 only in the commits", state[0].seen


@pytest.mark.parametrize("fixture", ["cleaned_reference_v2_sidecars", "cleaned_delta_spark_v2_sidecars"])
def test_a_compatibility_checkpoint_equals_its_uuid_named_one(
    fixture: str, spark: SparkSession, tmp_path: Path
) -> None:
    """After cleanup (commits 0..3 gone), the classic-named copy at 7 is compared with the UUID-named 7: equal."""
    report = validate_table(copy_fixture(fixture, tmp_path), session=lambda: spark)
    assert report.checked["statesCompared"] >= 1, report.to_json()
    assert not [f for f in report.findings if f.area == "STATE"], describe(report)


def test_a_compatibility_checkpoint_missing_a_sidecar_breaks_compat_002(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The classic-named copy at 7 without its last sidecar action (3 files): MUST CKPT-COMPAT-002 on that copy."""
    import pyarrow.parquet as pq

    table = copy_fixture("cleaned_reference_v2_sidecars", tmp_path)
    compat = log(table) / "00000000000000000007.checkpoint.parquet"
    rows = pq.read_table(compat)
    sidecar_rows = [i for i, v in enumerate(rows.column("sidecar").to_pylist()) if v is not None]
    pq.write_table(rows.take([i for i in range(rows.num_rows) if i != sidecar_rows[-1]]), compat)
    report = validate_table(table, session=lambda: spark)
    state = [f for f in report.findings if f.area == "STATE"]
    assert [(f.rule, f.file) for f in state] == [
        ("CKPT-COMPAT-002", "_delta_log/00000000000000000007.checkpoint.parquet")
    ], describe(report)
    assert state[0].seen.startswith("files: 0 only in the checkpoint, "), state[0].seen


def test_without_a_session_the_state_check_is_skipped(tmp_path: Path) -> None:
    """No session: the state check is reported as skipped and compares nothing."""
    report = validate_table(copy_fixture("v1_classic", tmp_path))
    assert report.skipped == [STATE] and STATE not in report.checks
    assert report.checked["statesCompared"] == 0
