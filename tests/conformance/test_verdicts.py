"""An honest report: per-requirement sub-results, levels apart, roles, ``--fail-on``, exact-or-glob
expectation patterns. Nested pytest runs against the fake adapter program (no Spark)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.expectations import Entry
from conformance.plugin import _failing
from conformance.report import write_reports
from conformance.verdicts import Check, Verdict, requirement_outcome, scored, verdict

pytest_plugins = ["pytester"]

HARNESS = Path(__file__).with_name("fake_harness.py")
STATE = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "valid"
    / "v1_classic"
    / "expected"
    / "v4"
    / "table_state.json"
)
#: CKPT-LAST-009 is a MUST, CKPT-LAST-010 a SHOULD, CKPT-CKSUM-001 a MUST.
_MODULE = """
import pytest

@pytest.mark.requirement("CKPT-LAST-009", "CKPT-LAST-010", "CKPT-CKSUM-001")
def test_parts(reader, check):
    check("CKPT-LAST-009", True, "members in order")
    check("CKPT-LAST-010", False, "/t/_delta_log/_last_checkpoint: no checksum")
"""


@pytest.fixture
def parts_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FAKE_STATE", str(STATE))
    pytester.makepyfile(test_parts=_MODULE)

    def run(*extra: str) -> tuple[pytest.RunResult, dict[str, object]]:
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--impl-cmd", f"fake={sys.executable} {HARNESS}",
            "--ckpt-results", str(pytester.path / "results.json"), "--junitxml", str(pytester.path / "junit.xml"),
            *extra,
        )  # fmt: skip
        return result, json.loads((pytester.path / "results.json").read_text())

    return run


def test_a_failed_should_part_does_not_fail_the_must(parts_run, pytester: pytest.Pytester) -> None:  # type: ignore[no-untyped-def]
    """Each requirement is scored by its own checks; a requirement with no check was not compared;
    the default --fail-on must exits 0 on a SHOULD failure, --fail-on should does not."""
    result, data = parts_run("--fail-on", "must")
    assert result.ret == 0, result.stdout.str()
    (only,) = data["results"]
    assert (
        only["outcome"] == "failed"
        and "[CKPT-LAST-010] /t/_delta_log/_last_checkpoint: no checksum" in only["message"]
    )
    assert {(s["requirement"], s["implementation"], s["verdict"]) for s in only["scores"]} == {
        ("CKPT-LAST-009", "fake", "passed"),
        ("CKPT-LAST-010", "fake", "failed SHOULD"),
        ("CKPT-CKSUM-001", "fake", "not compared"),
    }
    assert (
        'name="score" value="CKPT-LAST-010 fake: failed SHOULD"' in (pytester.path / "junit.xml").read_text()
    )
    md, _ = write_reports(pytester.path / "results.json", pytester.path / "out")
    text = md.read_text()
    for req, cell in (
        ("CKPT-LAST-009", "✔ pass"),
        ("CKPT-LAST-010", "✘ SHOULD"),
        ("CKPT-CKSUM-001", "not compared"),
    ):
        assert any(
            line.startswith(f"| [{req}]") and line.endswith(f"| {cell} |") for line in text.splitlines()
        ), req
    assert "/t/_delta_log/_last_checkpoint: no checksum" in text
    result, data = parts_run("--fail-on", "should")
    assert result.ret == 1 and data["failOn"] == "should"


def test_requirement_outcome_and_roles() -> None:
    """The pure rules: checks decide per requirement; a requirement scores the implementation in its role."""
    checks = [Check("A", True, ""), Check("B", False, "b broke")]
    assert requirement_outcome("A", "failed", checks, by_checks=True) == "passed"
    assert requirement_outcome("B", "xfailed", checks, by_checks=True) == "xfailed"
    assert requirement_outcome("C", "failed", checks, by_checks=True) == "not compared"
    assert requirement_outcome("A", "failed", checks, by_checks=False) == "failed"  # an exception: all fail
    assert verdict("failed", "MAY") is Verdict.MAY_NOT_IMPLEMENTED
    assert verdict("skipped", "MUST", "not compared: nothing to compare") is Verdict.NOT_COMPARED
    assert verdict("skipped", "MUST", "n.a.: V1 only") is Verdict.NOT_APPLICABLE
    roles = {"writer": "w", "reader": "r"}
    assert scored(roles, ["reader"]) == ["r"], "a reader rule never scores the writer whose output it read"
    assert scored(roles, ["writer"]) == ["w"]
    assert scored({"cleaner": "c"}, ["writer"]) == ["c"], "no implementation in the role: all involved"
    assert scored(roles, ["writer"], only=["reader"]) == [], "a cross test never scores the writer"
    assert scored(roles, ["reader"], only=["reader"]) == ["r"]


def test_fail_on_thresholds_pick_the_failing_results() -> None:
    """``--fail-on must`` fails the run on a failed MUST, a known failure that passes, an error or a failed
    test that cites no requirement; ``should`` also on a failed SHOULD; ``never`` on nothing. A MAY not
    implemented never fails it."""

    def result(nodeid: str, outcome: str, *verdicts: Verdict) -> dict[str, object]:
        scores = [
            {"requirement": "CKPT-X-001", "implementation": "fake", "verdict": v.value} for v in verdicts
        ]
        return {"nodeid": nodeid, "outcome": outcome, "scores": scores}

    results = [
        result("must", "failed", Verdict.PASSED, Verdict.FAILED_MUST),
        result("should", "failed", Verdict.FAILED_SHOULD),
        result("may", "failed", Verdict.MAY_NOT_IMPLEMENTED),
        result("xpass", "xpassed", Verdict.UNEXPECTED_PASS),
        result("error", "error", Verdict.ERROR),
        result("uncited", "failed"),
        result("passed", "passed", Verdict.PASSED, Verdict.NOT_COMPARED),
    ]
    picked = {threshold: _failing(results, threshold) for threshold in ("must", "should", "never")}
    assert picked == {
        "must": ["must", "xpass", "error", "uncited"],
        "should": ["must", "should", "xpass", "error", "uncited"],
        "never": [],
    }, picked


def test_expectation_patterns_are_exact_or_glob() -> None:
    """``[`` in a pattern is literal (no fnmatch class); ``*`` and ``?`` are the only wildcards."""
    exact = Entry("xfail", "a known failure", ("conformance/suite/t.py::test_x[fake-valid/a|v3]",))
    assert exact.matches("conformance/suite/t.py::test_x[fake-valid/a|v3]")
    assert not exact.matches("conformance/suite/t.py::test_x[fake-valid/a|v4]")
    klass = Entry("xfail", "a known failure", ("*test_x[ab]",))
    assert klass.matches("m.py::test_x[ab]") and not klass.matches("m.py::test_xa")
    assert Entry("skip", "a harness limit", ("*test_x[*-v?]",)).matches("m.py::test_x[w:p-v2]")


def test_impl_cmd_alone_reads_the_bundled_writers_outputs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--impl-cmd`` with a cross writer: the cross tests run (no empty parameter set), the writer
    is not tested itself and never scored — only the reader is."""
    monkeypatch.setenv("FAKE_STATE", str(STATE))
    results = pytester.path / "results.json"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--pyargs", "conformance.suite.test_cross", "conformance.suite.test_writer_output",
        "--impl-cmd", f"fake={sys.executable} {HARNESS}", "--cross-writers", "deltalake",
        "--ckpt-shapes", "partitioned", "-k", "fake-deltalake:classic-partitioned or test_writer_output",
        "--strict-expectations", "--ckpt-results", str(results),
    )  # fmt: skip
    # The fake reader returns another table's state; the writer-output tests need a writer under test,
    # so every one of them is deselected (however many the suite has).
    outcomes = result.parseoutcomes()
    assert (
        outcomes.get("failed") == 1
        and outcomes.get("deselected", 0) > 0
        and set(outcomes) <= {"failed", "deselected", "warnings"}
    ), f"outcomes {outcomes}: expected the one cross test failed and the writer-output tests deselected"
    data = json.loads(results.read_text())
    (only,) = data["results"]
    assert only["writer"] == "deltalake:classic" and only["reader"] == "fake", only
    assert {s["implementation"] for s in only["scores"]} == {"fake"}, only["scores"]
    assert next(i for i in data["implementations"] if i["name"] == "deltalake")["crossWriter"] is True
