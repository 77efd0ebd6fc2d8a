"""Per-implementation expectation files: tests an implementation cannot run, and tests it is known to fail.

``conformance/expectations/<implementation>.yaml`` (schema: ``spec/schemas/expectations.schema.json``)::

    implementation: deltalake
    skip:                                   # cannot run (harness limitation) -> reported "n.a."
      - reason: "deltalake has no API to report tombstones"
        tests: ["*test_cross*[*->deltalake*"]
    xfail:                                  # runs and must fail -> strict: a pass fails the run
      - reason: "errors on a _last_checkpoint ahead of the log"
        issue: "https://github.com/delta-io/delta-rs/issues/NNNN"
        tests: ["*test_reader_fixture[deltalake|valid/hint_ahead_of_log|*"]

``inherits: <name>`` prepends the entries of ``<name>.yaml`` (two adapters of one implementation).
A file applies only to tests that involve its implementation, so patterns need not repeat its name.
Patterns are ``fnmatch`` patterns over pytest node ids. Every entry needs a reason; an entry that
matches no collected test is an error (it would silently hide a regression after a rename).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from spec.schemas import validator

DEFAULT_DIR = Path(__file__).with_name("expectations")
_KINDS: tuple[Literal["skip", "xfail"], ...] = ("skip", "xfail")


@dataclass(frozen=True)
class Entry:
    kind: Literal["skip", "xfail"]
    reason: str
    patterns: tuple[str, ...]
    issue: str | None = None

    def matches(self, nodeid: str) -> bool:
        return any(fnmatch.fnmatchcase(nodeid, p) for p in self.patterns)


@dataclass
class Expectations:
    implementation: str
    entries: list[Entry] = field(default_factory=list)
    used: set[int] = field(default_factory=set)

    def match(self, nodeid: str) -> Entry | None:
        for index, entry in enumerate(self.entries):
            if entry.matches(nodeid):
                self.used.add(index)
                return entry
        return None

    def unused(self) -> list[Entry]:
        return [e for i, e in enumerate(self.entries) if i not in self.used]


def load(path: Path) -> Expectations:
    data: dict[str, Any] = yaml.safe_load(path.read_text()) or {}
    errors = sorted(validator("expectations.schema.json").iter_errors(data), key=lambda e: list(e.path))
    if errors:
        raise ValueError(f"{path}: {errors[0].message} at {'/'.join(map(str, errors[0].path))}")
    entries = [
        Entry(kind, item["reason"], tuple(item["tests"]), item.get("issue"))
        for kind in _KINDS
        for item in data.get(kind, [])
    ]
    if data.get("inherits"):
        # Another adapter of the same implementation (e.g. deltalake through the subprocess protocol).
        entries = load(path.with_name(f"{data['inherits']}.yaml")).entries + entries
    return Expectations(data["implementation"], entries)


def load_all(directory: Path, names: list[str]) -> dict[str, Expectations]:
    out = {}
    for name in names:
        path = directory / f"{name}.yaml"
        if path.is_file():
            out[name] = load(path)
    return out
