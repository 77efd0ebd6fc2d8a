"""The ID policy across spec versions (``spec/history.py``): the real history, and that the check can fail.

Spec: ``spec/README.md`` "Requirement IDs" and ``spec/CHANGELOG.md``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from spec.history import (
    ReleaseRecord,
    RequirementRecord,
    current_record,
    load_changelog,
    load_releases,
    main_release,
    parse_changelog,
    policy_violations,
)
from spec.requirements import SPEC_DIR

RELEASES = load_releases()


def test_history_keeps_the_id_policy() -> None:
    """Every released index and the current one: no ID lost, no level or role changed, every change named."""
    assert RELEASES, "spec/releases/ holds no release record"
    problems = policy_violations(RELEASES, current_record(), load_changelog())
    assert not problems, "spec/CHANGELOG.md, spec/releases/, spec/checkpoints.md:\n" + "\n".join(problems)


def test_current_version_has_a_changelog_section() -> None:
    version = current_record().spec_version
    assert version in load_changelog(), f"spec/CHANGELOG.md has no '## {version}' section"


def _record(version: str, **reqs: RequirementRecord) -> ReleaseRecord:
    return ReleaseRecord(version, {k.replace("_", "-"): v for k, v in reqs.items()})


BASE = RequirementRecord("MUST", ("writer",), "active", "a" * 64)


@pytest.mark.parametrize(
    ("after", "changelog", "expected"),
    [
        pytest.param(_record("1.1.0"), {"1.1.0": frozenset()}, "disappeared", id="id-removed"),
        pytest.param(
            _record("1.1.0", CKPT_X_001=dataclasses.replace(BASE, level="SHOULD")),
            {"1.1.0": frozenset({"CKPT-X-001"})},
            "a change of what conforms",
            id="level-changed",
        ),
        pytest.param(
            _record("1.1.0", CKPT_X_001=dataclasses.replace(BASE, roles=("reader",))),
            {"1.1.0": frozenset({"CKPT-X-001"})},
            "a change of what conforms",
            id="roles-changed",
        ),
        pytest.param(
            _record("1.1.0", CKPT_X_001=dataclasses.replace(BASE, text_sha256="b" * 64)),
            {"1.1.0": frozenset()},
            "statement reworded) is not named",
            id="reworded-unnamed",
        ),
        pytest.param(
            _record("1.1.0", CKPT_X_001=BASE, CKPT_X_002=BASE),
            {},
            "no '## 1.1.0' section",
            id="added-no-section",
        ),
        pytest.param(
            _record("1.0.0", CKPT_X_001=BASE, CKPT_X_002=BASE), {}, "was not raised", id="version-not-raised"
        ),
        pytest.param(_record("0.9.0", CKPT_X_001=BASE), {}, "older than the release", id="version-lowered"),
    ],
)
def test_policy_check_names_each_break(
    after: ReleaseRecord, changelog: dict[str, frozenset[str]], expected: str
) -> None:
    problems = policy_violations([_record("1.0.0", CKPT_X_001=BASE)], after, changelog)
    assert any(expected in p for p in problems), problems


def test_withdrawn_requirement_stays_as_it_was() -> None:
    withdrawn = dataclasses.replace(BASE, status="withdrawn")
    before = _record("1.0.0", CKPT_X_001=withdrawn)
    revived = policy_violations(
        [before], _record("1.1.0", CKPT_X_001=BASE), {"1.1.0": frozenset({"CKPT-X-001"})}
    )
    edited = policy_violations(
        [before], _record("1.1.0", CKPT_X_001=dataclasses.replace(withdrawn, text_sha256="c" * 64)), {}
    )
    assert any("stays withdrawn" in p for p in revived), revived
    assert any("statement changed" in p for p in edited), edited


def test_withdrawal_with_a_new_id_named_in_the_changelog_passes() -> None:
    after = _record("1.1.0", CKPT_X_001=dataclasses.replace(BASE, status="withdrawn"), CKPT_X_002=BASE)
    changelog = parse_changelog("## 1.1.0\n- CKPT-X-001 withdrawn for CKPT-X-002\n## 1.0.0\nfirst\n")
    assert policy_violations([_record("1.0.0", CKPT_X_001=BASE)], after, changelog) == []


def test_changelog_sections_hold_only_their_own_ids() -> None:
    sections = parse_changelog("# T\n## 1.1.0 (unreleased)\nCKPT-A-001\n## 1.0.0\nCKPT-B-002\n")
    assert sections == {"1.1.0": frozenset({"CKPT-A-001"}), "1.0.0": frozenset({"CKPT-B-002"})}


def test_release_freezes_once(tmp_path: Path) -> None:
    """``delta-ckpt spec release`` writes ``releases/<version>.json``, then refuses (exit 2) to write it again."""
    for name in ("requirements.json", "CHANGELOG.md"):
        shutil.copy(SPEC_DIR / name, tmp_path / name)
    shutil.copytree(SPEC_DIR / "releases", tmp_path / "releases")
    version = current_record().spec_version
    target = tmp_path / "releases" / f"{version}.json"
    assert main_release(tmp_path) == 0
    assert ReleaseRecord.from_json(json.loads(target.read_text(encoding="utf-8"))) == current_record()
    before = target.read_bytes()
    assert main_release(tmp_path) == 2
    assert target.read_bytes() == before, f"{target} was rewritten"
