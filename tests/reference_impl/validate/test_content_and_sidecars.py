"""SCHEMA, CONTENT, SIDE, MULTI and LOG checks, one damage at a time on a copy of a golden table.

Each case starts from a table that does not report the rule, breaks it, and expects the rule at
its level from requirements.json (and, where a reader reports the problem as an error, its code).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.reference_impl.validate.helpers import (
    Mutation,
    copy_fixture,
    describe,
    edit_top_level,
    first,
    log,
    retype_field,
    rewrite_parquet,
    rules,
    validate,
)

SIDECARS = "_delta_log/_sidecars"
PART_2 = "00000000000000000004.checkpoint.0000000002.0000000002.parquet"


def _sidecar_names(table: Path) -> list[str]:
    return sorted(p.name for p in (table / SIDECARS).iterdir())


def _uri_sidecar_path(table: Path) -> None:
    target = (table / SIDECARS).resolve()

    def change(actions: list[dict[str, Any]]) -> None:
        body = first(actions, "sidecar")
        body["path"] = (target / body["path"]).as_uri()

    edit_top_level(change)(table)


def _unsafe_sidecar_name(table: Path) -> None:
    old = _sidecar_names(table)[0]
    (table / SIDECARS / old).rename(table / SIDECARS / "a b.parquet")
    edit_top_level(lambda actions: first(actions, "sidecar").__setitem__("path", "a%20b.parquet"))(table)


def _orphan(table: Path) -> None:
    (table / SIDECARS / "leftover.parquet").write_bytes(
        (table / SIDECARS / _sidecar_names(table)[0]).read_bytes()
    )


def _sidecar_schema_differs(table: Path) -> None:
    name = _sidecar_names(table)[1]
    rewrite_parquet(table / SIDECARS / name, drop="remove")
    size = (table / SIDECARS / name).stat().st_size

    def change(actions: list[dict[str, Any]]) -> None:
        for action in actions:
            if "sidecar" in action and action["sidecar"]["path"] == name:
                action["sidecar"]["sizeInBytes"] = size

    edit_top_level(change)(table)


def _protocol(**values: Any) -> Mutation:
    return edit_top_level(lambda actions: first(actions, "protocol").update(values))


def _truncate(name: str) -> Mutation:
    def mutate(table: Path) -> None:
        path = log(table) / name
        path.write_bytes(path.read_bytes()[:10])

    return mutate


def _delete_commits(*versions: int) -> Mutation:
    def mutate(table: Path) -> None:
        for version in versions:
            (log(table) / f"{version:020d}.json").unlink()

    return mutate


def _retype(name: str, column: str, field: str, type_name: str | None) -> Mutation:
    """``column.field`` of the file ``name`` rewritten as ``type_name``, or (``None``) declared required."""

    def mutate(table: Path) -> None:
        import pyarrow as pa

        if type_name is None:
            retype_field(log(table) / name, column, field, nullable=False)
        else:
            retype_field(log(table) / name, column, field, type_=pa.type_for_alias(type_name))

    return mutate


JSON_V2 = "v2_uuid_json_sidecars"
V1 = "00000000000000000003.checkpoint.parquet"
CASES: list[tuple[str, str, Mutation, str, str, str | None]] = [
    # (case id, fixture, damage, rule, its level, the reader's error code)
    ("commit-info-in-checkpoint", JSON_V2, edit_top_level(lambda a: a.append({"commitInfo": {"operation": "X"}})), "CKPT-CONTENT-010", "MUST", None),
    ("two-actions-in-one-line", JSON_V2, edit_top_level(lambda a: a.append({"txn": {"appId": "a", "version": 1}, "domainMetadata": {"domain": "d", "configuration": "", "removed": False}})), "CKPT-V2-005", "MUST", None),
    ("metadata-version", JSON_V2, edit_top_level(lambda a: first(a, "checkpointMetadata").__setitem__("version", 4)), "CKPT-V2-002", "MUST", None),
    ("tag-num-actions", JSON_V2, edit_top_level(lambda a: first(a, "checkpointMetadata")["tags"].__setitem__("sidecarNumActions", "9")), "CKPT-V2-006", "MUST", None),
    ("v2-without-feature", JSON_V2, _protocol(readerFeatures=[], writerFeatures=[]), "CKPT-FEAT-002", "MUST", None),
    ("features-null-at-v3", JSON_V2, _protocol(readerFeatures=None), "CKPT-SCHEMA-007", "MUST", None),
    ("sidecar-uri-path", JSON_V2, _uri_sidecar_path, "CKPT-SIDE-010", "MUST", None),
    ("sidecar-unsafe-name", JSON_V2, _unsafe_sidecar_name, "CKPT-SIDE-011", "MUST", None),
    ("sidecar-schemas-differ", JSON_V2, _sidecar_schema_differs, "CKPT-SIDE-015", "SHOULD", None),
    ("orphan-sidecar", JSON_V2, _orphan, "CKPT-CLEAN-017", "SHOULD", None),
    ("part-schemas-differ", "multipart_2", lambda t: rewrite_parquet(log(t) / PART_2, drop="txn"), "CKPT-PART-010", "SHOULD", None),
    ("part-unreadable", "multipart_2", _truncate(PART_2), "CKPT-WRITE-004", "MUST", "CHECKPOINT_CORRUPT"),
    ("classic-unreadable", "v1_classic", _truncate("00000000000000000003.checkpoint.parquet"), "CKPT-WRITE-006", "MUST", "CHECKPOINT_CORRUPT"),
    ("oldest-commit-not-at-checkpoint", "v1_classic", _delete_commits(0, 1), "CKPT-CLEAN-001", "MUST", None),
    ("commit-gap", "v1_classic", _delete_commits(1), "CKPT-CLEAN-002", "MUST", "LOG_GAP"),
    ("size-as-int32", "v1_classic", _retype(V1, "add", "size", "int32"), "CKPT-SCHEMA-002", "MUST", None),
    ("path-required", "v1_classic", _retype(V1, "add", "path", None), "CKPT-SCHEMA-003", "SHOULD", None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fixture", "damage", "rule", "level", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_one_damage_one_finding(
    fixture: str, damage: Mutation, rule: str, level: str, code: str | None, tmp_path: Path
) -> None:
    """The damaged copy reports ``rule`` at ``level`` (with the reader's ``code``); the clean copy did not."""
    table = copy_fixture(fixture, tmp_path)
    assert rule not in rules(validate(table)), f"{fixture} already reports {rule}"
    damage(table)
    report = validate(table)
    assert rules(report).get(rule) == level, (
        f"{fixture} damaged: expected {level} {rule}, found:\n{describe(report)}"
    )
    if code is not None:
        assert code in {str(f.code) for f in report.findings if f.rule == rule}, describe(report)
    assert report.exit_status == (1 if "MUST" in rules(report).values() else 0), describe(report)


@pytest.mark.requirement("CKPT-CLEAN-017", "CKPT-INC-007")
def test_the_name_set_of_a_referenced_sidecar_is_no_orphan(tmp_path: Path) -> None:
    """Spec: CKPT-CLEAN-017
    "A cleaner SHOULD delete every file in `_delta_log/_sidecars/` that no remaining checkpoint
    references and whose modification time is before the sidecar cutoff."

    Spec: CKPT-INC-007
    "A writer that records a name set for a sidecar file in its `sidecar` action's tags … MUST write
    it … as the file `<sidecar file name>.names` in the sidecar's directory …"

    A name set beside a listed sidecar is not reported as unreferenced; one whose sidecar no
    checkpoint lists is. Neither is counted among the sidecar files checked."""
    table = copy_fixture(JSON_V2, tmp_path)
    sidecars = _sidecar_names(table)
    (table / SIDECARS / f"{sidecars[0]}.names").write_bytes(b"DCKNSET1")
    (table / SIDECARS / "gone.parquet.names").write_bytes(b"DCKNSET1")
    report = validate(table)
    orphans = [f.file for f in report.findings if f.rule == "CKPT-CLEAN-017"]
    assert orphans == ["_delta_log/_sidecars/gone.parquet.names"], f"{table}: orphans reported {orphans}"
    assert report.checked["sidecarFiles"] == len(sidecars), (
        f"{table}: {report.checked['sidecarFiles']} sidecar files counted; the sidecars are {sidecars}"
    )


def test_a_refused_reference_still_keeps_its_file_from_being_an_orphan(tmp_path: Path) -> None:
    """'_sidecars/<name>' is refused (SIDECAR_PATH_INVALID), but <name> is not reported as unreferenced."""
    report = validate(copy_fixture("invalid_sidecar_path_with_directory", tmp_path))
    found = rules(report)
    assert found.get("CKPT-SIDE-010") == "MUST" and "CKPT-CLEAN-017" not in found, describe(report)
    assert {str(f.code) for f in report.findings if f.rule == "CKPT-SIDE-010"} == {"SIDECAR_PATH_INVALID"}
