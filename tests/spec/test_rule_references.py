"""Every requirement ID the code cites in an error (``rule="CKPT-…"``) exists in the spec."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_RULE = re.compile(r'rule="(CKPT-[A-Z0-9]+-\d{3})"')


def _cited() -> list[tuple[str, int, str]]:
    out = []
    for path in sorted((ROOT / "reference_impl").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            out += [(path.relative_to(ROOT).as_posix(), number, m) for m in _RULE.findall(line)]
    return out


@pytest.mark.requirement("CKPT-READ-013")
def test_error_rule_ids_exist_in_the_spec() -> None:
    """Errors name the rule they enforce; each named rule is a real requirement.

    Spec: CKPT-READ-013
    > A reader that does not or cannot fall back from an invalid or unreadable checkpoint MUST fail with the
    > error code of the problem.
    """
    known = {r["id"] for r in json.loads((ROOT / "spec" / "requirements.json").read_text())["requirements"]}
    cited = _cited()
    assert cited, "no rule= citations found in reference_impl/"
    unknown = [f"{path}:{line}: {rule}" for path, line, rule in cited if rule not in known]
    assert not unknown, "rule IDs cited by errors but missing from spec/requirements.json:\n" + "\n".join(
        unknown
    )
