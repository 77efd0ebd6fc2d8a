"""The checkpoint benchmark runs end to end at a tiny size (a smoke run: nothing here is timed).

Benchmarks measure speed (``benchmarks/``); this only proves the script still works — tables are
generated, each contender's subprocess runs and checkpoints the table, and the report has the
summary (min/median/max), the load, the command and the ratios.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support import REPO_ROOT

ADDS = 300


@pytest.mark.spark
@pytest.mark.deltalake
def test_benchmark_smoke(deltalake: ModuleType, tmp_path: Path) -> None:
    """Our V2 writer, deltalake and the pyarrow floor, one repetition each, at 300 adds."""
    results = tmp_path / "RESULTS.md"
    cmd = [
        sys.executable,
        str(REPO_ROOT / "benchmarks" / "run_checkpoint_bench.py"),
        "--sizes",
        str(ADDS),
        "--reps",
        "1",
        "--only",
        "ours-v2,deltalake,pyarrow-floor",
        "--driver-memory",
        "1g",
        "--work",
        str(tmp_path / "work"),
        "--results",
        str(results),
    ]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}: {proc.stderr[-2000:]}"
    rows = json.loads((tmp_path / "results.json").read_text())["runs"]
    failed = [(r["contender"], r["error"]) for r in rows if not r["ok"]]
    assert not failed, f"{tmp_path / 'results.json'}: failed runs {failed}"
    assert sorted(r["contender"] for r in rows) == ["deltalake", "ours-v2", "pyarrow-floor"], rows
    ours = next(r for r in rows if r["contender"] == "ours-v2")
    assert ours["detail"]["numAddFiles"] == ADDS, f"ours-v2 checkpointed {ours['detail']}"
    assert ours["detail"]["sidecars"] >= 1, f"ours-v2 wrote no sidecar: {ours['detail']}"
    text = results.read_text()
    for needle in ("| min | median | max |", "ours V2 / deltalake (V1)", "run_checkpoint_bench.py --sizes"):
        assert needle in text, f"{results} lacks {needle!r}"


@pytest.mark.deltalake
def test_matrix_benchmark_smoke(deltalake: ModuleType, tmp_path: Path) -> None:
    """The matrix benchmark times ``conformance run`` with 1 and 2 workers on a small reader-only run and
    reports each run's wall time, load, results and each worker's last test, the same results in both; and
    ``--schedule`` prints one run's schedule from its results.json, ``--replay`` its tests rescheduled."""
    results = tmp_path / "MATRIX_RESULTS.md"
    harness = REPO_ROOT / "conformance" / "examples" / "deltalake_harness.py"
    cmd = [
        sys.executable,
        str(REPO_ROOT / "benchmarks" / "run_matrix_bench.py"),
        "--workers",
        "1",
        "2",
        "--reps",
        "1",
        "--results",
        str(results),
        "--work",
        str(tmp_path / "work"),
        "--",
        "--impl-cmd",
        f"dl={sys.executable} {harness} --reader-only",
        "-k",
        "v1_classic",
    ]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}: {proc.stderr[-2000:]}"
    runs = json.loads((tmp_path / "matrix_results.json").read_text())["runs"]
    assert sorted(r["workers"] for r in runs) == [1, 2], runs
    assert all(r["results"] > 0 and r["exit_status"] == 0 for r in runs), runs
    assert all(len(r["worker_ends"]) == r["workers"] for r in runs), f"one last test per worker: {runs}"
    text = results.read_text()
    for needle in (
        "| workers | rep | wall |",
        "last test per worker",
        "vs 1 worker",
        "Same results and outcomes in every run: yes",
    ):
        assert needle in text, f"{results} lacks {needle!r}"
    bench = str(REPO_ROOT / "benchmarks" / "run_matrix_bench.py")
    report = tmp_path / "work" / "w2-r0"
    shown = subprocess.run(
        [sys.executable, bench, "--schedule", str(report / "results.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "| gw0 |" in shown and "| gw1 |" in shown and "Tail:" in shown, f"--schedule printed {shown!r}"
    assert "| test_reader_fixtures.py | dl |" in shown, f"--schedule printed no time by file: {shown!r}"
    assert "| set-up (s) | worker | test |\n|---|---|---|\n| " in shown, (
        f"--schedule printed no set-ups: {shown!r}"
    )
    replayed = subprocess.run(
        [sys.executable, bench, "--replay", str(report)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "units by size: worker ends" in replayed and "units by time" in replayed, (
        f"--replay printed {replayed!r}"
    )
