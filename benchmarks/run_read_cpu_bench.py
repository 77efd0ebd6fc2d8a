"""Read CPU benchmark: what one Spark-backed read of the matrix costs, pass after pass, in one process.

A matrix worker (``delta-ckpt conformance run``, issue #15 item 7) keeps one Spark session for the
whole run and reads hundreds of tables with the delta-spark and the reference adapters. This script
does the same in small: it starts the two adapters (one session, the run's settings from
``DELTA_CKPT_SPARK_CONF``), then reads the first ``--fixtures`` tables of ``fixtures/valid`` at their
latest version with each adapter, ``--passes`` times over, and prints per pass and adapter the wall
time, the CPU time of this process and its children (the driver JVM; ``/proc``), and the 1-minute load.
CPU time is the figure to compare on a shared machine; run two settings side by side, e.g.::

    DELTA_CKPT_SPARK_CONF='{"spark.sql.codegen.wholeStage": "false"}' \\
        .venv/bin/python benchmarks/run_read_cpu_bench.py --fixtures 12 --passes 6
    DELTA_CKPT_SPARK_CONF='{"spark.sql.codegen.wholeStage": "false",
        "spark.driver.extraJavaOptions": "-Duser.timezone=UTC -XX:+UseSerialGC"}' \\
        .venv/bin/python benchmarks/run_read_cpu_bench.py --fixtures 12 --passes 6
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU seconds of ``root`` and its live descendants (``/proc/<pid>/stat``)."""
    tick = os.sysconf("SC_CLK_TCK")
    procs: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = (Path("/proc") / entry / "stat").read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        procs[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in procs.items():
        children.setdefault(parent, []).append(pid)
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        total += procs.get(pid, (0, 0.0))[1]
        stack.extend(children.get(pid, []))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=int, default=12, help="how many tables of fixtures/valid")
    parser.add_argument("--passes", type=int, default=6)
    args = parser.parse_args()

    from conformance.adapter import AdapterError, Implementation
    from conformance.adapters.delta_spark import DeltaSparkImplementation
    from conformance.adapters.reference import ReferenceImplementation

    adapters: dict[str, Implementation] = {
        "delta-spark": DeltaSparkImplementation(),
        "reference": ReferenceImplementation(),
    }
    tables = sorted(p.parent / "table" for p in (ROOT / "fixtures" / "valid").glob("*/fixture.json"))
    tables = tables[: args.fixtures]
    print(f"DELTA_CKPT_SPARK_CONF={os.environ.get('DELTA_CKPT_SPARK_CONF', '')!r}", flush=True)
    for n in range(args.passes):
        for name, adapter in adapters.items():
            wall, cpu = time.perf_counter(), tree_cpu_seconds(os.getpid())
            for table in tables:
                with contextlib.suppress(AdapterError):  # an expected error is a read too
                    adapter.read(table)
            wall, cpu = time.perf_counter() - wall, tree_cpu_seconds(os.getpid()) - cpu
            print(
                f"pass {n} {name}: {len(tables)} reads wall {wall:.1f}s cpu {cpu:.1f}s "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
