"""Which tests prove which requirement: ``delta-ckpt spec coverage``.

Spec: ``spec/README.md`` (every MUST requirement needs a test or a written ``untestable`` reason).

Coverage is computed statically, without running or even collecting tests:

* every ``@pytest.mark.requirement("CKPT-…", …)`` on a test function (or in a module's
  ``pytestmark``) under ``tests/`` and ``conformance/suite/``;
* every fixture's ``requirements`` in ``fixtures/**/fixture.json`` — those are proven by
  ``conformance/suite/test_reader_fixtures.py``, which cites them at collection time.
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The source checkout (coverage reads the test sources, so it needs one).
ROOT = Path(__file__).resolve().parent.parent
#: Where tests live, relative to the checkout.
TEST_DIRS: tuple[str, ...] = ("tests", "conformance/suite")


def _requirement_args(node: ast.expr) -> list[str]:
    """String args of ``pytest.mark.requirement(...)`` (or ``mark.requirement``) calls in ``node``."""
    out: list[str] = []
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "requirement"
        ):
            out += [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return out


def markers_in_file(path: Path) -> dict[str, list[str]]:
    """``{test name: [requirement ids]}`` for one test module (module ``pytestmark`` applies to all)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    module_level: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets
        ):
            module_level += _requirement_args(stmt.value)
    out: dict[str, list[str]] = {}

    def visit(body: Iterable[ast.stmt], prefix: str, inherited: list[str]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.ClassDef):
                own = [r for d in stmt.decorator_list for r in _requirement_args(d)]
                visit(stmt.body, f"{prefix}{stmt.name}::", inherited + own)
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name.startswith("test"):
                ids = inherited + [r for d in stmt.decorator_list for r in _requirement_args(d)]
                if ids:
                    out[f"{prefix}{stmt.name}"] = ids

    visit(tree.body, "", module_level)
    return out


@dataclass
class Coverage:
    requirements: dict[str, dict[str, Any]]
    tests: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    unknown: list[str] = field(default_factory=list)  # "test: ID" for IDs not in the spec
    withdrawn: list[str] = field(default_factory=list)  # "test: ID" for IDs withdrawn from the spec

    def status(self, req_id: str) -> str:
        req = self.requirements[req_id]
        if req.get("status") == "withdrawn":  # kept only to reserve its ID: nothing to cover
            return "withdrawn"
        if self.tests.get(req_id):
            return "tested"
        if req.get("untestable"):
            return "untestable"
        return "uncovered"

    def cite(self, req_id: str, test: str, where: str | None = None) -> None:
        """Record that ``test`` (declared in ``where``, default the test itself) cites ``req_id``."""
        req = self.requirements.get(req_id)
        if req is None:
            self.unknown.append(f"{where or test}: {req_id}")
        elif req.get("status") == "withdrawn":
            self.withdrawn.append(f"{where or test}: {req_id}")
        else:
            self.tests[req_id].append(test)

    def uncovered_musts(self) -> list[str]:
        return [
            r
            for r, req in self.requirements.items()
            if req["level"] == "MUST" and req.get("status") == "active" and self.status(r) == "uncovered"
        ]

    def summary(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for req_id, req in self.requirements.items():
            out[req["level"]][self.status(req_id)] += 1
            out[f"area {req['area']}"][self.status(req_id)] += 1
        return {k: dict(v) for k, v in out.items()}


def compute(root: Path = ROOT) -> Coverage:
    data = json.loads((root / "spec" / "requirements.json").read_text())
    cov = Coverage({r["id"]: r for r in data["requirements"]})
    for directory in (root / d for d in TEST_DIRS):
        for path in sorted(directory.rglob("test_*.py")):
            rel = path.relative_to(root).as_posix()
            for test, ids in markers_in_file(path).items():
                for req in ids:
                    cov.cite(req, f"{rel}::{test}")
    for descriptor in sorted((root / "fixtures").rglob("fixture.json")):
        fixture = json.loads(descriptor.read_text())
        rel = descriptor.parent.relative_to(root).as_posix()
        for req in fixture["requirements"]:
            cov.cite(
                req,
                f"conformance/suite/test_reader_fixtures.py::test_reader_fixture[{rel}]",
                f"{rel}/fixture.json",
            )
    return cov
