"""The requirement index: parse ``spec/checkpoints.md`` into requirements, write and read ``requirements.json``.

Spec: ``spec/checkpoints.md`` §2.3 Requirement entries, and ``spec/README.md``. Every requirement
of the markdown becomes a :class:`Requirement`; :func:`render_requirements_json` writes the
machine-readable index ``spec/requirements.json`` and :func:`load_requirements` reads it back.
No Spark, no pytest: the meta tests run anywhere.

A requirement entry in the markdown looks like this (``·`` is U+00B7)::

    <a id="CKPT-V2-001"></a>
    **CKPT-V2-001** · MUST · writer · upstream: [V2 Spec](https://github.com/delta-io/delta/blob/master/PROTOCOL.md#v2-spec)

    A V2 checkpoint MUST contain exactly one `checkpointMetadata` action.

| header field | accepted values |
|---|---|
| ID | ``CKPT-<AREA>-<NNN>``, AREA from :data:`AREAS` |
| level | a :class:`~spec.vocabulary.Level`: ``MUST``, ``SHOULD`` or ``MAY`` |
| roles | comma-separated :class:`~spec.vocabulary.Role` values |
| ``upstream:`` | ``none`` or ``[title](https://...)`` |
| ``features:`` (optional) | comma-separated Delta table-feature names |
| ``status:`` (optional) | ``tentative`` or ``withdrawn`` (absent means ``active``) |
| ``untestable:`` (optional) | one sentence saying why no black-box test can check it |

Usage:

1. :func:`parse_requirements` returns the requirements in document order and raises
   :class:`SpecFormatError` (with the 1-based line number) on any malformed entry;
2. :func:`render_requirements_json` gives the canonical JSON text (sorted keys, 2-space indent,
   trailing newline, requirements ordered by ID);
3. :func:`main_extract` regenerates ``requirements.json`` (``delta-ckpt spec extract``);
4. :func:`load_requirements` reads it as :class:`Requirement`\\ s, :func:`requirements_document`
   as the plain JSON document.

Statements inside fenced code blocks are ignored, so the spec (and this docstring) can show
example entries without creating requirements.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

from spec.vocabulary import Level, Role

#: The directory of the normative text and its data (``checkpoints.md``, ``requirements.json``, …).
SPEC_DIR: Final[Path] = Path(str(resources.files("spec")))  # package data: spec/*.md, *.json
CHECKPOINTS_MD: Final[Path] = SPEC_DIR / "checkpoints.md"
REQUIREMENTS_JSON: Final[Path] = SPEC_DIR / "requirements.json"

__all__ = [
    "AREAS",
    "CHECKPOINTS_MD",
    "LEVELS",
    "REQUIREMENTS_JSON",
    "ROLES",
    "SPEC_DIR",
    "STATUSES",
    "Requirement",
    "SpecFormatError",
    "load_requirements",
    "main_extract",
    "parse_requirements",
    "parse_spec_version",
    "render_requirements_json",
    "requirements_document",
]

#: The areas allowed in the middle part of a requirement ID.
AREAS: Final[frozenset[str]] = frozenset(
    {
        "NAME",
        "FEAT",
        "CONTENT",
        "SCHEMA",
        "STATS",
        "V1",
        "PART",
        "V2",
        "SIDE",
        "INC",
        "COMPAT",
        "LAST",
        "CKSUM",
        "READ",
        "WRITE",
        "CLEAN",
    }
)

#: Requirement levels (a prohibition is level MUST with "MUST NOT" in its text).
LEVELS: Final[frozenset[str]] = frozenset(Level)

#: The roles a requirement can bind, in canonical order (spec §2.1).
ROLES: Final[tuple[str, ...]] = tuple(Role)

#: Requirement statuses; ``active`` is implied when the header has no ``status:``.
STATUSES: Final[frozenset[str]] = frozenset({"active", "tentative", "withdrawn"})

#: Requirement IDs. The area part admits digits because the areas V1 and V2 contain one.
ID_PATTERN: Final[re.Pattern[str]] = re.compile(r"^CKPT-[A-Z][A-Z0-9]*-\d{3}$")
SEPARATOR: Final[str] = " \u00b7 "

_HEADER_START = re.compile(r"^\*\*(?P<id>[^*]+)\*\*")
_ANCHOR = re.compile(r'^<a id="(?P<id>[^"]+)"></a>\s*$')
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_UPSTREAM_LINK = re.compile(r"^\[(?P<title>[^\]]+)\]\((?P<url>https://[^)\s]+)\)$")
_FEATURE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_SPEC_VERSION = re.compile(r"^Spec version:\s*(?P<version>\d+\.\d+\.\d+)\s*$", re.MULTILINE)
_OPTIONAL_KEYS: Final[tuple[str, ...]] = ("features", "status", "untestable")


class SpecFormatError(ValueError):
    """A requirement entry of the spec markdown is malformed."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


@dataclass(frozen=True)
class Requirement:
    """One normative statement of ``spec/checkpoints.md``."""

    id: str
    area: str
    number: int
    level: Level
    roles: tuple[Role, ...]
    #: ``(title, url)`` of the PROTOCOL.md section refined, or ``None`` for ``upstream: none``.
    upstream: tuple[str, str] | None
    features: tuple[str, ...]
    status: str
    #: Why no black-box test can check the requirement, or ``None`` when it is testable.
    untestable: str | None
    #: Text of the nearest heading above the requirement.
    section: str
    #: The HTML anchor id of the entry (``spec/checkpoints.md#<anchor>``).
    anchor: str
    #: The normative statement, with its line breaks folded into single spaces.
    text: str

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored in ``requirements.json`` for this requirement."""
        return {
            "id": self.id,
            "area": self.area,
            "number": self.number,
            "level": self.level,
            "roles": list(self.roles),
            "upstream": None
            if self.upstream is None
            else {"title": self.upstream[0], "url": self.upstream[1]},
            "features": list(self.features),
            "status": self.status,
            "untestable": self.untestable,
            "section": self.section,
            "anchor": self.anchor,
            "text": self.text,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Requirement:
        """Builds a requirement from one entry of ``requirements.json``."""
        upstream_obj = obj["upstream"]
        upstream = None if upstream_obj is None else (str(upstream_obj["title"]), str(upstream_obj["url"]))
        untestable = obj["untestable"]
        return cls(
            id=str(obj["id"]),
            area=str(obj["area"]),
            number=int(obj["number"]),
            level=Level(obj["level"]),
            roles=tuple(Role(r) for r in obj["roles"]),
            upstream=upstream,
            features=tuple(str(f) for f in obj["features"]),
            status=str(obj["status"]),
            untestable=None if untestable is None else str(untestable),
            section=str(obj["section"]),
            anchor=str(obj["anchor"]),
            text=str(obj["text"]),
        )


def parse_spec_version(markdown_text: str) -> str:
    """The ``X.Y.Z`` of the first ``Spec version: X.Y.Z`` line."""
    match = _SPEC_VERSION.search(markdown_text)
    if match is None:
        raise SpecFormatError("no 'Spec version: X.Y.Z' line found")
    return match.group("version")


def _split_list(value: str, what: str, line: int) -> tuple[str, ...]:
    items = tuple(item.strip() for item in value.split(","))
    if not items or any(not item for item in items):
        raise SpecFormatError(f"empty entry in {what} list {value!r}", line)
    if len(set(items)) != len(items):
        raise SpecFormatError(f"duplicate entry in {what} list {value!r}", line)
    return items


def _parse_header(header: str, line: int) -> dict[str, Any]:
    """Parses a ``**ID** · LEVEL · roles · upstream: ...`` line into its fields."""
    fields = header.split(SEPARATOR)
    if len(fields) < 4:
        raise SpecFormatError(
            "requirement header needs at least '**ID** · LEVEL · roles · upstream: ...' "
            "separated by ' \u00b7 '",
            line,
        )
    start = _HEADER_START.match(fields[0])
    if start is None or start.group(0) != fields[0]:
        raise SpecFormatError(f"requirement header must start with the bold ID, got {fields[0]!r}", line)
    req_id = start.group("id")
    if ID_PATTERN.match(req_id) is None:
        raise SpecFormatError(f"requirement ID {req_id!r} does not match {ID_PATTERN.pattern}", line)
    _, area, number = req_id.split("-")
    if area not in AREAS:
        raise SpecFormatError(f"unknown area {area!r} in {req_id} (known: {', '.join(sorted(AREAS))})", line)

    level = fields[1]
    if level not in LEVELS:
        raise SpecFormatError(f"unknown level {level!r} in {req_id} (known: MUST, SHOULD, MAY)", line)

    roles = _split_list(fields[2], "roles", line)
    unknown_roles = [r for r in roles if r not in ROLES]
    if unknown_roles:
        raise SpecFormatError(
            f"unknown role(s) {unknown_roles} in {req_id} (known: {', '.join(ROLES)})", line
        )
    roles = tuple(r for r in Role if r in roles)

    upstream_field = fields[3]
    if not upstream_field.startswith("upstream: "):
        raise SpecFormatError(f"fourth header field of {req_id} must be 'upstream: ...'", line)
    upstream_value = upstream_field.removeprefix("upstream: ").strip()
    upstream: tuple[str, str] | None
    if upstream_value == "none":
        upstream = None
    else:
        link = _UPSTREAM_LINK.match(upstream_value)
        if link is None:
            raise SpecFormatError(
                f"upstream of {req_id} must be 'none' or '[title](https://...)', got {upstream_value!r}", line
            )
        upstream = (link.group("title"), link.group("url"))

    optional: dict[str, str] = {}
    for field in fields[4:]:
        key, sep, value = field.partition(": ")
        if not sep or key not in _OPTIONAL_KEYS:
            raise SpecFormatError(
                f"unexpected header field {field!r} in {req_id} (allowed: {', '.join(_OPTIONAL_KEYS)})", line
            )
        if key in optional:
            raise SpecFormatError(f"header field {key!r} given twice in {req_id}", line)
        if any(_OPTIONAL_KEYS.index(seen) > _OPTIONAL_KEYS.index(key) for seen in optional):
            raise SpecFormatError(
                f"header field {key!r} of {req_id} is out of order (order: {', '.join(_OPTIONAL_KEYS)})",
                line,
            )
        if not value.strip():
            raise SpecFormatError(f"header field {key!r} of {req_id} is empty", line)
        optional[key] = value.strip()

    features: tuple[str, ...] = ()
    if "features" in optional:
        features = _split_list(optional["features"], "features", line)
        bad = [f for f in features if _FEATURE_NAME.match(f) is None]
        if bad:
            raise SpecFormatError(f"malformed feature name(s) {bad} in {req_id}", line)
    status = optional.get("status", "active")
    if status not in STATUSES - {"active"} and "status" in optional:
        raise SpecFormatError(f"unknown status {status!r} in {req_id} (known: tentative, withdrawn)", line)

    return {
        "id": req_id,
        "area": area,
        "number": int(number),
        "level": level,
        "roles": roles,
        "upstream": upstream,
        "features": features,
        "status": status,
        "untestable": optional.get("untestable"),
    }


def parse_requirements(markdown_text: str) -> list[Requirement]:
    """Every requirement entry of the spec markdown, in document order.

    Raises :class:`SpecFormatError` on a malformed header, an anchor without a matching header (or
    the reverse), a duplicate ID, or a header not followed by a statement paragraph that uses the
    header's level keyword.
    """
    lines = markdown_text.splitlines()
    requirements: list[Requirement] = []
    seen: dict[str, int] = {}
    section = ""
    in_fence = False
    i = 0
    while i < len(lines):
        line_no = i + 1
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
            i += 1
            continue
        if in_fence:
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading is not None:
            section = heading.group("text").strip()
            i += 1
            continue

        anchor = _ANCHOR.match(line)
        if anchor is not None and anchor.group("id").startswith("CKPT-"):
            next_line = lines[i + 1] if i + 1 < len(lines) else ""
            start = _HEADER_START.match(next_line)
            if start is None:
                raise SpecFormatError(
                    f"anchor {anchor.group('id')!r} is not immediately followed by its requirement header",
                    line_no,
                )
            if start.group("id") != anchor.group("id"):
                raise SpecFormatError(
                    f"anchor {anchor.group('id')!r} does not match the header ID {start.group('id')!r}",
                    line_no + 1,
                )
            i += 1
            continue

        if line.startswith("**CKPT-") or (_HEADER_START.match(line) and SEPARATOR in line):
            header_line_no = line_no
            fields = _parse_header(line.rstrip(), header_line_no)
            req_id = str(fields["id"])
            previous = lines[i - 1] if i > 0 else ""
            prev_anchor = _ANCHOR.match(previous)
            if prev_anchor is None or prev_anchor.group("id") != req_id:
                raise SpecFormatError(
                    f'requirement {req_id} must be preceded by the line <a id="{req_id}"></a>', header_line_no
                )
            if req_id in seen:
                raise SpecFormatError(
                    f"duplicate requirement ID {req_id} (first defined on line {seen[req_id]})",
                    header_line_no,
                )
            seen[req_id] = header_line_no

            j = i + 1
            if j >= len(lines) or lines[j].strip():
                raise SpecFormatError(
                    f"requirement {req_id}: the header must be followed by a blank line and the statement",
                    header_line_no,
                )
            j += 1
            paragraph: list[str] = []
            while j < len(lines) and lines[j].strip():
                paragraph.append(lines[j].strip())
                j += 1
            if not paragraph:
                raise SpecFormatError(f"requirement {req_id} has no statement paragraph", header_line_no)
            first = paragraph[0]
            if (
                first.startswith(("#", "<a id=", "**CKPT-", ">", "|", "```", "~~~", "- ", "* "))
                or re.match(r"^\d+\. ", first) is not None
            ):
                raise SpecFormatError(
                    f"requirement {req_id}: expected a statement paragraph after the header, got {first!r}",
                    header_line_no + 2,
                )
            text = " ".join(paragraph)
            if re.search(rf"\b{fields['level']}\b", text) is None:
                raise SpecFormatError(
                    f"requirement {req_id}: the statement does not use its level keyword {fields['level']}",
                    header_line_no + 2,
                )
            requirements.append(
                Requirement(
                    id=req_id,
                    area=str(fields["area"]),
                    number=int(fields["number"]),
                    level=Level(fields["level"]),
                    roles=tuple(fields["roles"]),
                    upstream=fields["upstream"],
                    features=tuple(fields["features"]),
                    status=str(fields["status"]),
                    untestable=fields["untestable"],
                    section=section,
                    anchor=req_id,
                    text=text,
                )
            )
            i = j
            continue
        i += 1
    if in_fence:
        raise SpecFormatError("unterminated fenced code block", len(lines))
    return requirements


def render_requirements_json(reqs: Iterable[Requirement], *, spec_version: str) -> str:
    """Renders the index deterministically: sorted keys, 2-space indent, trailing newline."""
    ordered = sorted(reqs, key=lambda r: r.id)
    ids = [r.id for r in ordered]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise SpecFormatError(f"duplicate requirement IDs: {', '.join(duplicates)}")
    document = {"spec_version": spec_version, "requirements": [r.to_json() for r in ordered]}
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load_requirements(path: Path = REQUIREMENTS_JSON) -> dict[str, Requirement]:
    """Reads ``requirements.json`` into a mapping from requirement ID to requirement."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict) or "requirements" not in document or "spec_version" not in document:
        raise SpecFormatError(f"{path}: expected an object with 'spec_version' and 'requirements'")
    result: dict[str, Requirement] = {}
    for entry in document["requirements"]:
        req = Requirement.from_json(entry)
        if ID_PATTERN.match(req.id) is None:
            raise SpecFormatError(f"{path}: malformed requirement ID {req.id!r}")
        if req.id in result:
            raise SpecFormatError(f"{path}: duplicate requirement ID {req.id}")
        result[req.id] = req
    return result


def extract(spec_dir: Path) -> str:
    """Parses ``spec_dir/checkpoints.md`` and returns the text of ``requirements.json``."""
    markdown = (spec_dir / "checkpoints.md").read_text(encoding="utf-8")
    return render_requirements_json(parse_requirements(markdown), spec_version=parse_spec_version(markdown))


def main_extract(spec_dir: Path) -> int:
    """Regenerates ``spec_dir/requirements.json`` from ``spec_dir/checkpoints.md``; returns 0."""
    (spec_dir / "requirements.json").write_text(extract(spec_dir), encoding="utf-8")
    return 0


def requirements_document(path: Path = REQUIREMENTS_JSON) -> dict[str, Any]:
    """The plain JSON document of ``requirements.json`` (``spec_version`` and ``requirements``)."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


if __name__ == "__main__":
    raise SystemExit(main_extract(SPEC_DIR))
