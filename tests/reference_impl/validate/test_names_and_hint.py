"""NAME, MULTI and LAST checks, one damage at a time on a copy of a golden table.

Each case starts from a table that validates clean, breaks one rule, and expects that rule
(at its level from requirements.json) among the findings — and, for a MUST rule, exit status 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.reference_impl.validate.helpers import (
    Mutation,
    copy_fixture,
    describe,
    edit_hint,
    hint,
    log,
    rules,
    validate,
    write_hint,
)


def _rename_checkpoint(old: str, new: str) -> Mutation:
    def mutate(table: Path) -> None:
        (log(table) / old).rename(log(table) / new)

    return mutate


def _duplicate_key(table: Path) -> None:
    text = (log(table) / "_last_checkpoint").read_text(encoding="utf-8")
    (log(table) / "_last_checkpoint").write_text(
        text.replace('{"version":3,', '{"version":3,"version":3,', 1)
    )


def _reorder(document: dict[str, Any]) -> None:
    size = document.pop("size")
    document["size"] = size


def _no_checksum(table: Path) -> None:
    write_hint(table, hint(table), with_checksum=False)


def _set(key: str, value: Any) -> Mutation:
    return edit_hint(lambda d: d.__setitem__(key, value))


def _set_v2(key: str, value: Any) -> Mutation:
    return edit_hint(lambda d: d["v2Checkpoint"].__setitem__(key, value))


V1 = "00000000000000000003.checkpoint.parquet"
UUID_JSON = "00000000000000000003.checkpoint.84966e78-0121-498d-9de3-f343ee9b7cb0.json"
CASES: list[tuple[str, str, Mutation, str, str]] = [
    # (case id, fixture, damage, rule expected, its level)
    ("version-19-digits", "v1_classic", _rename_checkpoint(V1, "0000000000000000003.checkpoint.parquet"), "CKPT-NAME-001", "MUST"),
    ("token-not-uuid", "v2_inline_file_actions", _rename_checkpoint(UUID_JSON, UUID_JSON.replace("84966e78", "84966E78")), "CKPT-NAME-003", "MUST"),
    ("part-3-of-2", "multipart_2", _rename_checkpoint(
        "00000000000000000004.checkpoint.0000000002.0000000002.parquet",
        "00000000000000000004.checkpoint.0000000003.0000000002.parquet"), "CKPT-NAME-002", "MUST"),
    ("missing-part", "multipart_2", lambda t: (log(t) / "00000000000000000004.checkpoint.0000000001.0000000002.parquet").unlink(), "CKPT-NAME-002", "MUST"),
    ("zero-byte", "v1_classic", lambda t: (log(t) / V1).write_bytes(b""), "CKPT-WRITE-006", "MUST"),
    ("duplicate-key", "v1_classic", _duplicate_key, "CKPT-CKSUM-002", "MUST"),
    ("members-out-of-order", "v1_classic", edit_hint(_reorder), "CKPT-LAST-009", "MUST"),
    ("no-checksum", "v1_classic", _no_checksum, "CKPT-LAST-010", "SHOULD"),
    ("wrong-size", "v1_classic", _set("size", 4), "CKPT-LAST-003", "MUST"),
    ("wrong-size-in-bytes", "v1_classic", _set("sizeInBytes", 1), "CKPT-LAST-004", "MUST"),
    ("wrong-add-count", "v1_classic", _set("numOfAddFiles", 9), "CKPT-LAST-004", "MUST"),
    ("parts-on-classic", "v1_classic", _set("parts", 2), "CKPT-LAST-013", "MUST"),
    ("parts-missing", "multipart_2", edit_hint(lambda d: d.pop("parts")), "CKPT-LAST-013", "MUST"),
    ("float-member", "v1_classic", _set("extra", 1.5), "CKPT-CKSUM-003", "SHOULD"),
    ("wrong-version-type", "v1_classic", _set("version", "3"), "CKPT-LAST-001", "MUST"),
    ("v2-path-wrong", "hint_full_v2", _set_v2("path", "00000000000000000003.checkpoint.x.json"), "CKPT-LAST-006", "MUST"),
    ("v2-size-wrong", "hint_full_v2", _set_v2("sizeInBytes", 1), "CKPT-LAST-006", "MUST"),
    ("v2-non-file-actions", "hint_full_v2", edit_hint(lambda d: d["v2Checkpoint"]["nonFileActions"].pop()), "CKPT-LAST-007", "MUST"),
    ("v2-sidecar-files", "hint_full_v2", edit_hint(lambda d: d["v2Checkpoint"]["sidecarFiles"][0].__setitem__("sizeInBytes", 3)), "CKPT-LAST-007", "MUST"),
    ("schema-on-json", "hint_full_v2", _set("checkpointSchema", {"type": "struct", "fields": []}), "CKPT-LAST-005", "MUST"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fixture", "damage", "rule", "level"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_one_damage_one_finding(
    fixture: str, damage: Mutation, rule: str, level: str, tmp_path: Path
) -> None:
    """The damaged copy reports ``rule`` at ``level``; the undamaged copy reported nothing at that rule."""
    table = copy_fixture(fixture, tmp_path)
    clean = validate(table)
    assert rule not in rules(clean), f"{fixture} already reports {rule}:\n{describe(clean)}"
    damage(table)
    report = validate(table)
    found = rules(report)
    assert found.get(rule) == level, f"{fixture} damaged: expected {level} {rule}, found:\n{describe(report)}"
    assert report.exit_status == (1 if "MUST" in found.values() else 0)


def test_a_stale_hint_is_a_should_finding_only(tmp_path: Path) -> None:
    """A hint older than the newest checkpoint breaks only the SHOULD rule CKPT-LAST-011: exit status 0."""
    report = validate(copy_fixture("hint_stale", tmp_path))
    assert rules(report) == {"CKPT-LAST-011": "SHOULD"}, describe(report)
    assert report.exit_status == 0


def test_a_deeply_nested_hint_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    """A _last_checkpoint nested 5,000 arrays deep: MUST CKPT-LAST-001, no RecursionError."""
    table = copy_fixture("v1_classic", tmp_path)
    deep = '{"version":3,"size":5,"tags":' + "[" * 5000 + "]" * 5000 + "}"
    (log(table) / "_last_checkpoint").write_text(deep)
    report = validate(table)
    assert rules(report).get("CKPT-LAST-001") == "MUST", describe(report)


def test_no_hint_is_no_finding(tmp_path: Path) -> None:
    """A table without _last_checkpoint breaks no rule (the hint is optional)."""
    report = validate(copy_fixture("hint_missing", tmp_path))
    assert not report.findings, describe(report)
