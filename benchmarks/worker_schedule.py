"""A test run's schedule over its workers, from its JUnit XML or from a conformance run's results.json.

One mechanism for both runs that use pytest-xdist: ``.ci/run`` prints the README test command's schedule
from ``reports/junit-tests.xml`` after pytest, and ``benchmarks/run_matrix_bench.py --schedule`` prints a
conformance run's from its ``results.json``. Each test is a :class:`Timed` row (file, worker, start, seconds,
and a label: its worker here, its implementation in the matrix); :func:`schedule` prints per worker its tests,
the seconds its tests took and when its last test ended (seconds after the run's first test started), the
tail (how long the last worker ran on after the first had finished) and the files that took the most seconds.
A results.json also gives each test's set-up seconds (``setup``): its files' seconds are then shown as set-up
and calls apart, followed by the most expensive set-ups by test id (a cross test's id names the writer,
profile and shape whose output its set-up made).

The JUnit XML needs each test's worker and start time: ``tests/conftest.py`` records them as the test case's
``worker`` and ``started`` properties (a JUnit ``time`` is set-up, call and teardown). ``--file-seconds``
writes a run's seconds by test file (:func:`file_seconds`) to a JSON file.

``--machine`` prints the machine's load and, given the snapshot ``--machine --save`` wrote at the start, the
share of CPU time that was busy, waiting for I/O, or stolen by the hypervisor since then (``/proc/stat``).

Usage::

    python3 benchmarks/worker_schedule.py reports/junit-tests.xml
    python3 benchmarks/worker_schedule.py reports/junit-tests.xml --file-seconds file_seconds.json
    python3 benchmarks/worker_schedule.py --machine --save reports/machine-start.json   # at the start
    python3 benchmarks/worker_schedule.py --machine --since reports/machine-start.json  # at the end
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: /proc/stat's CPU columns, in order.
_CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@dataclass(frozen=True)
class Timed:
    """One test: its file's name, the worker that ran it, when it started (s, any epoch) and how long it took;
    from a results.json also its set-up's seconds (part of ``seconds``) and its id within the file."""

    file: str
    worker: str
    started: float
    seconds: float
    label: str
    setup: float | None = None
    test: str = ""


def from_junit(path: Path) -> list[Timed]:
    """The tests of a JUnit XML that carry ``worker`` and ``started`` properties (``tests/conftest.py``)."""
    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value", "") for p in case.iter("property")}
        if "worker" in props and "started" in props:
            worker = props["worker"]
            rows.append(Timed(_file_of(case), worker, float(props["started"]), _seconds(case), worker))
    return rows


def from_results(results: list[dict[str, Any]], label: str = "implementation") -> list[Timed]:
    """The tests of a conformance run's results.json (``startedAt``/``finishedAt`` in ms), labelled by the
    implementation each times (``label="implementation"``) or by their worker."""
    return [
        Timed(
            r["nodeid"].split("::", 1)[0].rsplit("/", 1)[-1],
            r.get("worker", "-"),
            r["startedAt"] / 1000,
            (r["finishedAt"] - r["startedAt"]) / 1000,
            _played_by(r) if label == "implementation" else r.get("worker", "-"),
            r.get("setup"),
            r["nodeid"].split("::", 1)[-1],
        )
        for r in results
        if "startedAt" in r
    ]


def worker_ends(rows: Iterable[Timed]) -> dict[str, float]:
    """Per worker (``-`` for a run without workers), when its last test ended: seconds after the run's first
    test started (empty without rows)."""
    rows = list(rows)
    if not rows:
        return {}
    first = min(r.started for r in rows)
    ends: dict[str, float] = {}
    for r in rows:
        ends[r.worker] = max(ends.get(r.worker, 0.0), r.started + r.seconds - first)
    return dict(sorted(ends.items()))


def schedule(rows: list[Timed], label: str = "worker", top: int = 10, setups: int = 15) -> str:
    """Per worker its tests, their seconds and when its last test ended; the tail; the ``top`` (file, label)
    pairs that took the most seconds, with their tests — and, when the rows have set-up times, each pair's
    set-up and call seconds apart and the ``setups`` most expensive set-ups."""
    ends = worker_ends(rows)
    if not ends:
        return "no test times in this run (no worker/start time per test)"
    lines = ["| worker | tests | seconds in tests | last test ended (s) |", "|---|---|---|---|"]
    for worker, end in ends.items():
        mine = [r for r in rows if r.worker == worker]
        lines.append(f"| {worker} | {len(mine)} | {sum(r.seconds for r in mine):.1f} | {end:.1f} |")
    lines.append(f"\nTail: {max(ends.values()) - min(ends.values()):.1f} s.")
    seconds: dict[tuple[str, str], float] = {}
    setup: dict[tuple[str, str], float] = {}
    tests: Counter[tuple[str, str]] = Counter()
    for r in rows:
        seconds[r.file, r.label] = seconds.get((r.file, r.label), 0.0) + r.seconds
        setup[r.file, r.label] = setup.get((r.file, r.label), 0.0) + (r.setup or 0.0)
        tests[r.file, r.label] += 1
    slowest = sorted(seconds.items(), key=lambda item: -item[1])[:top]
    timed = [r for r in rows if r.setup is not None]
    if not timed:
        lines += ["", f"| test file | {label} | tests | seconds |", "|---|---|---|---|"]
        lines += [f"| {f} | {lab} | {tests[f, lab]} | {sec:.1f} |" for (f, lab), sec in slowest]
        return "\n".join(lines)
    lines += ["", f"| test file | {label} | tests | seconds | set-up | calls |", "|---|---|---|---|---|---|"]
    lines += [
        f"| {f} | {lab} | {tests[f, lab]} | {sec:.1f} | {setup[f, lab]:.1f} | {sec - setup[f, lab]:.1f} |"
        for (f, lab), sec in slowest
    ]
    lines += ["", "| set-up (s) | worker | test |", "|---|---|---|"]
    costly = sorted(timed, key=lambda r: -(r.setup or 0.0))[:setups]
    lines += [f"| {r.setup:.1f} | {r.worker} | {r.file}::{r.test} |" for r in costly]
    return "\n".join(lines)


def file_seconds(path: Path) -> dict[str, float]:
    """Seconds by test file (its path, as pytest's node ids spell it) over a JUnit XML, set-up included."""
    out: dict[str, float] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        out[_path_of(case)] = out.get(_path_of(case), 0.0) + _seconds(case)
    return out


def machine(since: Path | None = None) -> str:
    """The load averages and CPU count; with ``since`` (a :func:`cpu_times` snapshot), the busy, I/O-wait and
    steal shares of the CPU time since then."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    line = f"load {load} (1/5/15 min), {os.cpu_count()} CPUs"
    if since is not None:
        before, now = json.loads(since.read_text()), cpu_times()
        delta = {k: now[k] - before.get(k, 0) for k in now}
        total = sum(delta.values()) or 1
        busy = total - delta["idle"] - delta["iowait"] - delta["steal"]
        line += (
            f"; since the start: busy {100 * busy / total:.1f}%, iowait {100 * delta['iowait'] / total:.1f}%,"
            f" steal {100 * delta['steal'] / total:.1f}% of CPU time"
        )
    return line


def cpu_times() -> dict[str, int]:
    """The machine's CPU time so far by kind (``/proc/stat``'s first line, in clock ticks)."""
    values = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    return {name: int(v) for name, v in zip(_CPU_FIELDS, values, strict=False)}


def _path_of(case: ET.Element) -> str:
    """A test case's file: its ``file`` attribute, else its class name as a path."""
    file = case.get("file")
    if file:
        return file
    module = case.get("classname", "")
    return module.replace(".", "/") + ".py"


def _file_of(case: ET.Element) -> str:
    return _path_of(case).rsplit("/", 1)[-1]


def _seconds(case: ET.Element) -> float:
    return float(case.get("time", 0))


def _played_by(result: dict[str, Any]) -> str:
    """The implementation a test times: its reader, else its cleaner, else its writer (a cross test's time
    is its reader's read, plus the writer's output when the test is the first of its group)."""
    for role in ("reader", "cleaner", "writer"):
        if role in result:
            return str(result[role]).split(":", 1)[0]
    return ",".join(result["implementations"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("junit", type=Path, nargs="?", help="a JUnit XML of a run with workers")
    parser.add_argument(
        "--file-seconds", type=Path, help="write the JUnit's seconds by test file to this JSON file"
    )
    parser.add_argument("--machine", action="store_true", help="print the machine's load (and CPU shares)")
    parser.add_argument("--save", type=Path, help="with --machine: write the CPU times so far to this file")
    parser.add_argument("--since", type=Path, help="with --machine: CPU shares since this saved snapshot")
    args = parser.parse_args(argv)
    if args.machine:
        print(f"[machine] {machine(args.since)}")
        if args.save is not None:
            args.save.write_text(json.dumps(cpu_times()))
    if args.junit is not None and args.file_seconds is not None:
        measured = {path: round(s, 1) for path, s in sorted(file_seconds(args.junit).items())}
        document = {"junit": args.junit.name, "seconds": measured}
        args.file_seconds.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    elif args.junit is not None:
        print(schedule(from_junit(args.junit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
