"""Matrix benchmark: the wall time of the main job, ``delta-ckpt conformance run``, by number of workers.

The main job (``./run-matrix.sh``) is one ``delta-ckpt conformance run`` over the bundled
implementations (issue #15 item 7: ≤ 8 min for the default run on the 2-core machine). Each run here
is that command in a fresh process, with its own report directory; ``--workers`` values are
**interleaved** (repetition ``r`` runs every value once, in an order rotated by ``r``). For each run:
the whole wall time (set-up excluded: the virtualenv, jars and Kernel harness must exist — run
``scripts/bootstrap.sh`` first), the machine's 1-minute load average before and after (the machine
may be shared: figures are labelled with it), the exit status and the number of test results and
outcomes in ``results.json`` — so two runs can be checked to have had the same coverage — and each
worker's schedule from results.json's ``worker``/``startedAt``/``finishedAt``: when its last test ended,
in seconds after the run's first test started, and the tail (how long the last worker ran on alone) —
:mod:`worker_schedule`, which ``.ci/run`` uses for the README test command's JUnit XML too.

Usage (``MATRIX_RESULTS.md`` shows the command that produced it)::

    .venv/bin/python benchmarks/run_matrix_bench.py --workers 1 2 --reps 3                 # the default matrix
    .venv/bin/python benchmarks/run_matrix_bench.py --workers 1 2 --reps 1 -- --shapes quick
    .venv/bin/python benchmarks/run_matrix_bench.py --schedule reports/conformance/results.json  # one run's, set-ups apart
    .venv/bin/python benchmarks/run_matrix_bench.py --replay reports/conformance  # its tests' times, rescheduled

``--replay`` takes a report directory (``results.json`` and ``junit.xml``, of any run, with or without
workers) and replays xdist's ``--dist loadgroup`` over two workers with each test's JUnit time (set-up,
call and teardown): the suite's groups as units (:func:`conformance.plugin.xdist_group`), sent largest
first and refilled at two pending tests as ``LoadScopeScheduling`` does, and once more with the units
ordered by their total time instead of their size. Each worker's end, against half the summed time,
bounds what scheduling alone can win; start-up (collection, JVMs) is not in it.

Arguments after ``--`` go to ``conformance run``. Results go to ``--results`` (default
``benchmarks/MATRIX_RESULTS.md``) and the raw rows next to it (``matrix_results.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from worker_schedule import from_results, schedule, worker_ends  # noqa: E402


@dataclass
class MatrixRun:
    """One ``conformance run``: its worker count, wall time, load and what it ran."""

    workers: int
    rep: int
    seconds: float
    exit_status: int
    load_before: float
    load_after: float
    results: int
    outcomes: dict[str, int]
    #: worker -> seconds from the run's first test start to the end of that worker's last test
    worker_ends: dict[str, float]


def _load() -> float:
    return os.getloadavg()[0]


def command(workers: int, report: Path, extra: list[str]) -> list[str]:
    delta_ckpt = Path(sys.executable).with_name("delta-ckpt")
    return [str(delta_ckpt), "conformance", "run", "--workers", str(workers), "--report", str(report), *extra]


def measure(workers: int, rep: int, extra: list[str], work: Path) -> MatrixRun:
    report = work / f"w{workers}-r{rep}"
    load_before = _load()
    start = time.monotonic()
    proc = subprocess.run(
        command(workers, report, [*extra, "--quiet"]), cwd=ROOT, capture_output=True, text=True, check=False
    )
    seconds = time.monotonic() - start
    results_json = report / "results.json"
    results = json.loads(results_json.read_text())["results"] if results_json.is_file() else []
    run = MatrixRun(
        workers,
        rep,
        round(seconds, 1),
        proc.returncode,
        round(load_before, 2),
        round(_load(), 2),
        len(results),
        dict(sorted(Counter(r["outcome"] for r in results).items())),
        worker_ends(from_results(results)),
    )
    if proc.returncode not in (0, 1):
        print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
    print(f"[matrix-bench] {asdict(run)}", file=sys.stderr, flush=True)
    return run


def _unit(result: dict[str, Any]) -> str:
    """The scheduler's work unit of a results.json entry: its group (:func:`conformance.plugin.xdist_group`)
    or, for a test of no group, the test itself."""
    from conformance.plugin import xdist_group

    params: dict[str, Any] = {}
    if "cleaner" in result and "shape" in result:  # a cleanup test: "shape" holds the cleanup case
        params = {"cleanup_case_name": result["shape"]}
    elif "writer" in result and "shape" in result:
        implementation, profile = result["writer"].split(":", 1)
        params = {"writer_profile": (implementation, profile), "shape_name": result["shape"]}
    return xdist_group(params) or result["nodeid"]


def replay(report: Path, workers: int = 2) -> str:
    """A run's tests (``report``'s results.json and junit.xml) rescheduled as ``--dist loadgroup`` would over
    ``workers``: per unit order, each worker's end (s of test time) against the summed time / workers."""
    seconds = {
        (case.get("classname", ""), case.get("name", "")): float(case.get("time", 0))
        for case in ET.parse(report / "junit.xml").getroot().iter("testcase")
    }
    units: dict[str, list[float]] = {}
    for r in json.loads((report / "results.json").read_text())["results"]:
        path, name = r["nodeid"].split("::", 1)
        units.setdefault(_unit(r), []).append(seconds[(path.removesuffix(".py").replace("/", "."), name)])
    total = sum(sum(u) for u in units.values())
    lines = [f"{len(units)} units, {total:.1f} s of tests; / {workers} = {total / workers:.1f} s"]
    orders: dict[str, Callable[[list[float]], float]] = {"size": lambda u: -len(u), "time": lambda u: -sum(u)}
    for label, key in orders.items():
        ends = _replay(sorted(units.values(), key=key), workers)
        lines.append(f"units by {label}: worker ends {', '.join(f'{e:.1f}' for e in ends)} s")
    return "\n".join(lines)


def _replay(queue: list[list[float]], workers: int) -> list[float]:
    """``LoadScopeScheduling``: a unit to each worker, a second where one has at most two tests pending, then
    whichever worker finishes a test with at most two pending takes the next unit (xdist/scheduler/loadscope.py)."""
    clock = [0.0] * workers
    pending: list[list[float]] = [[] for _ in range(workers)]

    def refill(w: int) -> None:
        if queue and len(pending[w]) <= 2:
            pending[w].extend(queue.pop(0))

    for w in range(workers):
        if queue:
            pending[w].extend(queue.pop(0))
    for w in range(workers):
        refill(w)
    while any(pending):
        w = min((w for w in range(workers) if pending[w]), key=lambda w: clock[w] + pending[w][0])
        clock[w] += pending[w].pop(0)
        refill(w)
    return clock


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:04.1f} s"


def report(runs: list[MatrixRun], shown_command: str, extra: list[str], note: str = "") -> str:
    lines = [
        "# Matrix benchmark",
        "",
        "Generated by `benchmarks/run_matrix_bench.py` — see its module docstring for what is timed.",
        "",
        "## Command",
        "",
        "```bash",
        shown_command,
        "```",
        "",
        f"Each run: `{shlex.join(['delta-ckpt', 'conformance', 'run', '--workers', 'N', *extra])}` (set-up done).",
        "",
        *([note, ""] if note else []),
        "## Machine",
        "",
        f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}.",
        "",
        "## Runs",
        "",
        "| workers | rep | wall | load before → after | exit | results | outcomes | last test per worker (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        outcomes = ", ".join(f"{k} {v}" for k, v in r.outcomes.items())
        ends = ", ".join(f"{w} {end:.0f}" for w, end in r.worker_ends.items())
        lines.append(
            f"| {r.workers} | {r.rep} | {_minutes(r.seconds)} | {r.load_before} → {r.load_after} "
            f"| {r.exit_status} | {r.results} | {outcomes} | {ends} |"
        )
    lines += [
        "",
        "## Summary (median wall time)",
        "",
        "| workers | runs | median | vs 1 worker |",
        "|---|---|---|---|",
    ]
    medians = {
        w: statistics.median(r.seconds for r in runs if r.workers == w)
        for w in sorted({r.workers for r in runs})
    }
    for w, median in medians.items():
        ratio = f"{medians[1] / median:.2f}× faster" if 1 in medians and median and w != 1 else "—"
        count = sum(1 for r in runs if r.workers == w)
        lines.append(f"| {w} | {count} | {_minutes(median)} | {ratio} |")
    same = len({(r.results, tuple(r.outcomes.items())) for r in runs}) == 1
    lines += ["", f"Same results and outcomes in every run: {'yes' if same else 'NO'}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    own, extra = (
        (args_in[: args_in.index("--")], args_in[args_in.index("--") + 1 :])
        if "--" in args_in
        else (args_in, [])
    )
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to compare")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of each worker count")
    parser.add_argument("--results", type=Path, default=HERE / "MATRIX_RESULTS.md")
    parser.add_argument("--work", type=Path, default=None, help="report directories (default: a temp dir)")
    parser.add_argument(
        "--note", default="", help="a paragraph for the report (e.g. what the machine was doing)"
    )
    parser.add_argument(
        "--schedule",
        type=Path,
        default=None,
        metavar="RESULTS_JSON",
        help="print one run's schedule (set-up and calls apart, the 15 costliest set-ups) and stop",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        default=None,
        metavar="REPORT_DIR",
        help="replay one run's test times under --dist loadgroup and stop",
    )
    args = parser.parse_args(own)
    if args.replay is not None:
        print(replay(args.replay))
        return 0
    if args.schedule is not None:
        rows = from_results(json.loads(args.schedule.read_text())["results"])
        print(schedule(rows, "implementation", 12, 15))
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="matrix-bench-"))
    runs = []
    for rep in range(args.reps):
        order = args.workers[rep % len(args.workers) :] + args.workers[: rep % len(args.workers)]
        for workers in order:
            runs.append(measure(workers, rep, extra, work))
    shown = "cd " + str(ROOT) + " && .venv/bin/python benchmarks/run_matrix_bench.py " + shlex.join(args_in)
    args.results.write_text(report(runs, shown, extra, args.note))
    raw: dict[str, Any] = {
        "command": shown,
        "conformanceArgs": extra,
        "note": args.note,
        "runs": [asdict(r) for r in runs],
    }
    args.results.with_name("matrix_results.json").write_text(json.dumps(raw, indent=2) + "\n")
    print(f"wrote {args.results}", file=sys.stderr)
    return 0 if all(r.exit_status in (0, 1) for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
