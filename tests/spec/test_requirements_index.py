"""Tests of the requirement index: ``spec/requirements.json`` and its parser.

Spec: spec/checkpoints.md section 2.3 ("Requirement entries"); spec/README.md.
Module under test: ``spec.requirements``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from spec.requirements import (
    AREAS,
    ID_PATTERN,
    Requirement,
    SpecFormatError,
    extract,
    load_requirements,
    main_extract,
    parse_requirements,
    parse_spec_version,
    render_requirements_json,
)
from spec.vocabulary import Level, Role

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO_ROOT / "spec"
SPEC_MD = SPEC_DIR / "checkpoints.md"
REQUIREMENTS_JSON = SPEC_DIR / "requirements.json"
PROTOCOL_URL = "https://github.com/delta-io/delta/blob/master/PROTOCOL.md#"
DOT = "\u00b7"


def _entry(
    req_id: str = "CKPT-V2-001",
    header_tail: str = f"MUST {DOT} writer {DOT} upstream: [V2 Spec]({PROTOCOL_URL}v2-spec)",
    statement: str = "A V2-spec checkpoint MUST contain exactly one `checkpointMetadata` action.",
) -> str:
    return f'<a id="{req_id}"></a>\n**{req_id}** {DOT} {header_tail}\n\n{statement}\n'


def _doc(*entries: str, heading: str = "## 11. V2-spec checkpoints") -> str:
    return "# Title\n\nSpec version: 1.2.3\n\n" + heading + "\n\n" + "\n".join(entries)


# --------------------------------------------------------------------------- the real spec


def test_requirements_json_is_up_to_date() -> None:
    expected = extract(SPEC_DIR)
    actual = REQUIREMENTS_JSON.read_text(encoding="utf-8") if REQUIREMENTS_JSON.is_file() else ""
    assert actual == expected, (
        "spec/requirements.json is stale; regenerate it with "
        "`python -m spec.requirements` (or `delta-ckpt spec extract`)"
    )


def test_requirements_json_ids_are_unique_and_well_formed() -> None:
    document = json.loads(REQUIREMENTS_JSON.read_text(encoding="utf-8"))
    ids = [entry["id"] for entry in document["requirements"]]
    assert len(ids) == len(set(ids)), f"duplicate IDs: {sorted({i for i in ids if ids.count(i) > 1})}"
    malformed = [i for i in ids if ID_PATTERN.match(i) is None or i.split("-")[1] not in AREAS]
    assert not malformed, f"malformed IDs: {malformed}"
    assert ids == sorted(ids), "requirements.json must list requirements ordered by ID"
    assert re.fullmatch(r"\d+\.\d+\.\d+", document["spec_version"]), document["spec_version"]


def test_load_requirements_round_trips() -> None:
    loaded = load_requirements(REQUIREMENTS_JSON)
    parsed = parse_requirements(SPEC_MD.read_text(encoding="utf-8"))
    assert loaded == {req.id: req for req in parsed}


def test_spec_numbers_each_area_without_gaps() -> None:
    by_area: dict[str, list[int]] = {}
    for req in parse_requirements(SPEC_MD.read_text(encoding="utf-8")):
        by_area.setdefault(req.area, []).append(req.number)
    gaps = {area: nums for area, nums in by_area.items() if sorted(nums) != list(range(1, len(nums) + 1))}
    assert not gaps, f"areas whose numbers are not 001..NNN: {gaps}"


def test_spec_version_line_is_present() -> None:
    version = parse_spec_version(SPEC_MD.read_text(encoding="utf-8"))
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{SPEC_MD}: 'Spec version: {version}'"


def test_untestable_requirements_give_a_reason() -> None:
    for req in parse_requirements(SPEC_MD.read_text(encoding="utf-8")):
        if req.untestable is not None:
            assert len(req.untestable.split()) >= 5, f"{req.id}: untestable reason is too short"


def test_main_extract_writes_the_index(tmp_path: Path) -> None:
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "checkpoints.md").write_text(_doc(_entry()), encoding="utf-8")
    assert main_extract(spec_dir) == 0
    written = json.loads((spec_dir / "requirements.json").read_text(encoding="utf-8"))
    assert written["spec_version"] == "1.2.3"
    assert [r["id"] for r in written["requirements"]] == ["CKPT-V2-001"]


# --------------------------------------------------------------------------- parser: good input


def test_parse_single_entry() -> None:
    (req,) = parse_requirements(_doc(_entry()))
    assert req == Requirement(
        id="CKPT-V2-001",
        area="V2",
        number=1,
        level=Level.MUST,
        roles=(Role.WRITER,),
        upstream=("V2 Spec", PROTOCOL_URL + "v2-spec"),
        features=(),
        status="active",
        untestable=None,
        section="11. V2-spec checkpoints",
        anchor="CKPT-V2-001",
        text="A V2-spec checkpoint MUST contain exactly one `checkpointMetadata` action.",
    )


def test_parse_optional_fields_and_wrapped_statement() -> None:
    header = (
        f"SHOULD {DOT} reader, cleaner {DOT} upstream: none {DOT} features: v2Checkpoint, deletionVectors "
        f"{DOT} status: tentative {DOT} untestable: needs a storage layer that reorders writes"
    )
    statement = "A reader SHOULD do\nsomething that wraps\nover three lines."
    (req,) = parse_requirements(_doc(_entry("CKPT-READ-007", header, statement)))
    assert req.roles == ("reader", "cleaner")
    assert req.upstream is None
    assert req.features == ("v2Checkpoint", "deletionVectors")
    assert req.status == "tentative"
    assert req.untestable == "needs a storage layer that reorders writes"
    assert req.text == "A reader SHOULD do something that wraps over three lines."


def test_roles_are_put_in_canonical_order() -> None:
    header = f"MUST {DOT} cleaner, writer {DOT} upstream: none"
    (req,) = parse_requirements(_doc(_entry("CKPT-CLEAN-001", header, "A cleaner MUST keep it.")))
    assert req.roles == ("writer", "cleaner")


def test_section_is_the_nearest_heading() -> None:
    text = _doc(
        _entry("CKPT-V2-001"),
        "### 11.2 Tags\n",
        _entry("CKPT-V2-002", statement="Tags MUST be strings."),
    )
    first, second = parse_requirements(text)
    assert first.section == "11. V2-spec checkpoints"
    assert second.section == "11.2 Tags"


def test_fenced_examples_are_ignored() -> None:
    text = _doc("```markdown\n" + _entry("CKPT-V2-009") + "```\n", _entry())
    assert [r.id for r in parse_requirements(text)] == ["CKPT-V2-001"]


def test_withdrawn_requirement_keeps_its_id() -> None:
    header = f"MUST {DOT} writer {DOT} upstream: none {DOT} status: withdrawn"
    (req,) = parse_requirements(_doc(_entry("CKPT-PART-004", header, "Parts MUST be hashed.")))
    assert req.status == "withdrawn"


def test_rendering_is_deterministic_and_sorted() -> None:
    text = _doc(
        _entry("CKPT-V2-002", statement="B MUST hold."),
        _entry("CKPT-CLEAN-001", statement="A MUST hold."),
    )
    reqs = parse_requirements(text)
    rendered = render_requirements_json(reqs, spec_version="1.2.3")
    assert rendered == render_requirements_json(list(reversed(reqs)), spec_version="1.2.3")
    assert rendered.endswith("}\n")
    document = json.loads(rendered)
    assert [r["id"] for r in document["requirements"]] == ["CKPT-CLEAN-001", "CKPT-V2-002"]
    assert rendered == json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- parser: malformed input


def _expect_error(text: str, line: int, fragment: str) -> None:
    with pytest.raises(SpecFormatError) as info:
        parse_requirements(text)
    assert info.value.line == line, f"expected line {line}, got {info.value}"
    assert fragment in str(info.value), str(info.value)


# Line numbers below: _doc puts the first anchor on line 7 and its header on line 8.
@pytest.mark.parametrize(
    ("req_id", "fragment"),
    [
        ("CKPT-V2-1", "does not match"),
        ("CKPT-v2-001", "does not match"),
        ("CKPT-V2-0001", "does not match"),
        ("CKPT-FOO-001", "unknown area"),
        ("CKPT--001", "does not match"),
    ],
)
def test_malformed_or_unknown_id(req_id: str, fragment: str) -> None:
    _expect_error(_doc(_entry(req_id)), 8, fragment)


def test_unknown_level() -> None:
    _expect_error(_doc(_entry(header_tail=f"MUST NOT {DOT} writer {DOT} upstream: none")), 8, "unknown level")


def test_unknown_role() -> None:
    _expect_error(_doc(_entry(header_tail=f"MUST {DOT} vacuum {DOT} upstream: none")), 8, "unknown role")


def test_duplicate_role() -> None:
    _expect_error(
        _doc(_entry(header_tail=f"MUST {DOT} writer, writer {DOT} upstream: none")), 8, "duplicate entry"
    )


def test_missing_upstream() -> None:
    _expect_error(_doc(_entry(header_tail=f"MUST {DOT} writer")), 8, "at least")


def test_malformed_upstream() -> None:
    _expect_error(
        _doc(_entry(header_tail=f"MUST {DOT} writer {DOT} upstream: PROTOCOL.md#v2-spec")), 8, "upstream"
    )


def test_unknown_optional_field() -> None:
    _expect_error(
        _doc(_entry(header_tail=f"MUST {DOT} writer {DOT} upstream: none {DOT} owner: me")),
        8,
        "unexpected header field",
    )


def test_optional_fields_out_of_order() -> None:
    _expect_error(
        _doc(
            _entry(
                header_tail=f"MUST {DOT} writer {DOT} upstream: none {DOT} status: tentative {DOT} features: x"
            )
        ),
        8,
        "out of order",
    )


def test_unknown_status() -> None:
    _expect_error(
        _doc(_entry(header_tail=f"MUST {DOT} writer {DOT} upstream: none {DOT} status: draft")),
        8,
        "unknown status",
    )


def test_header_with_plain_separators() -> None:
    _expect_error(_doc(_entry(header_tail="MUST | writer | upstream: none")), 8, "at least")


def test_duplicate_id() -> None:
    text = _doc(_entry(), _entry())
    _expect_error(text, 13, "duplicate requirement ID CKPT-V2-001 (first defined on line 8)")


def test_header_without_anchor() -> None:
    text = _doc(_entry()).replace('<a id="CKPT-V2-001"></a>\n', "")
    _expect_error(text, 7, "must be preceded by")


def test_anchor_not_matching_header() -> None:
    text = _doc(_entry()).replace('<a id="CKPT-V2-001">', '<a id="CKPT-V2-002">')
    _expect_error(text, 8, "does not match the header ID")


def test_anchor_without_header() -> None:
    text = _doc('<a id="CKPT-V2-003"></a>\n\nSome text.\n')
    _expect_error(text, 7, "not immediately followed")


def test_header_followed_by_heading_instead_of_statement() -> None:
    _expect_error(_doc(_entry(statement="## 12. Next section")), 10, "expected a statement paragraph")


def test_header_followed_by_nothing() -> None:
    text = _doc(_entry()).split("\n\nA V2-spec")[0] + "\n"
    _expect_error(text, 8, "blank line and the statement")


def test_header_without_blank_line() -> None:
    text = _doc(_entry()).replace(f"upstream: [V2 Spec]({PROTOCOL_URL}v2-spec)\n\n", "upstream: none\n")
    _expect_error(text, 8, "blank line")


def test_statement_without_its_level_keyword() -> None:
    _expect_error(_doc(_entry(statement="A checkpoint should contain one action.")), 10, "level keyword")


def test_missing_spec_version() -> None:
    with pytest.raises(SpecFormatError, match="Spec version"):
        parse_spec_version("# Title\n\nNo version here.\n")


def test_render_rejects_duplicates() -> None:
    (req,) = parse_requirements(_doc(_entry()))
    with pytest.raises(SpecFormatError, match="duplicate"):
        render_requirements_json([req, req], spec_version="1.0.0")


def test_load_rejects_malformed_ids(tmp_path: Path) -> None:
    (req,) = parse_requirements(_doc(_entry()))
    document = json.loads(render_requirements_json([req], spec_version="1.0.0"))
    document["requirements"][0]["id"] = "CKPT-V2-1"
    path = tmp_path / "requirements.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(SpecFormatError, match="malformed"):
        load_requirements(path)
