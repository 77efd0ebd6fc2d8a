"""What one test result says about each requirement it cites and each implementation it scores.

Spec: ``conformance/README.md`` "Reading the matrix". A test result becomes one *score* per
(requirement, implementation):

* the **verdict** keeps levels apart — a failed MUST, a failed SHOULD and a MAY not implemented are
  different outcomes — and never turns "not compared" or "not applicable" into "passed";
* a test that records sub-results with the ``check`` fixture (``check(requirement, condition,
  message)``) is judged per requirement: a failed SHOULD part does not fail the MUST it also cites;
* **roles**: a requirement scores only the implementation playing one of the requirement's roles in
  the test (a reader's failure on another writer's output scores the reader, not the writer; the
  writer is scored by the writer-output tests, which check its files independently). A test with no
  implementation in the requirement's roles scores every implementation it involves.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class Verdict(enum.StrEnum):
    """The outcome of one requirement for one implementation in one test (results.json ``scores``)."""

    PASSED = "passed"
    FAILED_MUST = "failed MUST"
    FAILED_SHOULD = "failed SHOULD"
    MAY_NOT_IMPLEMENTED = "MAY not implemented"
    KNOWN_FAILURE = "known failure"
    UNEXPECTED_PASS = "unexpected pass"
    NOT_APPLICABLE = "not applicable"
    NOT_COMPARED = "not compared"
    ERROR = "error"


#: Skip reasons that start with this mean the test ran but compared nothing (``pytest.skip``).
NOT_COMPARED_PREFIX = "not compared:"
_FAILED_AT = {
    "MUST": Verdict.FAILED_MUST,
    "SHOULD": Verdict.FAILED_SHOULD,
    "MAY": Verdict.MAY_NOT_IMPLEMENTED,
}
#: ``--fail-on`` thresholds: the verdicts that make the run's exit status non-zero.
FAILING: dict[str, frozenset[Verdict]] = {
    "must": frozenset({Verdict.FAILED_MUST, Verdict.UNEXPECTED_PASS, Verdict.ERROR}),
    "should": frozenset({Verdict.FAILED_MUST, Verdict.FAILED_SHOULD, Verdict.UNEXPECTED_PASS, Verdict.ERROR}),
    "never": frozenset(),
}


@dataclass(frozen=True)
class Check:
    """One sub-result of a test, under one of the requirements it cites."""

    requirement: str
    passed: bool
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"requirement": self.requirement, "passed": self.passed, "message": self.message}


def verdict(outcome: str, level: str, message: str = "") -> Verdict:
    """The verdict of a requirement of ``level`` whose part of the test had ``outcome`` (pytest's)."""
    if outcome == "passed":
        return Verdict.PASSED
    if outcome == "failed":
        return _FAILED_AT.get(level, Verdict.FAILED_MUST)
    if outcome == "xfailed":
        return Verdict.KNOWN_FAILURE
    if outcome == "xpassed":
        return Verdict.UNEXPECTED_PASS
    if outcome == "not compared":
        return Verdict.NOT_COMPARED
    if outcome == "skipped":
        compared = NOT_COMPARED_PREFIX not in message
        return Verdict.NOT_APPLICABLE if compared else Verdict.NOT_COMPARED
    return Verdict.ERROR


def requirement_outcome(requirement: str, outcome: str, checks: Sequence[Check], by_checks: bool) -> str:
    """The outcome of one requirement's part of a test (pytest's outcome, or ``not compared``).

    A test that records checks is judged per requirement: when it failed only because checks failed
    (``by_checks``; as a known failure too), a requirement fails only if one of its own checks did;
    a requirement with no check in such a test was not compared, never passed.
    """
    if not checks:
        return outcome
    mine = [c for c in checks if c.requirement == requirement]
    if not mine and outcome in ("passed", "failed", "xfailed") and (outcome == "passed" or by_checks):
        return "not compared"
    if by_checks and outcome in ("failed", "xfailed"):
        return outcome if any(not c.passed for c in mine) else "passed"
    return outcome


def scored(
    roles_in_test: Mapping[str, str], requirement_roles: Sequence[str], only: Sequence[str] | None = None
) -> list[str]:
    """The implementations a requirement scores in one test.

    ``roles_in_test`` maps a role (``writer``, ``reader``, ``cleaner``) to the implementation playing
    it. A requirement scores the implementations playing one of its roles — or, if none does, every
    implementation in the test. ``only`` (the test's ``scores`` marker) limits scoring to those roles,
    with no fallback: the cross tests score only the reader, since one reader's failure on a writer's
    output says nothing certain about the writer (the writer-output tests judge it independently).
    """
    if only is not None:
        return [impl for role, impl in roles_in_test.items() if role in only and role in requirement_roles]
    playing = [impl for role, impl in roles_in_test.items() if role in requirement_roles]
    return list(dict.fromkeys(playing or roles_in_test.values()))
