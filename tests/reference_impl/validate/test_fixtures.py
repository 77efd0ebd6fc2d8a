"""``delta-ckpt validate`` on every golden table of ``fixtures/`` (parametrised over the descriptors).

* a valid or foreign table reports exactly the MUST rules of :data:`KNOWN_MUST_FINDINGS` — none for
  almost all; the listed ones are reader fixtures damaged on purpose (a reader must still read
  them, but the table breaks a writer's rule) and a recorded divergence of a real writer;
* an invalid table reports the error code its descriptor expects (as a finding's ``code``), or,
  for a case a reader reads without error, one of the MUST rules its descriptor names;
* nothing under the table changes: names, sizes and modification times of every file and
  directory are the same before and after (read-only, on every fixture).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures import FIXTURES_DIR, descriptor_paths
from reference_impl.validate import Report, validate_table
from spec.schemas import validator
from tests.support.listings import listing_diff, tree_listing

DESCRIPTORS = descriptor_paths()

#: Valid and foreign fixtures whose table breaks MUST rules on purpose, with the rules and why.
KNOWN_MUST_FINDINGS: dict[str, tuple[frozenset[str], str]] = {
    "hint_ahead_of_log": (frozenset({"CKPT-LAST-002"}), "the hint names version 99"),
    "hint_dangling": (frozenset({"CKPT-LAST-002"}), "the hint names a deleted checkpoint"),
    "hint_empty": (frozenset({"CKPT-LAST-001"}), "a 0-byte hint"),
    "hint_truncated": (frozenset({"CKPT-LAST-001"}), "a hint cut in the middle of its JSON"),
    "hint_wrong_checkpoint_schema": (frozenset({"CKPT-LAST-005"}), "checkpointSchema lacks add/remove"),
    "hint_schema_of_another_v2_path": (
        frozenset({"CKPT-LAST-006"}),
        "v2Checkpoint.path names another file (its lacking checkpointSchema is then not this checkpoint's)",
    ),
    "hint_v1_schema_for_classic_named_v2": (
        frozenset({"CKPT-LAST-005"}),
        "checkpointSchema without checkpointMetadata/sidecar for a V2 file",
    ),
    "hint_wrong_checksum": (frozenset({"CKPT-CKSUM-001"}), "a checksum of zeros"),
    "multipart_missing_part_falls_back": (
        frozenset({"CKPT-NAME-002", "CKPT-LAST-002"}),
        "part 2 of 3 deleted; the hint still names that checkpoint",
    ),
    "noise_zero_byte_checkpoint": (frozenset({"CKPT-WRITE-006"}), "a 0-byte checkpoint file"),
    "fallback_corrupt_newest_checkpoint": (
        frozenset({"CKPT-WRITE-006"}),
        "the v4 checkpoint cut to 10 bytes",
    ),
    "v2_json_remove_stats_and_tags": (
        frozenset({"CKPT-V2-005"}),
        "remove.stats/tags added for readers (CKPT-SCHEMA-012); checkpoint_action.schema.json has neither",
    ),
    "kernel_java_classic": (
        frozenset({"CKPT-LAST-003", "CKPT-SCHEMA-005"}),
        "Kernel records the add count as size and copies remove.stats (conformance/expectations/kernel-java.yaml)",
    ),
    "kernel_java_classic_on_v2": (
        frozenset({"CKPT-LAST-003", "CKPT-SCHEMA-005"}),
        "Kernel records the add count as size and copies remove.stats (conformance/expectations/kernel-java.yaml)",
    ),
    "deltalake_classic": (
        frozenset({"CKPT-SCHEMA-005"}),
        "deltalake copies remove.stats into checkpoints (conformance/expectations/deltalake.yaml)",
    ),
    "deltalake_classic_v2": (
        frozenset({"CKPT-SCHEMA-005"}),
        "deltalake copies remove.stats into checkpoints (conformance/expectations/deltalake.yaml)",
    ),
}

#: The damaged checkpoints of fixtures/generator/cases_unreadable.py (readers fall back): the damage
#: breaks a writer rule on purpose; a stale .crc makes the file unreadable to Hadoop (CKPT-READ-026).
_UNREADABLE_MUST_FINDINGS: dict[str, tuple[frozenset[str], str]] = {
    "unreadable_part_garbage_to_older": (frozenset({"CKPT-WRITE-004"}), "checkpoint file replaced by noise"),
    "unreadable_part_missing_to_older": (
        frozenset({"CKPT-LAST-002", "CKPT-NAME-002"}),
        "checkpoint file deleted, the hint still names it",
    ),
    "unreadable_part_truncated_to_older": (frozenset({"CKPT-WRITE-004"}), "checkpoint file cut short"),
    "unreadable_part_zerobyte_to_older": (
        frozenset({"CKPT-LAST-002", "CKPT-NAME-002", "CKPT-WRITE-006"}),
        "checkpoint file emptied",
    ),
    "unreadable_sidecar_garbage_to_older": (
        frozenset({"CKPT-WRITE-004"}),
        "checkpoint file replaced by noise",
    ),
    "unreadable_sidecar_missing_to_older": (
        frozenset({"CKPT-SIDE-007"}),
        "checkpoint file deleted, the hint still names it",
    ),
    "unreadable_sidecar_truncated_to_older": (
        frozenset({"CKPT-SIDE-004", "CKPT-WRITE-004"}),
        "checkpoint file cut short",
    ),
    "unreadable_sidecar_zerobyte_to_older": (
        frozenset({"CKPT-SIDE-004", "CKPT-WRITE-004"}),
        "checkpoint file emptied",
    ),
    "unreadable_v1_garbage_to_commits": (frozenset({"CKPT-WRITE-006"}), "checkpoint file replaced by noise"),
    "unreadable_v1_garbage_to_older": (frozenset({"CKPT-WRITE-006"}), "checkpoint file replaced by noise"),
    "unreadable_v1_missing_to_older": (
        frozenset({"CKPT-LAST-002"}),
        "checkpoint file deleted, the hint still names it",
    ),
    "unreadable_v1_truncated_to_older": (frozenset({"CKPT-WRITE-006"}), "checkpoint file cut short"),
    "unreadable_v1_zerobyte_to_older": (
        frozenset({"CKPT-LAST-002", "CKPT-WRITE-006"}),
        "checkpoint file emptied",
    ),
    "unreadable_v2json_garbage_to_older": (
        frozenset({"CKPT-WRITE-006"}),
        "checkpoint file replaced by noise",
    ),
    "unreadable_v2json_missing_to_older": (
        frozenset({"CKPT-LAST-002"}),
        "checkpoint file deleted, the hint still names it",
    ),
    "unreadable_v2json_truncated_to_older": (frozenset({"CKPT-WRITE-006"}), "checkpoint file cut short"),
    "unreadable_v2json_zerobyte_to_older": (
        frozenset({"CKPT-LAST-002", "CKPT-WRITE-006"}),
        "checkpoint file emptied",
    ),
    "unreadable_v2parquet_garbage_to_older": (
        frozenset({"CKPT-WRITE-006"}),
        "checkpoint file replaced by noise",
    ),
    "unreadable_v2parquet_missing_to_older": (
        frozenset({"CKPT-LAST-002"}),
        "checkpoint file deleted, the hint still names it",
    ),
    "unreadable_v2parquet_truncated_to_older": (frozenset({"CKPT-WRITE-006"}), "checkpoint file cut short"),
    "unreadable_v2parquet_zerobyte_to_older": (
        frozenset({"CKPT-LAST-002", "CKPT-WRITE-006"}),
        "checkpoint file emptied",
    ),
}
_UNREADABLE_MUST_FINDINGS |= {
    f"unreadable_{kind}_stalecrc_to_older": (
        frozenset({"CKPT-READ-026"}),
        "a .crc that no longer matches the file",
    )
    for kind in ("part", "sidecar", "v1", "v2json", "v2parquet")
}
KNOWN_MUST_FINDINGS.update(_UNREADABLE_MUST_FINDINGS)

#: Invalid fixtures whose expected error only a reader meets, with why: for them validate need only
#: report a MUST finding and exit 1.
READER_ONLY_ERRORS: dict[str, str] = {
    "invalid_unreadable_part_missing": "LOG_GAP: no segment reaches the latest version; validate checks files, not reconstruction",
    "invalid_unreadable_part_zerobyte": "LOG_GAP: no segment reaches the latest version; validate checks files, not reconstruction",
    "invalid_unreadable_v1_missing": "LOG_GAP: no segment reaches the latest version; validate checks files, not reconstruction",
    "invalid_unreadable_v1_zerobyte": "LOG_GAP: no segment reaches the latest version; validate checks files, not reconstruction",
    "invalid_unreadable_v2json_missing": "LOG_GAP: no segment reaches the latest version; validate checks files, not reconstruction",
    "invalid_unreadable_v2json_zerobyte": "LOG_GAP: no segment reaches the latest version; validate checks files, not reconstruction",
    "invalid_unreadable_v2parquet_missing": "LOG_GAP: no segment reaches the latest version; validate checks files, not reconstruction",
    "invalid_unreadable_v2parquet_zerobyte": "LOG_GAP: no segment reaches the latest version; validate checks files, not reconstruction",
    "invalid_unreadable_v2json_truncated": (
        "CHECKPOINT_CORRUPT: validate reads the JSON lines it can parse and reports the cut-off metaData "
        "line as MISSING_METADATA"
    ),
}


def _id(path: Path) -> str:
    return path.parent.relative_to(FIXTURES_DIR).as_posix()


def _validate(descriptor: Path) -> tuple[dict[str, object], Report]:
    case = json.loads(descriptor.read_text(encoding="utf-8"))
    table = descriptor.parent / case["table"]
    before = tree_listing(table)
    report = validate_table(table)
    changes = listing_diff(before, tree_listing(table))
    assert not changes, f"validate changed {table}:\n" + "\n".join(changes)
    return case, report


def _must_rules(report: Report) -> set[str]:
    return {f.rule for f in report.findings if f.level == "MUST"}


def _describe(report: Report) -> str:
    return "\n".join(
        f"  {f.level} {f.rule} {f.file}: {f.seen} ({f.message})" for f in report.sorted_findings()
    )


def _kind(path: Path) -> str:
    return str(json.loads(path.read_text(encoding="utf-8"))["kind"])


@pytest.mark.parametrize("descriptor", DESCRIPTORS, ids=_id)
def test_validate_is_read_only_and_its_report_matches_the_schema(descriptor: Path) -> None:
    """No file or directory under the table is created, deleted or changed (size, mtime) by validate,
    and the --json document validates against spec/schemas/validate_report.schema.json."""
    _, report = _validate(descriptor)
    errors = [e.message for e in validator("validate_report.schema.json").iter_errors(report.to_json())]
    assert not errors, f"{_id(descriptor)}: {errors}"


@pytest.mark.parametrize("descriptor", [p for p in DESCRIPTORS if _kind(p) != "invalid"], ids=_id)
def test_valid_fixture_breaks_only_its_known_rules(descriptor: Path) -> None:
    """A valid or foreign table reports exactly the MUST rules of KNOWN_MUST_FINDINGS (none for most)."""
    case, report = _validate(descriptor)
    expected = KNOWN_MUST_FINDINGS.get(str(case["name"]), (frozenset(), ""))[0]
    assert _must_rules(report) == expected, (
        f"{_id(descriptor)}: MUST rules {sorted(_must_rules(report))}, expected {sorted(expected)}:\n"
        + _describe(report)
    )
    assert report.exit_status == (1 if expected else 0)


@pytest.mark.parametrize("descriptor", [p for p in DESCRIPTORS if _kind(p) == "invalid"], ids=_id)
def test_invalid_fixture_reports_its_error(descriptor: Path) -> None:
    """An invalid table: a finding carries the error code the descriptor expects (or, when a reader
    reads the table without error, a rule the descriptor names), and the exit status is 1."""
    case, report = _validate(descriptor)
    if case["name"] in READER_ONLY_ERRORS:
        assert _must_rules(report), f"{_id(descriptor)}: no MUST finding:\n" + _describe(report)
        assert report.exit_status == 1, f"{_id(descriptor)}: an invalid table must exit 1:\n" + _describe(
            report
        )
        return
    expectations = case["expectations"]
    assert isinstance(expectations, list)
    codes = {e["error"]["code"] for e in expectations if "error" in e}
    found_codes = {str(f.code) for f in report.findings if f.code}
    if codes:
        assert codes & found_codes, (
            f"{_id(descriptor)}: expected a finding with code {sorted(codes)}, found {sorted(found_codes)}:\n"
            + _describe(report)
        )
    else:
        named = set(case["requirements"])  # type: ignore[call-overload]
        assert named & _must_rules(report), (
            f"{_id(descriptor)}: expected one of {sorted(named)} among the MUST findings:\n"
            + _describe(report)
        )
    assert report.exit_status == 1, f"{_id(descriptor)}: an invalid table must exit 1:\n" + _describe(report)


def test_known_findings_name_existing_fixtures() -> None:
    """Every entry of KNOWN_MUST_FINDINGS is a fixture that exists (a stale entry is an error)."""
    names = {json.loads(p.read_text(encoding="utf-8"))["name"] for p in DESCRIPTORS}
    assert set(KNOWN_MUST_FINDINGS) <= names, sorted(set(KNOWN_MUST_FINDINGS) - names)
    assert set(READER_ONLY_ERRORS) <= names, sorted(set(READER_ONLY_ERRORS) - names)
