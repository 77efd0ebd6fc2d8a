"""Meta-tests of the conformance plugin: collection rules, expectations, reports, the subprocess protocol.

They run the real suite module (``conformance/suite/test_reader_fixtures.py``) in a nested pytest
session against a one-case fixtures directory and a fake adapter program, so no Spark is needed.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.tables.shapes import SHAPES
from spec.schemas import validator

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).with_name("fake_harness.py")
CASE = ROOT / "fixtures" / "valid" / "v1_classic"


@pytest.fixture
def one_case(tmp_path: Path) -> Path:
    """A fixtures directory holding one valid case (two expectations: v3 and latest)."""
    target = tmp_path / "fx" / "valid" / "v1_classic"
    shutil.copytree(CASE, target)
    return tmp_path / "fx"


def _run(
    pytester: pytest.Pytester,
    fixtures: Path,
    *extra: str,
    expectations: Path | None = None,
    module: str = "test_reader_fixtures",
    in_process: bool = False,
) -> pytest.RunResult:
    """The suite's ``module`` in a nested pytest session: a subprocess, or with ``in_process`` this process,
    whose running SparkSession the nested run then uses instead of starting a JVM of its own."""
    args = [
        "-p",
        "no:cacheprovider",
        "--pyargs",
        f"conformance.suite.{module}",
        "--impl-cmd",
        f"fake={sys.executable} {HARNESS}",
        "--fixtures-dir",
        str(fixtures),
        "--ckpt-results",
        str(pytester.path / "results.json"),
        *extra,
    ]
    if expectations is not None:
        args += ["--expectations", str(expectations)]
    return pytester.runpytest_inprocess(*args) if in_process else pytester.runpytest_subprocess(*args)


def _latest_state(fixtures: Path) -> Path:
    descriptor = json.loads((fixtures / "valid" / "v1_classic" / "fixture.json").read_text())
    latest = next(e for e in descriptor["expectations"] if e["version"] == descriptor["latestVersion"])
    return fixtures / "valid" / "v1_classic" / str(latest["state"])


@pytest.mark.requirement("CKPT-READ-001")
def test_matching_state_passes_and_wrong_version_state_fails(
    pytester: pytest.Pytester, one_case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader returning the latest state passes that expectation and fails the older one, naming the field.

    Spec: CKPT-READ-001
    "… the table state a reader reports for `v` MUST equal the state obtained by reconciling the actions
    of those commits …"
    """
    monkeypatch.setenv("FAKE_STATE", str(_latest_state(one_case)))
    result = _run(pytester, one_case)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*valid/v1_classic (version 3) read by fake*difference*"])
    results = json.loads((pytester.path / "results.json").read_text())
    assert not list(validator("results.schema.json").iter_errors(results)), "results.json violates its schema"
    outcomes = {r["fixture"]: r["outcome"] for r in results["results"]}
    for r in results["results"]:  # the set-up's seconds, apart from the call's, within the test's span
        assert 0 <= r["setup"] <= (r["finishedAt"] - r["startedAt"]) / 1000 + 0.001, (
            f"{r['nodeid']}: set-up {r['setup']} s, ran {r['startedAt']}..{r['finishedAt']} ms"
        )
    assert outcomes == {"valid/v1_classic|v3": "failed", "valid/v1_classic|v4": "passed"}, outcomes
    assert all("CKPT-V1-002" in r["requirements"] for r in results["results"]), (
        "fixture requirements not recorded"
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-CLEAN-001", "CKPT-CLEAN-003")
def test_cleaner_that_loses_history_fails(
    pytester: pytest.Pytester, one_case: Path, monkeypatch: pytest.MonkeyPatch, spark: SparkSession
) -> None:
    """A cleaner (over the subprocess protocol) that deletes every commit but the latest fails the cleanup
    tests on the ``classic`` case: no checkpoint at its oldest remaining commit, commits after the cutoff
    gone. (Builds the case with the reference writer, so it needs Spark: the nested run uses this process's
    session rather than starting a JVM of its own.)

    Spec: CKPT-CLEAN-001
    "After a cleanup that deleted any commit file, the oldest remaining commit file MUST be at the version
    of a complete checkpoint …"
    Spec: CKPT-CLEAN-003
    "A cleaner MUST NOT delete any commit file whose timestamp, … is later than the cutoff timestamp …"
    """
    monkeypatch.setenv("FAKE_PURGE", "1")
    result = _run(
        pytester,
        one_case,
        "-k",
        "(remaining_commits or only_expired) and fake-classic",
        module="test_cleanup",
        in_process=True,
    )
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*classic cleaned by fake*oldest remaining commit 8 has no complete checkpoint*",
            "*00000000000000000006.json: version 6 is after the cutoff commit 5*",
        ]
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-CLEAN-001")
def test_a_reader_s_protocol_violation_on_identical_cleaned_copies_is_asked_once_and_names_the_copy_read(
    pytester: pytest.Pytester,
    one_case: Path,
    monkeypatch: pytest.MonkeyPatch,
    spark: SparkSession,
    tmp_path: Path,
) -> None:
    """Two cleaners (subprocess programs) that delete the same files leave byte-identical copies of the
    ``classic`` case; each is also a reader whose reads break the protocol (not JSON). Each reader is asked
    once per version for both copies — the violation stands for the identical copy as a result or a coded
    error does — and the test of the copy not read names the copy that was. (Builds the case with the
    reference writer: in this process's Spark session, as ``test_cleaner_that_loses_history_fails``.)

    Spec: CKPT-CLEAN-001
    "After a cleanup that deleted any commit file, the oldest remaining commit file MUST be at the version
    of a complete checkpoint …"
    """
    reads = tmp_path / "reads.txt"
    for name, value in {
        "FAKE_PURGE": "1",
        "FAKE_ROLES": "cleaner,reader",
        "FAKE_MISBEHAVE": "garbage",
        "FAKE_STATE": str(_latest_state(one_case)),
        "FAKE_READS": str(reads),
    }.items():
        monkeypatch.setenv(name, value)
    result = _run(
        pytester,
        one_case,
        "--impl-cmd",
        f"other={sys.executable} {HARNESS}",
        "-k",
        "reads_every_remaining_version and classic and not v2 and not after",
        module="test_cleanup",
        in_process=True,
    )
    result.assert_outcomes(failed=4)
    asked = reads.read_text().splitlines()
    assert len(asked) == 2 and len(set(asked)) == 1, f"the readers were asked {asked}, expected one read each"
    first = Path(asked[0].split()[0])
    result.stdout.fnmatch_lines(
        [f"*read by *(read in {first}, a byte-identical copy): protocol violation: harness*not JSON*"] * 2
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-COMPAT-002")
def test_a_compatibility_checkpoint_without_the_files_fails_on_the_suites_own_decoding(
    pytester: pytest.Pytester, one_case: Path, monkeypatch: pytest.MonkeyPatch, spark: SparkSession
) -> None:
    """A cleaner that writes a classic-named checkpoint of the newest version holding a protocol and a
    metaData but no file fails CKPT-COMPAT-002, decided by the suite's own decoding of the file (not by
    any implementation's reader), and the failure names the file and its differences. (Builds the
    ``v2-sidecars`` case with the session.)

    Spec: CKPT-COMPAT-002
    "A compatibility checkpoint MUST describe the same table state as the UUID-named checkpoint of its
    version."
    """
    monkeypatch.setenv("FAKE_COMPAT", "1")
    result = _run(
        pytester,
        one_case,
        "-k",
        "compatibility_checkpoint_has_the_state and fake-v2-sidecars",
        module="test_cleanup",
        in_process=True,
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*compatibility checkpoint 00000000000000000007.checkpoint.parquet of version 7: * difference(s)*"]
    )
    result.stdout.fnmatch_lines(["*- files: missing in actual: *"])


def test_expected_error_code_is_compared(
    pytester: pytest.Pytester, one_case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader that errors where a state is expected fails with the code it reported."""
    monkeypatch.setenv("FAKE_ERROR", "LOG_GAP")
    result = _run(pytester, one_case)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*expected a state, the reader reported LOG_GAP*"])


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("garbage", "*protocol violation: harness 'fake', request #* read */table: response is not JSON*"),
        (
            "empty-protocol",
            "*request #* read *: field response.result.state.protocol: 'minReaderVersion' is a*",
        ),
    ],
)
def test_protocol_violation_fails_the_test(
    pytester: pytest.Pytester, one_case: Path, monkeypatch: pytest.MonkeyPatch, mode: str, message: str
) -> None:
    """A program that breaks the protocol fails each test it answered, naming harness, request and
    field — never an internal error of the suite."""
    monkeypatch.setenv("FAKE_MISBEHAVE", mode)
    monkeypatch.setenv("FAKE_STATE", str(_latest_state(one_case)))
    result = _run(pytester, one_case)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([message])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_strict_xfail_that_passes_fails_the_run(
    pytester: pytest.Pytester, one_case: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An xfail entry for a test that passes makes the run fail (strict), and is recorded as xpassed."""
    monkeypatch.setenv("FAKE_STATE", str(_latest_state(one_case)))
    expectations = tmp_path / "mine.yaml"  # a file (not a directory) naming its implementation
    expectations.write_text(
        "implementation: fake\nxfail:\n  - reason: 'pretend the latest version is known to be wrong'\n"
        "    tests: ['*v1_classic|v4]']\n"
    )
    result = _run(pytester, one_case, expectations=expectations)
    assert result.ret != 0
    results = json.loads((pytester.path / "results.json").read_text())
    latest = next(r for r in results["results"] if r["fixture"] == "valid/v1_classic|v4")
    assert latest["outcome"] == "xpassed", latest


def test_strict_expectations_hold_under_k(
    pytester: pytest.Pytester, one_case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-k narrows what runs, not what entries are checked against: an entry for a deselected test is used."""
    monkeypatch.setenv("FAKE_STATE", str(_latest_state(one_case)))
    expectations = tmp_path / "exp"
    expectations.mkdir()
    (expectations / "fake.yaml").write_text(
        "implementation: fake\nxfail:\n  - reason: 'the older version is known to come out wrong'\n"
        "    tests: ['*v1_classic|v3]']\n"
    )
    result = _run(pytester, one_case, "--strict-expectations", "-k", "v4", expectations=expectations)
    result.assert_outcomes(passed=1, deselected=1)


@pytest.mark.parametrize(
    ("pattern", "stale"),
    [
        ("*::test_that_does_not_exist[*", True),  # names no test at all (a rename, a typo)
        ("*test_reader_fixture[fake-valid/multipart_2|*]", False),  # a bundled fixture the subset leaves out
        ("*test_reader_fixture[fake-valid/no_such_fixture|*]", True),  # a fixture that exists nowhere
    ],
)
def test_unused_expectation_is_an_error_for_the_selected_fixtures(
    pytester: pytest.Pytester, one_case: Path, tmp_path: Path, pattern: str, stale: bool
) -> None:
    """With --strict-expectations an entry that matches no test stops the run at collection — with
    ``--fixtures-dir`` holding a subset of the bundled fixtures (here one), only for the selected ones: an
    entry for a bundled fixture left out is not stale and the run goes on."""
    expectations = tmp_path / "fake.yaml"
    expectations.write_text(
        f"implementation: fake\nxfail:\n  - reason: 'an entry of this test'\n    tests: ['{pattern}']\n"
    )
    result = _run(
        pytester,
        one_case,
        "--strict-expectations",
        "--collect-only",
        expectations=expectations,
        in_process=True,
    )
    report = result.stdout.str() + result.stderr.str()
    assert ("expectation entries that match no test" in report) == stale, f"{pattern}: {report[-2000:]}"
    expected = pytest.ExitCode.USAGE_ERROR if stale else pytest.ExitCode.OK
    assert result.ret == expected, f"{pattern}: exit {result.ret}, expected {expected}: {report[-2000:]}"


def test_strict_expectations_hold_under_shapes(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """--ckpt-shapes, like -k, narrows what runs, not what entries are checked against: an entry for a test
    of a shape left out is used, so the narrowed run goes on, with that shape's tests deselected."""
    test = "conformance.suite.test_writer_output::test_checkpoint_files_have_spec_names"
    expectations = tmp_path / "reference.yaml"
    expectations.write_text(
        "implementation: reference\nxfail:\n  - reason: 'an entry for another shape'\n"
        "    tests: ['*test_checkpoint_files_have_spec_names[reference:v1-empty]']\n"
    )
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--pyargs", test, "--impl", "reference", "--ckpt-shapes", "partitioned",
        "--strict-expectations", "--expectations", str(expectations), "--collect-only", "-q",
    )  # fmt: skip
    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, output[-2000:] + result.stderr.str()[-2000:]
    collected = [line for line in result.outlines if "::test_" in line]
    profiles = len(collected)
    assert profiles and all(line.endswith("-partitioned]") for line in collected), collected
    assert f"{profiles}/{profiles * len(SHAPES)} tests collected" in output, output[-500:]


def test_unknown_requirement_id_fails_collection(pytester: pytest.Pytester) -> None:
    """A test citing a requirement ID that is not in spec/requirements.json is a collection error."""
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.requirement("CKPT-NOPE-999")
        def test_x():
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--collect-only")
    result.stderr.fnmatch_lines(["*unknown requirement ID*", "*test_bad.py::test_x: CKPT-NOPE-999*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.ret


def test_report_renders_matrix(
    pytester: pytest.Pytester, one_case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MATRIX.md and index.html are written from results.json, with the implementation and its cells."""
    from conformance.report import write_reports

    monkeypatch.setenv("FAKE_STATE", str(_latest_state(one_case)))
    _run(pytester, one_case)
    md, page = write_reports(pytester.path / "results.json", pytester.path / "out")
    text = md.read_text()
    assert "| fake |" in text and "CKPT-V1-002" in text and "✘ MUST" in text, text[:2000]
    assert "<table>" in page.read_text()


def test_a_crashing_writer_runs_once_and_fails_each_test_with_its_message(
    pytester: pytest.Pytester, one_case: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A writer harness that crashes on ``write_checkpoint`` is asked once per (writer, profile, shape), as a
    writer that succeeds or reports a coded error is: its failure is cached with the outcome (it was not,
    and every writer test ran the crashing program again). Each test still fails, naming the harness,
    the request and the crash."""
    runs = tmp_path / "runs"
    monkeypatch.setenv("FAKE_WRITE_CRASH", str(runs))
    tests = "test_checkpoint_files_have_spec_names or test_last_checkpoint_is_valid or test_last_checkpoint_matches"
    result = _run(pytester, one_case, "--ckpt-shapes", "empty", "-k", tests, module="test_writer_output")
    results = json.loads((pytester.path / "results.json").read_text())["results"]
    assert len(results) == 3 and all(r["outcome"] == "error" for r in results), (
        f"{[(r['nodeid'], r['outcome']) for r in results]}\n{result.stdout.str()[-1500:]}"
    )
    crash = "protocol violation: harness 'fake', request #2 write_checkpoint "
    closed = "the program closed its stdout before answering (exit status 3)"
    for r in results:
        assert crash in r["message"] and closed in r["message"], f"{r['nodeid']}: {r['message']!r}"
    asked = runs.read_text().splitlines()
    assert len(asked) == 1, f"the crashing writer was asked {len(asked)} times for one table: {asked}"
