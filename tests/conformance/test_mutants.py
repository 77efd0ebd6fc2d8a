"""Can the verdict be trusted? The suite fails broken implementations, at the rule they break.

A correct writer and a correct reader (``mutant_harness.py``, subprocess protocol, no JVM) pass the
suite; each mutant — the same program with one defect — must fail it, and the failed requirements
must be exactly the rules the defect breaks, at their level (MUST or SHOULD), with messages that
name the file and the value. One nested conformance run (``--pyargs conformance.suite…``, as a user
runs it) tests every writer profile on the ``tombstones`` shape (adds and removes) and every reader
on five golden tables; each test below reads its part of that run's ``results.json``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HARNESS = Path(__file__).with_name("mutant_harness.py")
#: What the nested run selects (``-k``): the writer-output tests but the one that writes again (a second
#: multi-part attempt), which no mutant here targets — the refusals (a version without a commit, a bad
#: delta.checkpointPolicy, an unknown writer feature, V2 without v2Checkpoint, multi-part with it) build
#: their own small table and run for every profile; and four golden tables — V2 with sidecars, time travel over a remove (versions 4 and 6, from
#: checkpoints 2 and 5), a dangling hint over four commits, a gap after the checkpoint.
SELECTION = (
    "(test_writer_output and not test_multipart_rewrite)"
    " or v2_uuid_json_sidecars or (time_travel_checkpoints and (v4 or v6)) or hint_dangling"
    " or invalid_gap_after_checkpoint"
)

MUST, SHOULD = "failed MUST", "failed SHOULD"
#: writer profile -> (the failed requirements with their verdicts, a value the failure messages show).
#: The correct profiles (v1, parts, v2) and a legal non-UUID sidecar name fail nothing.
WRITER_MUTANTS: dict[str, tuple[dict[str, str], str]] = {
    "v1": ({}, ""),
    "parts": ({}, ""),
    "v2": ({}, ""),
    "v2.sidecar-plain-name": ({}, ""),
    "v1.last-size": ({"CKPT-LAST-003": MUST}, "_last_checkpoint: size 7, files hold 6 actions"),
    "v1.last-size-in-bytes": ({"CKPT-LAST-004": MUST}, "_last_checkpoint: sizeInBytes "),
    "v1.last-bad-checksum": ({"CKPT-CKSUM-001": MUST}, "checksum "),
    "v1.last-no-checksum": ({"CKPT-LAST-010": SHOULD}, "_last_checkpoint has no checksum"),
    "v1.last-missing-version": ({"CKPT-LAST-002": MUST}, "_last_checkpoint: version 6 != 5"),
    "v1.duplicate-add": (
        {"CKPT-CONTENT-001": MUST, "CKPT-CONTENT-004": MUST, "CKPT-V1-001": MUST},
        "more than once",
    ),
    "v1.remove-as-add": (
        {"CKPT-CONTENT-001": MUST, "CKPT-CONTENT-004": MUST, "CKPT-CONTENT-006": MUST, "CKPT-V1-001": MUST},
        "files: expected 2, actual 3 (0 missing, 1 extra)",
    ),
    "v1.no-protocol": (
        {"CKPT-CONTENT-001": MUST, "CKPT-CONTENT-002": MUST},
        "0 protocol and 1 metaData actions in ['00000000000000000005.checkpoint.parquet']",
    ),
    "v1.no-metadata": (
        {"CKPT-CONTENT-001": MUST, "CKPT-CONTENT-002": MUST},
        "1 protocol and 0 metaData actions in ['00000000000000000005.checkpoint.parquet']",
    ),
    "v1.commit-info": ({"CKPT-CONTENT-010": MUST, "CKPT-V2-014": MUST}, "found ['commitInfo']"),
    "v1.data-change": ({"CKPT-CONTENT-011": SHOULD}, "dataChange not false for ['part-00000-"),
    "parts.wrong-part-count": (
        {"CKPT-NAME-002": MUST, "CKPT-LAST-002": MUST},
        "00000000000000000005.checkpoint.0000000002.0000000003.parquet",
    ),
    "parts.wrong-part": ({"CKPT-PART-002": MUST}, "(00000000000000000005.checkpoint.000000000"),
    "parts.differing-schemas": (
        {"CKPT-PART-010": SHOULD},
        "the schema of ['00000000000000000005.checkpoint.0000000002.0000000002.parquet'] differs",
    ),
    "parts.on-v2-table": ({"CKPT-FEAT-004": MUST, "CKPT-FEAT-005": MUST}, "on a table with v2Checkpoint"),
    "v1.last-fraction": ({"CKPT-CKSUM-003": SHOULD}, "numbers that are not integers: ['0.5']"),
    "v2.no-sidecar-action": (
        {
            "CKPT-CONTENT-001": MUST,
            "CKPT-CONTENT-004": MUST,
            "CKPT-CONTENT-006": MUST,
            "CKPT-LAST-003": MUST,
            "CKPT-LAST-004": MUST,
        },
        "files: expected 2, actual 0 (2 missing, 0 extra)",
    ),
    "v2.no-checkpoint-metadata": (
        {"CKPT-FEAT-001": MUST, "CKPT-V1-001": MUST},
        "has no checkpointMetadata",
    ),
    "v2.protocol-in-sidecar": ({"CKPT-SIDE-002": MUST, "CKPT-V2-003": MUST}, "holds ['protocol']"),
    "v2.sidecar-missing": (
        {
            "CKPT-SIDE-001": MUST,
            "CKPT-CONTENT-001": MUST,
            "CKPT-CONTENT-004": MUST,
            "CKPT-CONTENT-006": MUST,
        },
        ".parquet missing",
    ),
    "v2.sidecar-wrong-size": ({"CKPT-SIDE-004": MUST}, " bytes, action says "),
    "v2.sidecar-reserved-name": ({"CKPT-SIDE-011": MUST, "CKPT-V2-005": MUST}, "+1.parquet"),
    "v2.count-tag-off": ({"CKPT-INC-006": MUST}, "tag delta-ckpt.numAdds=3, file holds 2"),
    "v2.name-set-missing": ({"CKPT-INC-007": MUST}, ".parquet.names missing (tag 0:"),
    "v1.last-schema-short": ({"CKPT-LAST-005": MUST}, "checkpointSchema has fields ['add'], "),
    "v2.last-schema-on-json": ({"CKPT-LAST-005": MUST}, "checkpointSchema present, the top-level file "),
    "v1.latest-for-missing": ({"CKPT-WRITE-001": MUST}, "has no commit): the writer wrote a checkpoint"),
    "v1.any-policy": (
        {"CKPT-FEAT-009": MUST},
        "(delta.checkpointPolicy bogus): the writer wrote a checkpoint",
    ),
    "v2.any-protocol": (
        {"CKPT-FEAT-003": MUST},
        "(V2 asked, the protocol lacks v2Checkpoint): the writer wrote a checkpoint instead of refusing",
    ),
    "v2.commit-actions": (
        {"CKPT-CONTENT-013": MUST},
        "{'version': 3, 'tags': {'conformance.plantedInCommit': '3'}}",
    ),
    "v1.expired-kept": ({"CKPT-CONTENT-007": SHOULD}, "keep the tombstone of file:"),
    "v2.reuse-old": ({"CKPT-INC-004": MUST}, "written by the request of version 2"),
    "v2.late-refusal": (
        {"CKPT-FEAT-003": MUST},
        "(V2 asked, the protocol lacks v2Checkpoint): the table's files changed",
    ),
    "v2.stray-refusal": (
        {"CKPT-FEAT-003": MUST},
        "(V2 asked, the protocol lacks v2Checkpoint): the table's files changed: ['created: _checkpoint-scratch.tmp']",
    ),
}
#: reader mutation -> (the failed requirements of the golden tables it misreads, a fixture it misreads).
#: A fixture test scores every requirement its fixture cites.
_READ_STATE = {"CKPT-READ-001": MUST, "CKPT-READ-002": MUST, "CKPT-READ-004": SHOULD}
READER_MUTANTS: dict[str, tuple[dict[str, str], str]] = {
    "": ({}, ""),
    "ignores-sidecars": (
        {
            **_READ_STATE,
            "CKPT-SIDE-005": MUST,
            "CKPT-SIDE-012": MUST,
            "CKPT-V2-001": MUST,
            "CKPT-V2-007": MUST,
            "CKPT-LAST-007": MUST,
        },
        "valid/v2_uuid_json_sidecars (version 3)",
    ),
    "ignores-removes": (_READ_STATE, "valid/time_travel_checkpoints (version 6)"),
    "newest-commit-only": (
        {**_READ_STATE, "CKPT-READ-010": MUST, "CKPT-READ-016": MUST, "CKPT-READ-019": MUST},
        "valid/hint_dangling (version 6)",
    ),
    "ignores-gaps": ({"CKPT-READ-006": MUST}, "expected error LOG_GAP"),
    "trusts-hint": (
        {"CKPT-READ-010": MUST, "CKPT-READ-016": MUST, "CKPT-READ-019": MUST},
        "valid/hint_dangling (version 6)",
    ),
}


def _reader_name(mutation: str) -> str:
    return f"reader-{mutation or 'correct'}"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict[str, Any]]]:
    """One nested conformance run: every writer profile of the mutant writer, every mutant reader."""
    base = tmp_path_factory.mktemp("mutants")
    program = f"{sys.executable} {HARNESS}"
    readers = [f"--impl-cmd={_reader_name(m)}={program} reader {m}".rstrip() for m in READER_MUTANTS]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--basetemp", str(base / "tmp"),
         "--pyargs", "conformance.suite.test_writer_output", "conformance.suite.test_reader_fixtures",
         f"--impl-cmd=mutants={program} writer", *readers, "--ckpt-shapes", "tombstones",
         "-k", SELECTION, "--ckpt-results", str(base / "results.json")],
        cwd=base, env={**os.environ, "CI": "true"}, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    tail = "\n".join(done.stdout.splitlines()[-15:])
    assert done.returncode == 1, f"the run with mutants did not fail (exit {done.returncode}):\n{tail}"
    yield json.loads((base / "results.json").read_text())["results"]


def _verdicts(results: list[dict[str, Any]], role: str, name: str) -> tuple[dict[str, str], list[str], int]:
    """What the run said of one writer profile or reader: failed requirements -> worst verdict, the
    messages of its failed tests, and how many of its tests passed."""
    mine = [r for r in results if r.get(role) == name]
    failed: dict[str, str] = {}
    for r in mine:
        for s in r["scores"]:
            if s["verdict"] not in ("passed", "not compared", "not applicable"):
                assert s["verdict"] in (MUST, SHOULD), f"{r['nodeid']}: {s}"
                failed[s["requirement"]] = min(failed.get(s["requirement"], SHOULD), s["verdict"])
    messages = [r["message"] for r in mine if r["outcome"] == "failed"]
    return failed, messages, sum(r["outcome"] == "passed" for r in mine)


@pytest.mark.parametrize("profile", list(WRITER_MUTANTS))
def test_writer_mutant_fails_at_its_rule(results: list[dict[str, Any]], profile: str) -> None:
    """A writer mutant fails exactly the rules its defect breaks, at their level, and every failure
    message names the table and the value; the correct profiles pass every writer-output test."""
    expected, shows = WRITER_MUTANTS[profile]
    failed, messages, passed = _verdicts(results, "writer", f"mutants:{profile}")
    assert passed >= 10, f"mutants:{profile}: only {passed} writer-output tests passed"
    assert failed == expected, f"mutants:{profile}: failed {failed}, expected {expected}:\n" + "\n".join(
        messages
    )
    label = re.compile(rf"mutants:{re.escape(profile)} on (tombstones|/\S+/table) \(")  # the shape, or a
    # refusal's own table
    assert all(label.search(m) for m in messages), f"a message does not name the table: {messages}"
    assert not expected or any(shows in m for m in messages), f"no message shows {shows!r}: {messages}"


@pytest.mark.parametrize("mutation", list(READER_MUTANTS), ids=_reader_name)
def test_reader_mutant_fails_at_its_rule(results: list[dict[str, Any]], mutation: str) -> None:
    """A reader mutant fails the golden tables it misreads, under their rules and levels, with messages
    naming the fixture, the version and the value; the correct reader passes all of them."""
    expected, shows = READER_MUTANTS[mutation]
    name = _reader_name(mutation)
    failed, messages, passed = _verdicts(results, "reader", name)
    assert passed >= 1, f"{name}: no fixture test passed"
    assert failed == expected, f"{name}: failed {failed}, expected {expected}:\n" + "\n".join(messages)
    assert not expected or any(shows in m for m in messages), f"no message shows {shows!r}: {messages}"


def test_a_missing_sidecar_leaves_the_hints_counts_not_compared(results: list[dict[str, Any]]) -> None:
    """A referenced sidecar that is missing fails CKPT-SIDE-001; the hint's size, sizeInBytes and
    numOfAddFiles cannot be compared with files that are not there, so CKPT-LAST-003/-004 score
    "not compared" for that writer (they scored "failed MUST"), and CKPT-LAST-002 is still judged."""
    name = "mutants:v2.sidecar-missing"
    wanted = ("CKPT-LAST-002", "CKPT-LAST-003", "CKPT-LAST-004")
    scores = sorted(
        {(s["requirement"], s["verdict"]) for r in results if r.get("writer") == name for s in r["scores"]}
    )
    mine = [score for score in scores if score[0] in wanted]
    assert mine == [
        ("CKPT-LAST-002", "passed"),
        ("CKPT-LAST-003", "not compared"),
        ("CKPT-LAST-004", "not compared"),
    ], f"{name}: {mine}"


def test_the_correct_writer_uses_nothing_of_the_judge() -> None:
    """The correct writer (``mutant_harness.write_checkpoint`` and every function and table it reaches) uses
    no name the harness imports from ``conformance``: with the judge's own checksum or part placement, a
    bug in them would pass the correct writer and fail no mutant (it used both)."""
    tree = ast.parse(HARNESS.read_text())
    judges = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "conformance"
        for alias in node.names
    }
    defined: dict[str, ast.AST] = {}  # the module's functions and tables, by name
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defined[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined |= {t.id: node for t in targets if isinstance(t, ast.Name)}
    reached: set[str] = set()
    used: set[str] = set()
    todo = ["write_checkpoint"]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        names = {n.id for n in ast.walk(defined[name]) if isinstance(n, ast.Name)}
        used |= names & judges
        todo += sorted(names & set(defined))
    assert "_part_of" in reached and not used, (
        f"the correct writer ({sorted(reached)}) uses the judge's {sorted(used)}"
    )
