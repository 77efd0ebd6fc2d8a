"""``delta-ckpt validate``: exit status 0 / 1 / 2, the grouped text report, and ``--json`` against its schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from reference_impl.cli.main import main
from spec.schemas import validator
from tests.reference_impl.validate.helpers import copy_fixture, edit_hint, log
from tests.support.listings import listing_diff, tree_listing


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``delta-ckpt validate --no-state ARGV`` (the state check, which needs Spark, is tested in test_state.py)."""
    status = main(["validate", "--no-state", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_clean_table_exits_0_and_json_matches_the_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A clean table: exit 0, ``ok`` true, no finding; the document validates against validate_report.schema.json."""
    status, out, _ = _run(capsys, str(copy_fixture("v2_uuid_json_sidecars", tmp_path)), "--json")
    document = json.loads(out)
    errors = [e.message for e in validator("validate_report.schema.json").iter_errors(document)]
    assert not errors, errors
    assert (status, document["ok"], document["findings"]) == (0, True, []), out
    assert document["checked"]["checkpoints"] == 1 and document["checked"]["sidecarFiles"] > 0, out


def test_must_finding_exits_1_with_a_grouped_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A MUST rule broken: exit 1; the text report names the file, the level, the rule and the value seen."""
    table = copy_fixture("v1_classic", tmp_path)
    edit_hint(lambda d: d.__setitem__("size", 4))(table)
    status, out, _ = _run(capsys, str(table))
    assert status == 1, out
    assert "_delta_log/_last_checkpoint\n  MUST   CKPT-LAST-003" in out and "seen: size 4" in out, out
    assert "MUST rules broken: 1 MUST" in out, out

    status, out, _ = _run(capsys, str(table), "--json")  # the same table in JSON: one MUST finding
    document = json.loads(out)
    assert not list(validator("validate_report.schema.json").iter_errors(document))
    assert (status, document["counts"]["MUST"]) == (1, 1), out
    assert document["findings"][0] | {"message": ""} == {
        "area": "LAST", "rule": "CKPT-LAST-003", "level": "MUST", "file": "_delta_log/_last_checkpoint",
        "seen": "size 4", "message": "", "code": None,
    }  # fmt: skip


def test_should_finding_only_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only SHOULD findings (a hint without checksum): exit 0, and the finding is still reported."""
    table = copy_fixture("v1_classic", tmp_path)
    document = json.loads((log(table) / "_last_checkpoint").read_text())
    document.pop("checksum")
    (log(table) / "_last_checkpoint").write_text(json.dumps(document))
    status, out, _ = _run(capsys, str(table))
    assert status == 0 and "SHOULD CKPT-LAST-010" in out and "no MUST rule broken" in out, out


def _empty_log(root: Path) -> str:
    (root / "_delta_log").mkdir()
    return str(root)


BAD_INPUT: dict[str, tuple[Callable[[Path], str], str]] = {
    "missing-table": (lambda root: str(root / "nowhere"), "TABLE_NOT_FOUND"),
    "empty-log": (_empty_log, "TABLE_NOT_FOUND"),
    "unknown-scheme": (lambda root: "gopher://host/t", "STORAGE_ERROR"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_exits_2_with_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing table, an empty log or an unsupported store: one error line, exit 2, nothing written."""
    make, code = BAD_INPUT[case]
    target = make(tmp_path)
    before = tree_listing(tmp_path)
    status, _, err = _run(capsys, target)
    assert status == 2 and err.startswith(f"{code}: ") and len(err.strip().splitlines()) == 1, (status, err)
    assert not listing_diff(before, tree_listing(tmp_path)), "validate wrote something"


BAD_PART = "00000000000000000002.checkpoint.0000000001.0000000002.parquet"


def _damage_all_over(table: Path) -> None:
    """v1_then_v2_after_feature (V1 checkpoint at 2, V2 with a sidecar at 5): a 0-byte part file at 2, an
    orphan in _sidecars/ and commit 3 deleted — one finding for each scope."""
    (log(table) / BAD_PART).write_bytes(b"")
    (log(table) / "_sidecars" / "00000000000000000004.checkpoint.orphan.parquet").write_bytes(b"x")
    (log(table) / "00000000000000000003.json").unlink()


def test_version_checks_only_that_versions_checkpoints_and_the_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--version N``: findings of the checkpoint files of N (and their sidecars, and the hint) only; the
    whole-table checks are listed as skipped; a version without a checkpoint file is one error, exit 2."""
    table = copy_fixture("v1_then_v2_after_feature", tmp_path)
    _damage_all_over(table)
    every = {(f["rule"], f["file"]) for f in json.loads(_run(capsys, str(table), "--json")[1])["findings"]}
    at_2 = {(r, f) for r, f in every if f == f"_delta_log/{BAD_PART}"}
    assert at_2 and {"CKPT-CLEAN-002", "CKPT-CLEAN-017"} <= {r for r, _ in every}, every

    status, out, _ = _run(capsys, str(table), "--version", "5", "--json")
    document = json.loads(out)
    assert not list(validator("validate_report.schema.json").iter_errors(document))
    assert (status, document["version"], document["findings"]) == (0, 5, []), out
    assert {"orphan sidecars", "commit run", "reader features"} <= set(document["skipped"]), out
    assert (document["checked"]["checkpoints"], document["checked"]["sidecarFiles"]) == (1, 1), out

    status, out, _ = _run(capsys, str(table), "--version", "2", "--json")
    found = {(f["rule"], f["file"]) for f in json.loads(out)["findings"]}
    assert status == 1 and found == at_2, (found, every)

    before = tree_listing(tmp_path)
    status, _, err = _run(capsys, str(table), "--version", "4")
    assert status == 2 and err.startswith("VERSION_NOT_FOUND: no checkpoint file of version 4"), (status, err)
    assert len(err.strip().splitlines()) == 1 and not listing_diff(before, tree_listing(tmp_path)), err
