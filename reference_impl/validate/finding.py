"""One finding of ``delta-ckpt validate``, and the report that collects them.

Spec: ``spec/checkpoints.md`` §2.3 Requirement entries (rule IDs and levels). A finding names the
rule it breaks; its level (MUST, SHOULD, MAY) is the rule's own, looked up in
``spec/requirements.json`` through :mod:`spec.requirements`, never chosen by a check. The JSON
form of a report is described by ``spec/schemas/validate_report.schema.json``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from spec.error_codes import ErrorCode
from spec.requirements import Requirement, load_requirements
from spec.vocabulary import Level

#: The areas of the checks, in report order (:mod:`reference_impl.validate.registry`).
Area = Literal["NAME", "LAST", "SCHEMA", "CONTENT", "SIDE", "MULTI", "LOG", "STATE"]
AREAS: tuple[Area, ...] = ("NAME", "LAST", "SCHEMA", "CONTENT", "SIDE", "MULTI", "LOG", "STATE")

#: Exit statuses of ``delta-ckpt validate`` (2, bad input, is the CLI's error convention).
EXIT_CLEAN = 0
EXIT_MUST_VIOLATED = 1


@cache
def _requirements() -> dict[str, Requirement]:
    return load_requirements()


def level_of(rule: str) -> Level:
    """The level of ``rule`` in ``spec/requirements.json`` (a ``KeyError`` for an unknown rule: a bug)."""
    return _requirements()[rule].level


@dataclass(frozen=True)
class Finding:
    """A rule a file of the table breaks: ``file`` is relative to the table root (``_delta_log/…``).

    ``seen`` is the value found (as text); ``code`` is the error code a reader reports for the
    same problem, when there is one (§21).
    """

    area: Area
    rule: str
    file: str
    seen: str
    message: str
    code: ErrorCode | None = None

    @property
    def level(self) -> Level:
        return level_of(self.rule)

    def to_json(self) -> dict[str, Any]:
        return {
            "area": self.area,
            "rule": self.rule,
            "level": str(self.level),
            "file": self.file,
            "seen": self.seen,
            "message": self.message,
            "code": str(self.code) if self.code else None,
        }


@dataclass
class Report:
    """Every finding of one run, the checks that ran and what they looked at."""

    table: str
    version: int | None = None  # only the checkpoints of this version were checked (None: all)
    findings: list[Finding] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)

    def sorted_findings(self) -> list[Finding]:
        return sorted(
            set(self.findings), key=lambda f: (AREAS.index(f.area), f.file, f.rule, f.seen, f.message)
        )

    def counts(self) -> dict[str, int]:
        seen = Counter(str(f.level) for f in set(self.findings))
        return {str(level): seen.get(str(level), 0) for level in Level}

    @property
    def exit_status(self) -> int:
        """1 when any MUST rule is broken; 0 when the table is clean or has only SHOULD/MAY findings."""
        return EXIT_MUST_VIOLATED if self.counts()[Level.MUST] else EXIT_CLEAN

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "version": self.version,
            "ok": self.exit_status == EXIT_CLEAN,
            "exitStatus": self.exit_status,
            "counts": self.counts(),
            "checked": dict(self.checked),
            "checks": list(self.checks),
            "skipped": list(self.skipped),
            "findings": [f.to_json() for f in self.sorted_findings()],
        }
