"""A reader-only implementer needs neither Java nor Spark (issue #15 item 6).

``delta-ckpt conformance run --impl-cmd NAME=CMD`` with a program that declares only the ``reader``
role runs every reader test: the golden tables, including the frozen outputs of every bundled writer
and cleaner (``fixtures/foreign/``, ``fixtures/generator/cases_writers.py``). The run here has
``JAVA_HOME`` unset, every ``PATH`` entry holding a ``java`` removed, and a ``java`` of our own first on
``PATH`` that records any call — so starting a JVM, directly or through pyspark, fails the test.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "conformance" / "examples" / "deltalake_harness.py"
BUNDLED_WRITERS = ("reference", "delta-spark", "deltalake", "kernel-java")


def _no_java_env(trap: Path) -> dict[str, str]:
    trap.mkdir()
    marker = trap / "called"
    java = trap / "java"
    java.write_text(f'#!/bin/sh\necho "java $*" >> {shlex.quote(str(marker))}\nexit 1\n')
    java.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_SUBMIT_ARGS")}
    kept = [p for p in env.get("PATH", "").split(os.pathsep) if p and not (Path(p) / "java").exists()]
    env["PATH"] = os.pathsep.join([str(trap), *kept])
    return env


def test_reader_only_run_needs_no_java(tmp_path: Path) -> None:
    """The deltalake example program in reader-only mode passes the whole run with no JVM anywhere."""
    env = _no_java_env(tmp_path / "bin")
    report = tmp_path / "report"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(HARNESS))} --reader-only"
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("delta-ckpt")),
            "conformance",
            "run",
            "--impl-cmd",
            f"deltalake-cmd={command}",
            "--report",
            str(report),
            "--quiet",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
    calls = tmp_path / "bin" / "called"
    assert not calls.exists(), f"a JVM was started: {calls.read_text()}\n{tail}"
    assert proc.returncode == 0, f"exit status {proc.returncode}:\n{tail}"
    results = json.loads((report / "results.json").read_text())["results"]
    ran = [r for r in results if r["outcome"] != "skipped"]
    ids = [r["nodeid"] for r in ran]
    readers = ("test_reader_fixtures.py::", "test_hostile.py::")  # the hostile reader tests take no writer
    assert ids and all(any(r in i for r in readers) for i in ids), (
        f"tests other than reader tests ran: {[i for i in ids if not any(r in i for r in readers)][:5]}"
    )
    skipped = [r["nodeid"] for r in results if r["outcome"] == "skipped"]
    assert all("NOTSET" in i for i in skipped), (
        f"reader tests skipped (writer/cleaner ones have no parameters): {skipped}"
    )
    for writer in BUNDLED_WRITERS:
        assert any(f"foreign/{writer}-" in i for i in ids), f"no fixture written by {writer} was read: {ids}"
    outcomes = {r["outcome"] for r in ran}
    assert outcomes <= {"passed", "xfailed"}, f"outcomes {sorted(outcomes)} in {report / 'results.json'}"
