"""Tests quote the rules they prove, word for word.

House style (``spec/README.md``): a test that cites a requirement with
``@pytest.mark.requirement(ID, …)`` quotes at least one of those rules in its docstring::

    Spec: CKPT-V2-003
    "A V2-spec checkpoint MUST contain exactly one `checkpointMetadata` action."

A quote may leave parts out with ``…``; the parts it keeps must appear in the rule's text in
``spec/requirements.json`` in the same order (whitespace, backticks and the rule links of the
markdown are ignored). A quote block is either one ``"…"`` string or ``>``-prefixed lines, and
follows a ``Spec:`` line naming exactly one ID. So a rule reworded in the spec makes its tests fail
here until their quotes follow.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST_FILES = sorted([*ROOT.glob("tests/**/test_*.py"), *ROOT.glob("conformance/suite/test_*.py")])
_SPEC_LINE = re.compile(r"^Spec: (CKPT-[A-Z0-9]+-\d{3})\b[^\n]*$", re.M)
_LINK = re.compile(r"\[(CKPT-[A-Z0-9]+-\d{3})\]\(#CKPT-[A-Z0-9]+-\d{3}\)")


def _normal(text: str) -> str:
    text = _LINK.sub(r"\1", text).replace("`", "")
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True)
class Quote:
    where: str
    rule: str
    text: str


@dataclass(frozen=True)
class CitingTest:
    where: str
    rules: tuple[str, ...]
    quotes: tuple[Quote, ...]


def _quote_after(doc: str, end: int) -> str | None:
    """The ``"…"`` string or ``>`` block that starts on the line after a ``Spec:`` line, if any."""
    rest = doc[end:].lstrip("\n")
    if rest.startswith('"'):
        close = re.search(r'"\s*(?:\n\s*\n|\n(?=Spec:)|\n(?=[^\n]*$)|$)', rest[1:])
        return rest[1 : close.start() + 1] if close else None
    lines = []
    for line in rest.splitlines():
        if not line.startswith(">"):
            break
        lines.append(line[1:])
    return "\n".join(lines) if lines else None


def _requirement_ids(node: ast.FunctionDef) -> tuple[str, ...]:
    out: list[str] = []
    for deco in node.decorator_list:
        if (
            isinstance(deco, ast.Call)
            and isinstance(deco.func, ast.Attribute)
            and deco.func.attr == "requirement"
        ):
            out += [a.value for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return tuple(out)


def _citing_tests() -> list[CitingTest]:
    out = []
    for path in TEST_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test"):
                continue
            rules = _requirement_ids(node)
            if not rules:
                continue
            where = f"{path.relative_to(ROOT).as_posix()}::{node.name}"
            doc = ast.get_docstring(node) or ""
            quotes = []
            for match in _SPEC_LINE.finditer(doc):
                text = _quote_after(doc, match.end())
                if text is not None:
                    quotes.append(Quote(where, match.group(1), text))
            out.append(CitingTest(where, rules, tuple(quotes)))
    return out


CITING = _citing_tests()
QUOTES = [q for t in CITING for q in t.quotes]
SPEC_TEXT = {
    r["id"]: _normal(r["text"])
    for r in json.loads((ROOT / "spec" / "requirements.json").read_text())["requirements"]
}


def test_the_scan_finds_the_suite() -> None:
    """The scan sees the citing tests of both suites (else the checks below would pass vacuously)."""
    files = {t.where.split("::")[0].split("/")[0] for t in CITING}
    assert files == {"tests", "conformance"}, f"citing tests found only under {sorted(files)}"
    assert len(QUOTES) >= 100, f"only {len(QUOTES)} quotes found in {len(TEST_FILES)} test files"


@pytest.mark.parametrize("test", CITING, ids=lambda t: t.where)
def test_every_citing_test_quotes_a_rule_it_cites(test: CitingTest) -> None:
    """A test with a requirement marker quotes at least one of the rules it cites."""
    quoted = {q.rule for q in test.quotes}
    assert quoted & set(test.rules), (
        f"{test.where}: cites {list(test.rules)} but quotes {sorted(quoted) or 'no rule'} "
        "(add 'Spec: ID' and the rule's words to the docstring)"
    )


@pytest.mark.parametrize("quote", QUOTES, ids=lambda q: f"{q.where}-{q.rule}")
def test_quote_matches_the_spec(quote: Quote) -> None:
    """Each quote's kept parts appear, in order, in the text of the rule it names."""
    assert quote.rule in SPEC_TEXT, (
        f"{quote.where}: quotes {quote.rule}, which is not in spec/requirements.json"
    )
    rule = SPEC_TEXT[quote.rule]
    position = 0
    for part in (p.strip(" .") for p in re.split(r"…|\.\.\.", _normal(quote.text))):
        if not part:
            continue
        found = rule.find(part, position)
        assert found >= 0, (
            f"{quote.where}: the quote of {quote.rule} does not match the spec from {part[:80]!r}\n"
            f"  spec: {rule}"
        )
        position = found + len(part)
