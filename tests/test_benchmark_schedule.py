"""A test run's schedule (``benchmarks/worker_schedule.py``), as ``.ci/run`` prints it after pytest.

The JUnit XML below is what pytest wrote for a real two-worker run (``pytest -n 2 --dist loadfile
--no-loadscope-reorder -o junit_family=xunit1`` over three small files, with this suite's conftest hook
recording each test's worker and start): ``test_long.py`` (one test, 2 s) went to gw0, which also took
``test_last.py`` (xdist hands a worker the next file while it has at most two tests pending), and
``test_short.py`` to gw1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import SHARED_FIXTURE_FILES, SHARED_FIXTURES
from tests.support import REPO_ROOT
from tests.support.scripts import loaded_script

SCRIPT = REPO_ROOT / "benchmarks" / "worker_schedule.py"
JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" '
    'failures="0" skipped="0" tests="4" time="17.311" timestamp="2026-11-26T14:54:18.093339+00:00" hostname="vm">'
    '<testcase classname="tests.test_long" name="test_long" file="tests/test_long.py" line="3" time="2.084">'
    '<properties><property name="worker" value="gw0" /><property name="started" value="1795704871.071" />'
    "</properties></testcase>"
    '<testcase classname="tests.test_short" name="test_one" file="tests/test_short.py" line="3" time="0.614">'
    '<properties><property name="worker" value="gw1" /><property name="started" value="1795704871.086" />'
    "</properties></testcase>"
    '<testcase classname="tests.test_short" name="test_two" file="tests/test_short.py" line="7" time="0.519">'
    '<properties><property name="worker" value="gw1" /><property name="started" value="1795704871.705" />'
    "</properties></testcase>"
    '<testcase classname="tests.test_last" name="test_three" file="tests/test_last.py" line="3" time="0.201">'
    '<properties><property name="worker" value="gw0" /><property name="started" value="1795704873.159" />'
    "</properties></testcase></testsuite></testsuites>"
)


@pytest.fixture(scope="module")
def worker_schedule() -> Iterator[ModuleType]:
    """The script as a module (:func:`~tests.support.scripts.loaded_script`)."""
    with loaded_script(SCRIPT) as module:
        yield module


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"{SCRIPT} {args}: exit {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout


def test_the_schedule_of_a_two_worker_run(tmp_path: Path) -> None:
    """Per worker its tests, busy seconds and last end (after the first test's start); the tail; the files by
    seconds with their worker — figures worked out by hand from the XML's times."""
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT, encoding="utf-8")
    shown = _run(str(junit))
    # gw0: 2.084 + 0.201 s, last end 873.159 + 0.201 - 871.071; gw1: 0.614 + 0.519 s, ends 871.705 + 0.519 - 871.071
    for line in (
        "| gw0 | 2 | 2.3 | 2.3 |",
        "| gw1 | 2 | 1.1 | 1.2 |",
        "Tail: 1.1 s.",
        "| test_long.py | gw0 | 1 | 2.1 |\n| test_short.py | gw1 | 2 | 1.1 |\n| test_last.py | gw0 | 1 | 0.2 |",
    ):
        assert line in shown, f"{SCRIPT} {junit} printed no {line!r}:\n{shown}"


def test_a_junit_without_worker_times_says_so(tmp_path: Path) -> None:
    """A JUnit XML of a run before the conftest recorded workers has no schedule, and says so."""
    junit = tmp_path / "junit.xml"
    junit.write_text(re.sub(r"<properties>.*?</properties>", "", JUNIT), encoding="utf-8")
    shown = _run(str(junit))
    assert shown.startswith("no test times"), f"{SCRIPT} {junit} printed {shown!r}"


def test_file_seconds_are_a_junit_s_seconds_by_file(tmp_path: Path) -> None:
    """``--file-seconds`` writes each file's summed seconds (the order ``tests/conftest.py`` hands files out in)."""
    junit, out = tmp_path / "junit.xml", tmp_path / "file_seconds.json"
    junit.write_text(JUNIT, encoding="utf-8")
    _run(str(junit), "--file-seconds", str(out))
    seconds = json.loads(out.read_text(encoding="utf-8"))["seconds"]
    assert seconds == {"tests/test_last.py": 0.2, "tests/test_long.py": 2.1, "tests/test_short.py": 1.1}, (
        f"{out}: {seconds}"
    )


def test_the_machine_s_cpu_shares_since_a_snapshot(tmp_path: Path) -> None:
    """``--machine`` prints the load; with ``--since`` the busy, I/O-wait and steal shares of CPU time since the
    snapshot ``--save`` wrote, each a percentage and together at most all of it."""
    snapshot = tmp_path / "start.json"
    first = _run("--machine", "--save", str(snapshot))
    assert re.fullmatch(r"\[machine\] load [\d.]+ [\d.]+ [\d.]+ \(1/5/15 min\), \d+ CPUs\n", first), first
    assert set(json.loads(snapshot.read_text())) >= {"user", "idle", "iowait", "steal"}, snapshot.read_text()
    time.sleep(0.2)
    since = _run("--machine", "--since", str(snapshot))
    found = re.search(r"busy ([\d.]+)%, iowait ([\d.]+)%, steal ([\d.]+)% of CPU time", since)
    assert found is not None, f"--since printed no CPU shares: {since!r}"
    shares = [float(x) for x in found.groups()]
    assert all(0 <= s <= 100 for s in shares) and sum(shares) <= 100.1, f"CPU shares {shares}"


def test_the_matrix_schedule_labels_files_by_implementation(worker_schedule: ModuleType) -> None:
    """The same schedule from a conformance run's results.json (``run_matrix_bench.py --schedule``): ms times,
    each file labelled by the implementation its tests time."""
    results = [
        {
            "nodeid": "conformance/tests/test_reader_fixtures.py::t[a]",
            "worker": "gw0",
            "reader": "dl:x",
            "startedAt": 1000,
            "finishedAt": 3500,
        },
        {
            "nodeid": "conformance/tests/test_writer.py::t[b]",
            "worker": "gw1",
            "writer": "delta-spark:v2",
            "startedAt": 1500,
            "finishedAt": 2000,
        },
    ]
    shown = worker_schedule.schedule(worker_schedule.from_results(results), "implementation")
    for line in (
        "| gw0 | 1 | 2.5 | 2.5 |",
        "| gw1 | 1 | 0.5 | 1.0 |",
        "Tail: 1.5 s.",
        "| test_reader_fixtures.py | dl | 1 | 2.5 |",
    ):
        assert line in shown, f"schedule of {results} printed no {line!r}:\n{shown}"


def test_the_matrix_schedule_shows_set_ups_apart(worker_schedule: ModuleType) -> None:
    """With results.json's ``setup`` seconds, each (file, implementation) pair's seconds are split into set-up
    and calls, and the costliest set-ups are listed by test id, most expensive first, at most ``setups``."""
    results = [
        {
            "nodeid": f"conformance/suite/test_cross.py::test_cross[reference:{profile}-partitioned-reference]",
            "worker": "gw0",
            "reader": "reference",
            "startedAt": start,
            "finishedAt": start + 4000,
            "setup": setup,
        }
        for profile, start, setup in (("v1", 1000, 3.2), ("v2-json", 5000, 1.5), ("v2-classic", 9000, 0.3))
    ]
    shown = worker_schedule.schedule(worker_schedule.from_results(results), "implementation", setups=2)
    # 3 tests of 4 s each: 12 s, of which 3.2 + 1.5 + 0.3 = 5.0 set-up
    assert "| test file | implementation | tests | seconds | set-up | calls |" in shown, shown
    assert "| test_cross.py | reference | 3 | 12.0 | 5.0 | 7.0 |" in shown, shown
    top = shown.split("| set-up (s) | worker | test |\n|---|---|---|\n", 1)[-1].splitlines()
    assert top == [
        "| 3.2 | gw0 | test_cross.py::test_cross[reference:v1-partitioned-reference] |",
        "| 1.5 | gw0 | test_cross.py::test_cross[reference:v2-json-partitioned-reference] |",
    ], shown


def test_this_test_s_worker_and_start_are_recorded(request: pytest.FixtureRequest) -> None:
    """The suite records each test's worker and start time for its JUnit XML (``tests/conftest.py``)."""
    props = dict(request.node.user_properties)
    assert props.get("worker") == os.environ.get("PYTEST_XDIST_WORKER", "-"), f"properties {props}"
    assert 0 <= time.time() - float(props["started"]) < 600, f"started {props['started']}, now {time.time()}"


def test_the_files_that_share_a_costly_fixture_are_one_unit(request: pytest.FixtureRequest) -> None:
    """Every file of this session whose tests use a costly session fixture (an HDFS or S3 server, the built
    shapes) is in ``SHARED_FIXTURE_FILES``, the one unit of work that a single process runs."""
    users = {
        item.nodeid.split("::", 1)[0]
        for item in request.session.items
        if SHARED_FIXTURES & set(getattr(item, "fixturenames", ()))
    }
    assert users <= SHARED_FIXTURE_FILES, (
        f"add to SHARED_FIXTURE_FILES: {sorted(users - SHARED_FIXTURE_FILES)}"
    )
    missing = sorted(p for p in SHARED_FIXTURE_FILES if not (REPO_ROOT / p).is_file())
    assert missing == [], f"SHARED_FIXTURE_FILES names files that do not exist: {missing}"
