"""Where the full V2 write's one job spends its time (issue #12): its DataFrame run to different ends.

The V2 writer replays, reconciles, shapes, sorts and writes the sidecars in one Spark job. This script
runs that job's DataFrame — as the writer built it, handed over by the writer's own seam
(:meth:`reference_impl.hooks.Hooks.prepare`, called right before the sidecars are written) — to other
ends first, then lets the real write go on:

| variant | the DataFrame run to |
|---|---|
| ``noop`` | Spark's ``noop`` sink: replay, reconciliation, shaping and sort, nothing written |
| ``spark-parquet`` | Spark's own Parquet writer, into a scratch directory (how sidecars were written before issue #13) |
| ``write`` | the real write (Arrow batches to the sidecar tasks, pyarrow's encoding, the store's sink) and its read-back check |

``--stats json`` writes the checkpoint without ``stats_parsed`` (the CLI's ``--stats``): the same
variants then show what the ``from_json`` of every ``stats`` costs. (Dropping the field from the
finished DataFrame would not: Spark still computes the struct it is dropped from.)

Each repetition is a new process (a new JVM) on a fresh copy of the table; the DataFrame is first run
once to ``noop`` unmeasured (the JVM's warm-up: its JIT, Spark's generated code), then to each
variant, in an order rotated from the repetition before, then written. Per variant it prints the wall time, the CPU seconds of the
process tree (the driver JVM and Spark's Python workers: ``/proc``) and the 1-minute load; at the end
min / median / max per variant. CPU is the figure to compare on a shared machine.

Usage::

    DELTA_CKPT_CACHE=.cache .venv/bin/python benchmarks/profile_write_job.py /tmp/bench/t1m --reps 3

(the table: ``benchmarks/synthetic_table.py /tmp/bench/t1m --adds 1000000 --v2``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_read_cpu_bench import tree_cpu_seconds

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ("noop", "spark-parquet")
WRITE = "write"


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _measure(label: str, run: Callable[[], object]) -> dict[str, Any]:
    load, cpu, started = _load(), tree_cpu_seconds(os.getpid()), time.perf_counter()
    run()
    wall, used = time.perf_counter() - started, tree_cpu_seconds(os.getpid()) - cpu
    return {"variant": label, "wall": round(wall, 2), "cpu": round(used, 2), "load": load}


def _run_to(variant: str, df: DataFrame, scratch: Path) -> None:

    if variant == "noop":
        df.write.format("noop").mode("overwrite").save()
    elif variant == "spark-parquet":
        df.write.parquet(str(scratch / "spark-parquet"))
    else:
        raise ValueError(f"unknown variant {variant!r}")


def _bound(variant: str, df: DataFrame, scratch: Path) -> Callable[[], None]:
    return lambda: _run_to(variant, df, scratch)


class _Profile:
    """Hooks that run the sidecar job's DataFrame to each variant, then let the writer write it."""

    def __init__(self, variants: list[str], scratch: Path) -> None:
        self.variants, self.scratch = variants, scratch
        self.results: list[dict[str, Any]] = []
        self.write_started = 0.0
        self.write_cpu = 0.0

    def reached(self, point: object, count: int | None = None) -> None:
        if str(point) == "staged" and self.write_started:  # the sidecars are written and read back
            wall = time.perf_counter() - self.write_started
            cpu = tree_cpu_seconds(os.getpid()) - self.write_cpu
            self.results.append(
                {"variant": WRITE, "wall": round(wall, 2), "cpu": round(cpu, 2), "load": _load()}
            )
            self.write_started = 0.0

    def prepare(self, df: DataFrame) -> DataFrame:
        _run_to("noop", df, self.scratch)  # warm-up, not measured: every variant runs on a warm JVM
        for variant in self.variants:
            self.results.append(_measure(variant, _bound(variant, df, self.scratch)))
        self.write_started, self.write_cpu = time.perf_counter(), tree_cpu_seconds(os.getpid())
        return df


def child(table: Path, variants: list[str], master: str, driver_memory: str, stats: str | None) -> None:
    """One repetition, in this process: the V2 write of a copy of ``table`` with the variants first."""
    from reference_impl.cli.main import main

    with tempfile.TemporaryDirectory(prefix="profile-write-") as tmp:
        work = Path(tmp)
        shutil.copytree(table, work / "table")
        hooks = _Profile(variants, work)
        argv = ["--master", master, "--conf", f"spark.driver.memory={driver_memory}"]
        options = ["--spec", "v2", "--json", *(["--stats", stats] if stats else [])]
        code = main([*argv, "checkpoint", str(work / "table"), *options], hooks=hooks)
        print("RESULT " + json.dumps({"exit": code, "runs": hooks.results}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("table", type=Path)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help="comma-separated, run before the write"
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--stats", help="the CLI's --stats (json, struct, both; default: table properties)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    if args.child:
        child(args.table, variants, args.master, args.driver_memory, args.stats)
        return
    print(f"command: {' '.join([sys.executable, *sys.argv])}", flush=True)
    runs: list[dict[str, Any]] = []
    for rep in range(args.reps):
        order = variants[rep % len(variants) :] + variants[: rep % len(variants)] if variants else []
        command = [sys.executable, __file__, str(args.table), "--child", "--variants", ",".join(order)]
        command += ["--master", args.master, "--driver-memory", args.driver_memory]
        command += ["--stats", args.stats] if args.stats else []
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False).stdout
        lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
        if not lines:
            raise SystemExit(f"repetition {rep} printed no result:\n{out[-2000:]}")
        result = json.loads(lines[-1].removeprefix("RESULT "))
        for run in result["runs"]:
            print(
                f"rep {rep} {run['variant']:22} wall {run['wall']:6.1f} s  cpu {run['cpu']:6.1f} s  load {run['load']}"
            )
            runs.append(run)
    print("\n| variant | runs | wall min / median / max (s) | CPU min / median / max (s) | loads |")
    print("|---|---|---|---|---|")
    for variant in [*variants, WRITE]:
        mine = [r for r in runs if r["variant"] == variant]
        if not mine:
            continue
        loads = [r["load"] for r in mine]
        walls, cpus = _spread([r["wall"] for r in mine]), _spread([r["cpu"] for r in mine])
        print(f"| {variant} | {len(mine)} | {walls} | {cpus} | {min(loads)}–{max(loads)} |")


def _spread(values: list[float]) -> str:
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


if __name__ == "__main__":
    main()
