"""The spec's version history: the requirement index of each released version, and the ID policy.

Spec: ``spec/README.md`` "Requirement IDs" (IDs are stable; a change of what conforms withdraws
the old ID and adds a new one) and ``spec/CHANGELOG.md``. Each released version's index is frozen
in ``spec/releases/<version>.json`` as a :class:`ReleaseRecord`: per requirement its level, roles,
status and a SHA-256 of its statement. :func:`policy_violations` compares each version with the
next (the last released one with the current ``requirements.json``) and names every break of the
policy; ``tests/spec/test_id_policy.py`` runs it on every test run.

What it checks, from one version to the next:

1. no ID disappears;
2. an active or tentative requirement keeps its level and roles, unless it is withdrawn;
3. a withdrawn requirement stays withdrawn, with its statement unchanged;
4. every added ID, every newly withdrawn ID, every status change and every reworded statement
   is named in the changelog section of the later version (``## X.Y.Z``) — rewording is allowed,
   but a reader of the changelog must be able to judge it;
5. the current version is not older than the newest release, and equals it only when nothing
   changed since.

Usage::

    records = load_releases()                        # oldest first
    problems = policy_violations(records, current_record(), load_changelog())
    main_release()                                   # freeze the current version: delta-ckpt spec release
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from spec.requirements import SPEC_DIR, Requirement, load_requirements, requirements_document

__all__ = [
    "CHANGELOG_MD",
    "RELEASES_DIR",
    "ReleaseRecord",
    "RequirementRecord",
    "current_record",
    "load_changelog",
    "load_releases",
    "main_release",
    "parse_changelog",
    "policy_violations",
    "record_of",
]

RELEASES_DIR: Final[Path] = SPEC_DIR / "releases"
CHANGELOG_MD: Final[Path] = SPEC_DIR / "CHANGELOG.md"

_SECTION = re.compile(r"^## (?P<version>\d+\.\d+\.\d+)\b", re.MULTILINE)
_ID = re.compile(r"CKPT-[A-Z][A-Z0-9]*-\d{3}")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class RequirementRecord:
    """What the ID policy fixes about one requirement of a version."""

    level: str
    roles: tuple[str, ...]
    status: str
    text_sha256: str

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "roles": list(self.roles),
            "status": self.status,
            "text_sha256": self.text_sha256,
        }


@dataclass(frozen=True)
class ReleaseRecord:
    """The requirement index of one spec version, reduced to what the ID policy compares."""

    spec_version: str
    requirements: Mapping[str, RequirementRecord]

    def to_text(self) -> str:
        document = {
            "spec_version": self.spec_version,
            "requirements": {rid: self.requirements[rid].to_json() for rid in sorted(self.requirements)},
        }
        return json.dumps(document, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> ReleaseRecord:
        reqs = {
            rid: RequirementRecord(
                str(r["level"]), tuple(r["roles"]), str(r["status"]), str(r["text_sha256"])
            )
            for rid, r in document["requirements"].items()
        }
        return cls(str(document["spec_version"]), reqs)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_of(spec_version: str, reqs: Iterable[Requirement]) -> ReleaseRecord:
    """The record of ``reqs`` as spec version ``spec_version``."""
    return ReleaseRecord(
        spec_version,
        {
            r.id: RequirementRecord(str(r.level), tuple(str(x) for x in r.roles), r.status, _sha256(r.text))
            for r in reqs
        },
    )


def current_record(spec_dir: Path = SPEC_DIR) -> ReleaseRecord:
    """The record of the current ``requirements.json``."""
    version = str(requirements_document(spec_dir / "requirements.json")["spec_version"])
    return record_of(version, load_requirements(spec_dir / "requirements.json").values())


def load_releases(releases_dir: Path = RELEASES_DIR) -> list[ReleaseRecord]:
    """Every frozen release record, oldest version first."""
    records = [
        ReleaseRecord.from_json(json.loads(p.read_text(encoding="utf-8")))
        for p in releases_dir.glob("*.json")
    ]
    return sorted(records, key=lambda r: _version_key(r.spec_version))


def parse_changelog(markdown: str) -> dict[str, frozenset[str]]:
    """The requirement IDs each ``## X.Y.Z`` section of the changelog names."""
    sections: dict[str, frozenset[str]] = {}
    matches = list(_SECTION.finditer(markdown))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(markdown)
        sections[match.group("version")] = frozenset(_ID.findall(markdown[match.end() : end]))
    return sections


def load_changelog(path: Path = CHANGELOG_MD) -> dict[str, frozenset[str]]:
    return parse_changelog(path.read_text(encoding="utf-8"))


def _step(old: ReleaseRecord, new: ReleaseRecord, changelog: Mapping[str, frozenset[str]]) -> list[str]:
    """The policy breaks from ``old`` to ``new`` (a later version)."""
    problems: list[str] = []
    where = f"{old.spec_version} -> {new.spec_version}"
    named = changelog.get(new.spec_version)
    must_name: list[tuple[str, str]] = []
    for rid, before in sorted(old.requirements.items()):
        after = new.requirements.get(rid)
        if after is None:
            problems.append(f"{where}: {rid} disappeared; an ID is never removed, it is withdrawn")
            continue
        if before.status == "withdrawn":
            if after.status != "withdrawn":
                problems.append(
                    f"{where}: {rid} was withdrawn and is now {after.status!r}; a withdrawn ID stays withdrawn"
                )
            if after.text_sha256 != before.text_sha256:
                problems.append(f"{where}: {rid} is withdrawn and its statement changed; it stays as it was")
            continue
        if after.status != "withdrawn" and (after.level, after.roles) != (before.level, before.roles):
            problems.append(
                f"{where}: {rid} changed from {before.level} {list(before.roles)} to {after.level} "
                f"{list(after.roles)}; a change of what conforms withdraws the ID and adds a new one"
            )
        if after.status != before.status:
            must_name.append((rid, f"status {before.status} -> {after.status}"))
        elif after.text_sha256 != before.text_sha256:
            must_name.append((rid, "statement reworded"))
    must_name += [(rid, "added") for rid in sorted(set(new.requirements) - set(old.requirements))]
    if must_name and named is None:
        problems.append(f"{where}: CHANGELOG.md has no '## {new.spec_version}' section for the changes")
    elif named is not None:
        problems += [
            f"{where}: {rid} ({why}) is not named in CHANGELOG.md's '## {new.spec_version}' section"
            for rid, why in must_name
            if rid not in named
        ]
    return problems


def policy_violations(
    releases: Sequence[ReleaseRecord], current: ReleaseRecord, changelog: Mapping[str, frozenset[str]]
) -> list[str]:
    """Every break of the ID policy across ``releases`` (oldest first) and then ``current``."""
    problems: list[str] = []
    for old, new in itertools.pairwise(releases):
        problems += _step(old, new, changelog)
    if not releases:
        return problems
    newest = releases[-1]
    if _version_key(current.spec_version) < _version_key(newest.spec_version):
        return [
            *problems,
            f"the spec version {current.spec_version} is older than the release {newest.spec_version}",
        ]
    if current.spec_version == newest.spec_version:
        if current != newest:
            changed = sorted(
                rid
                for rid in set(current.requirements) | set(newest.requirements)
                if current.requirements.get(rid) != newest.requirements.get(rid)
            )
            problems.append(
                f"requirements changed since release {newest.spec_version} ({', '.join(changed)}) "
                "but 'Spec version:' in checkpoints.md was not raised"
            )
        return problems
    return problems + _step(newest, current, changelog)


def main_release(spec_dir: Path = SPEC_DIR) -> int:
    """Freezes the current version as ``releases/<version>.json``; 2 if it breaks the policy or exists."""
    current = current_record(spec_dir)
    target = spec_dir / "releases" / f"{current.spec_version}.json"
    problems = policy_violations(
        load_releases(spec_dir / "releases"), current, load_changelog(spec_dir / "CHANGELOG.md")
    )
    if target.exists():
        problems.append(f"{target} exists: raise 'Spec version:' in checkpoints.md first")
    if problems:
        print("\n".join(f"error: {p}" for p in problems), file=sys.stderr)
        return 2
    target.write_text(current.to_text(), encoding="utf-8")
    print(f"wrote {target}")
    return 0
