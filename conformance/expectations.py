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

Patterns match whole pytest node ids: ``*`` matches any characters (``/``, ``[`` and ``]``
included), ``?`` one character, and every other character only itself — ``[`` is *not* a character
class as in ``fnmatch``, so a node id pasted from a test report is an exact pattern. Every entry
needs a reason; with ``--strict-expectations`` an entry that matches no collected test is an error
(it would silently hide a regression after a rename) — unless the test functions it names were
collected but the implementation takes part in none of them (a writer entry, inherited by a reader-only
program, cannot apply). Matching happens before ``-k`` and ``--ckpt-shapes``
deselect, so narrowing a run keeps the check meaningful and never makes an entry stale; nor does a
``--fixtures-dir`` that leaves bundled fixtures out (an entry for one of them is not stale).

Where files come from (:func:`load_all`): ``conformance/expectations/`` for the bundled
implementations, then every ``--expectations FILE|DIR`` in order — a file for an implementation
replaces the earlier one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

from spec.schemas import validator

DEFAULT_DIR = Path(str(resources.files("conformance") / "expectations"))
_KINDS: tuple[Literal["skip", "xfail"], ...] = ("skip", "xfail")


@dataclass(frozen=True)
class Entry:
    kind: Literal["skip", "xfail"]
    reason: str
    patterns: tuple[str, ...]
    issue: str | None = None

    def matches(self, nodeid: str) -> bool:
        return any(glob(p).match(nodeid) for p in self.patterns)


@cache
def glob(pattern: str) -> re.Pattern[str]:
    """The node ids ``pattern`` matches: ``*`` any characters, ``?`` one, everything else literally."""
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts) + r"\Z", re.DOTALL)


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


def load_all(sources: list[Path], names: list[str]) -> dict[str, Expectations]:
    """The expectations of the implementations ``names``: from each source in order (a directory of
    ``<implementation>.yaml`` files, or one such file), a later file replacing an earlier one."""
    out: dict[str, Expectations] = {}
    for source in sources:
        paths = [source / f"{name}.yaml" for name in names] if source.is_dir() else [source]
        if not source.exists():
            raise ValueError(f"{source}: no such expectations file or directory")
        for path in paths:
            if not path.is_file():
                continue
            expectations = load(path)
            if expectations.implementation in names:
                out[expectations.implementation] = expectations
    return out
