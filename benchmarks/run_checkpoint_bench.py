"""Checkpoint benchmark: our writer and reader vs delta-spark, deltalake and a pyarrow floor.

Every run is a **fresh subprocess** (no shared JVM, no warm caches) on a fresh copy of a synthetic
table (:mod:`synthetic_table`: ``N`` adds in commits of 1,000, stats JSON of ~250 bytes each).
Contenders are **interleaved**: for each size, repetition ``r`` runs every contender once, in an
order rotated by ``r``; ``--reps`` (default 3) repetitions give min/median/max. The machine's
1-minute load average is recorded before and after every run (the machine may be shared: figures
are labelled with it), with versions, machine and the exact command.

| contender | table | what ``op`` times (inside the child) |
|---|---|---|
| ``ours-v2`` | v2 | ``delta-ckpt checkpoint --spec v2`` (replay, reconcile, write sidecars, read back, publish) |
| ``ours-v2-c2`` | v2 | the same with the JVM's default JIT/GC (``spark.driver.extraJavaOptions`` without the short-job flags) |
| ``ours-v2-json`` | v2 | the same with ``--stats json``: statistics as JSON only, no ``stats_parsed``/``partitionValues_parsed`` — the content deltalake's checkpoint has (its ``writeStatsAsStruct`` defaults to false; ours and delta-spark's to true) |
| ``ours-v1`` | classic | ``delta-ckpt checkpoint --spec v1`` |
| ``delta-spark-v2`` / ``-v1`` | v2 / classic | ``DeltaLog.forTable`` + ``update()`` + ``checkpoint()`` (delta-spark's default JVM flags) |
| ``deltalake`` | classic | ``DeltaTable(path)`` + ``create_checkpoint()`` (deltalake writes V1) |
| ``pyarrow-floor`` | classic | ``pyarrow.json`` reads the commits, one ``pq.write_table`` (zstd) of the add rows |
| ``ours-v2-incr`` | v2 + incremental checkpoint + 1 % | ``delta-ckpt checkpoint --spec v2 --incremental`` of a table whose previous version has our ``--incremental`` checkpoint and whose latest commit appends 1 % new adds |
| ``ours-v2-incr-full`` | v2 + incremental checkpoint + 1 % | ``delta-ckpt checkpoint --spec v2`` (a full write) of the same table |
| ``ours-snapshot`` | v2 + checkpoint | ``read_snapshot(...).summary()`` of a table whose latest version has our V2 checkpoint |
| ``delta-spark-snapshot`` | v2 + checkpoint | ``DeltaLog.forTable`` + ``update()`` + ``numOfFiles`` of the same table |
| ``cli-checkpoint`` / ``cli-snapshot`` | 10 commits | whole wall time of one ``delta-ckpt checkpoint`` / ``snapshot`` command (size-independent) |

Where ``op`` starts: for the delta-spark contenders and ``ours-snapshot`` after the child's Spark
session is up (JVM start-up excluded); for ``ours-v1``/``ours-v2``/``ours-v2-c2``/``ours-v2-json``/``ours-v2-incr*`` it is
the writer's own ``total`` (``--json`` ``timingsSeconds``), whose clock starts before its session is
ready, so it includes waiting for the JVM the CLI launched at process start (the part of JVM start-up
not overlapped by imports: the time of ``op`` outside its phases) — against ours, not for it.
``process`` is the child's whole wall time; **peak memory** is the peak of the summed RSS of the
child's process tree (Python + JVM), sampled from ``/proc`` every 100 ms.

Usage (``RESULTS.md`` shows the command that produced it)::

    .venv/bin/python benchmarks/run_checkpoint_bench.py --sizes 10000 100000 1000000 --reps 3
    .venv/bin/python benchmarks/run_checkpoint_bench.py --sizes 10000000 --only ours-v2 --reps 1   # opt-in 10M

``--only a,b`` runs a subset; ``--work DIR`` sets where tables go (default ``/tmp/delta-ckpt-bench``);
results go to ``--results`` (default ``benchmarks/RESULTS.md``), the raw rows next to it
(``results.json``) and the scaling plot to ``scaling.png`` when matplotlib (the ``bench`` extra) is
installed and the run has table sizes (a run of ``cli-*`` contenders only has none: no table, no plot).
``--render RESULTS_JSON`` re-renders one run's report; ``--merge RESULTS_JSON… --results OUT.md`` writes
one scaling table and plot (``scaling.png`` beside ``OUT.md``) from several runs — e.g. the 10M run with
the 10k–1M one — each figure one run's median labelled ``R<i> <commit>``, never combined across runs::

    .venv/bin/python benchmarks/run_checkpoint_bench.py --merge benchmarks/results.json \
        benchmarks/10m/results.json --results benchmarks/scaling/RESULTS.md

Not a test: CI runs it once at a tiny size (``tests/test_benchmark_smoke.py``); its reports are rendered
from committed runs in ``tests/test_benchmark_report.py``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from synthetic_table import append, generate  # noqa: E402

CONTENDERS = (
    "ours-v2", "ours-v2-c2", "ours-v2-json", "ours-v1", "delta-spark-v2", "delta-spark-v1", "deltalake", "pyarrow-floor",
    "ours-snapshot", "delta-spark-snapshot", "cli-checkpoint", "cli-snapshot", "ours-v2-incr",
    "ours-v2-incr-full",
)  # fmt: skip
DEFAULT_CONTENDERS = (
    "ours-v2", "delta-spark-v2", "deltalake", "pyarrow-floor", "ours-snapshot", "delta-spark-snapshot",
    "cli-checkpoint", "cli-snapshot",
)  # fmt: skip
TABLE_OF = {
    "ours-v1": "classic", "ours-v2": "v2", "ours-v2-c2": "v2", "ours-v2-json": "v2", "delta-spark-v1": "classic",
    "delta-spark-v2": "v2", "deltalake": "classic", "pyarrow-floor": "classic", "ours-snapshot": "v2cp",
    "delta-spark-snapshot": "v2cp", "cli-checkpoint": "small", "cli-snapshot": "small",
    "ours-v2-incr": "v2incr", "ours-v2-incr-full": "v2incr",
}  # fmt: skip
#: The "1 % change" of the incremental contenders' table: appended adds per 100 existing ones.
INCREMENTAL_CHANGE_PERCENT = 1
#: Contenders whose figure is the whole command's wall time (``process``), not ``op``.
WALL_CONTENDERS = frozenset({"cli-checkpoint", "cli-snapshot"})
SMALL_TABLE = (1_000, 100)  # adds, adds per commit: 10 commits
#: Plain JVM options (no short-job flags) for delta-spark and ``ours-v2-c2``.
DEFAULT_JAVA_OPTIONS = "spark.driver.extraJavaOptions=-Duser.timezone=UTC"
PYTHON = sys.executable


# --------------------------------------------------------------------------------------------------
# memory sampling of a process tree (/proc)
# --------------------------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            out = [int(p) for p in handle.read().split()]
    except OSError:
        pass
    return out


def _tree(pid: int) -> list[int]:
    seen, stack = [], [pid]
    while stack:
        current = stack.pop()
        seen.append(current)
        stack.extend(_children(current))
    return seen


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


class TreeMemorySampler:
    """Peak of the summed RSS of ``pid`` and all its descendants, sampled every ``interval`` s."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            total = sum(_rss_bytes(p) for p in _tree(self.pid))
            self.peak = max(self.peak, total)
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeMemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# --------------------------------------------------------------------------------------------------
# children (each runs in its own process)
# --------------------------------------------------------------------------------------------------


def child_delta_spark(table: str, driver_memory: str) -> dict[str, Any]:
    from conformance.oracles.delta_spark import delta_log
    from conformance.oracles.session import get_delta_spark

    spark = get_delta_spark("local[2]", [f"spark.driver.memory={driver_memory}", DEFAULT_JAVA_OPTIONS])
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    started = time.perf_counter()
    log = delta_log(spark, table)
    none = jvm.scala.Option.empty()
    snapshot = log.update(False, none, none)
    files = int(snapshot.numOfFiles())
    snapshot_s = time.perf_counter() - started
    log.checkpoint()
    op = time.perf_counter() - started
    return {
        "op": op,
        "phases": {"snapshot": round(snapshot_s, 3), "checkpoint": round(op - snapshot_s, 3)},
        "numAddFiles": files,
    }


def child_deltalake(table: str) -> dict[str, Any]:
    from deltalake import DeltaTable

    started = time.perf_counter()
    dt = DeltaTable(table)
    loaded = time.perf_counter() - started
    dt.create_checkpoint()
    op = time.perf_counter() - started
    return {"op": op, "phases": {"load": round(loaded, 3), "create_checkpoint": round(op - loaded, 3)}}


def child_pyarrow(table: str) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    started = time.perf_counter()
    log = Path(table) / "_delta_log"
    commits = sorted(p for p in log.iterdir() if p.name.endswith(".json") and p.name[:20].isdigit())
    first = [json.loads(line) for line in commits[0].read_text().splitlines()]
    partition_columns = next(a["metaData"]["partitionColumns"] for a in first if "metaData" in a)
    # pyarrow.json cannot parse into a map: read partitionValues as a struct, convert below.
    pv_struct = pa.struct([(c, pa.string()) for c in partition_columns])
    fields = [
        ("path", pa.string()),
        ("partitionValues", pv_struct),
        ("size", pa.int64()),
        ("modificationTime", pa.int64()),
        ("dataChange", pa.bool_()),
        ("stats", pa.string()),
    ]
    options = pj.ParseOptions(
        explicit_schema=pa.schema([("add", pa.struct(fields))]), unexpected_field_behavior="ignore"
    )
    adds = pa.concat_tables([pj.read_json(p, parse_options=options) for p in commits])
    adds = adds.filter(pc.is_valid(adds["add"])).combine_chunks()
    add = adds.column("add").chunk(0) if adds.num_rows else pa.array([], pa.struct(fields))
    n, k = len(add), len(partition_columns)
    pv = add.field("partitionValues")
    # struct -> map<string,string>: entries of row i are at offsets i*k .. i*k+k-1
    keys = pc.take(
        pa.array(partition_columns, pa.string()), pa.array([j % k for j in range(n * k)], pa.int32())
    )
    columns = (
        pa.concat_arrays([pv.field(c).cast(pa.string()) for c in partition_columns])
        if k
        else pa.array([], pa.string())
    )
    values = pc.take(columns, pa.array([(j % k) * n + j // k for j in range(n * k)], pa.int64()))
    pv_map = pa.MapArray.from_arrays(
        pa.array(range(0, n * k + 1, k) if k else [0] * (n + 1), pa.int32()), keys, values
    )
    checkpoint_add = pa.StructArray.from_arrays(
        [
            add.field("path"),
            pv_map,
            add.field("size"),
            add.field("modificationTime"),
            pa.array(itertools.repeat(False, n), pa.bool_()),
            add.field("stats"),
        ],
        names=["path", "partitionValues", "size", "modificationTime", "dataChange", "stats"],
    )
    rows = pa.table({"add": checkpoint_add})
    read_s = time.perf_counter() - started
    out = Path(table) / "_delta_log" / "floor.checkpoint.parquet.bench"
    pq.write_table(rows, out, compression="zstd")
    op = time.perf_counter() - started
    return {
        "op": op,
        "phases": {
            "read commits (pyarrow.json) and build rows": round(read_s, 3),
            "write parquet": round(op - read_s, 3),
        },
        "rows": rows.num_rows,
        "bytes": out.stat().st_size,
    }


def child_delta_spark_snapshot(table: str, driver_memory: str) -> dict[str, Any]:
    from conformance.oracles.delta_spark import delta_log
    from conformance.oracles.session import get_delta_spark

    spark = get_delta_spark("local[2]", [f"spark.driver.memory={driver_memory}", DEFAULT_JAVA_OPTIONS])
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    started = time.perf_counter()
    none = jvm.scala.Option.empty()
    files = int(delta_log(spark, table).update(False, none, none).numOfFiles())
    return {"op": time.perf_counter() - started, "phases": {}, "numAddFiles": files}


def child_ours_snapshot(table: str, driver_memory: str) -> dict[str, Any]:
    from reference_impl.read.snapshot import read_snapshot
    from reference_impl.spark.session import get_spark, settings_from_env

    spark = get_spark(settings_from_env("local[2]", [f"spark.driver.memory={driver_memory}"]))
    started = time.perf_counter()
    summary = read_snapshot(spark, table).summary()
    return {"op": time.perf_counter() - started, "phases": {}, "numAddFiles": summary["numFiles"]}


def run_child(kind: str, table: str, driver_memory: str) -> None:
    if kind == "delta-spark":
        result = child_delta_spark(table, driver_memory)
    elif kind == "delta-spark-snapshot":
        result = child_delta_spark_snapshot(table, driver_memory)
    elif kind == "ours-snapshot":
        result = child_ours_snapshot(table, driver_memory)
    elif kind == "deltalake":
        result = child_deltalake(table)
    elif kind == "pyarrow":
        result = child_pyarrow(table)
    else:
        raise SystemExit(f"unknown child {kind}")
    print("BENCH-RESULT " + json.dumps(result))


# --------------------------------------------------------------------------------------------------
# the parent
# --------------------------------------------------------------------------------------------------


@dataclass
class Measurement:
    contender: str
    adds: int
    rep: int
    ok: bool
    op_s: float | None
    process_s: float
    peak_rss_bytes: int
    load_before: float
    load_after: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def figure(self) -> float | None:
        """The figure compared: ``process`` for whole-command contenders, else ``op``."""
        if not self.ok:
            return None
        return self.process_s if self.contender in WALL_CONTENDERS else self.op_s


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _ours_cli(
    table: Path,
    driver_memory: str,
    spec: str,
    java: str | None = None,
    *,
    incremental: bool = False,
    stats: str | None = None,
) -> list[str]:
    """``delta-ckpt checkpoint TABLE --spec SPEC [--incremental] [--stats STATS] --json`` with the
    benchmark's Spark settings."""
    conf = ["--conf", f"spark.driver.memory={driver_memory}"]
    if java is not None:
        conf += ["--conf", java]
    cli = [PYTHON, "-m", "reference_impl.cli", "--master", "local[2]", *conf]
    mode = ["--incremental"] if incremental else []
    mode += ["--stats", stats] if stats else []
    return [*cli, "checkpoint", str(table), "--spec", spec, *mode, "--json"]


def _command(contender: str, table: Path, driver_memory: str) -> list[str]:
    if contender in ("ours-v1", "ours-v2", "ours-v2-c2", "ours-v2-json"):
        spec = contender.split("-")[1]
        java = DEFAULT_JAVA_OPTIONS if contender == "ours-v2-c2" else None
        stats = "json" if contender == "ours-v2-json" else None
        return _ours_cli(table, driver_memory, spec, java=java, stats=stats)
    if contender in ("ours-v2-incr", "ours-v2-incr-full"):
        return _ours_cli(table, driver_memory, "v2", incremental=contender == "ours-v2-incr")
    if contender == "cli-checkpoint":
        return [PYTHON, "-m", "reference_impl.cli", "checkpoint", str(table), "--json"]
    if contender == "cli-snapshot":
        return [PYTHON, "-m", "reference_impl.cli", "snapshot", str(table), "--json"]
    kind = {
        "delta-spark-v1": "delta-spark",
        "delta-spark-v2": "delta-spark",
        "deltalake": "deltalake",
        "pyarrow-floor": "pyarrow",
        "ours-snapshot": "ours-snapshot",
        "delta-spark-snapshot": "delta-spark-snapshot",
    }[contender]
    return [
        PYTHON,
        str(Path(__file__).resolve()),
        "--child",
        kind,
        "--table",
        str(table),
        "--driver-memory",
        driver_memory,
    ]


def _checkpoint_files(table: Path) -> dict[str, Any]:
    log = table / "_delta_log"
    names = sorted(p.name for p in log.iterdir() if ".checkpoint." in p.name and not p.name.startswith("."))
    sidecars = log / "_sidecars"
    side = sorted(p for p in sidecars.iterdir() if not p.name.startswith(".")) if sidecars.is_dir() else []
    size = sum((log / n).stat().st_size for n in names) + sum(p.stat().st_size for p in side)
    return {"files": names, "sidecars": len(side), "bytes": size}


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in (
        "DELTA_CKPT_FAULT",
        "DELTA_CKPT_SPARK_CONF",
        "DELTA_CKPT_SPARK_MASTER",
        "SPARK_LAUNCHER_OPTS",
    ):
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def measure(
    contender: str, adds: int, rep: int, source: Path, work: Path, driver_memory: str, timeout: float
) -> Measurement:
    table = work / f"run-{contender}-{adds}"
    if table.exists():
        shutil.rmtree(table)
    shutil.copytree(source, table)
    load = _load()
    started = time.perf_counter()
    proc = subprocess.Popen(
        _command(contender, table, driver_memory),
        cwd=ROOT,
        env=_child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    m = Measurement(contender, adds, rep, False, None, 0.0, 0, load)
    with TreeMemorySampler(proc.pid) as sampler:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            m.error = f"timed out after {timeout:.0f}s"
    m.process_s, m.peak_rss_bytes, m.load_after = time.perf_counter() - started, sampler.peak, _load()
    if m.error is None and proc.returncode != 0:
        m.error = f"exit {proc.returncode}: {' | '.join((err or '').strip().splitlines()[-3:])}"
    if m.error is None:
        m.ok = True
        m.detail = _checkpoint_files(table)
        if contender.startswith(("ours-v", "cli-")):
            result = json.loads(out)
            timings = dict(result.get("timingsSeconds", {}))
            m.op_s = float(timings.pop("total", m.process_s))
            m.phases = timings
            m.detail["numAddFiles"] = result.get("numAddFiles", result.get("numFiles"))
        else:
            line = next(text for text in out.splitlines() if text.startswith("BENCH-RESULT "))
            result = json.loads(line[len("BENCH-RESULT ") :])
            m.op_s, m.phases = float(result.pop("op")), dict(result.pop("phases"))
            m.detail.update(result)
    shutil.rmtree(table, ignore_errors=True)
    return m


def _version(dist: str) -> str:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    for text in Path("/proc/cpuinfo").read_text().splitlines():
        if text.startswith("model name"):
            return text.split(":", 1)[1].strip()
    return "?"


def environment() -> dict[str, str]:
    def run(cmd: list[str]) -> str:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        return (proc.stdout + proc.stderr).strip()

    from conformance.oracles.delta_jars import DELTA_VERSION
    from spec.spark_conf import SHORT_JOB_JAVA_OPTIONS

    return {
        "nproc": run(["nproc"]),
        "memory": run(["free", "-h"]).splitlines()[1],
        "cpu": _cpu_model(),
        "loadavg at start": Path("/proc/loadavg").read_text().strip(),
        "python": platform.python_version(),
        "java": run(["java", "-version"]).splitlines()[0],
        "pyspark": _version("pyspark"),
        "delta-spark (jar)": DELTA_VERSION,
        "deltalake": _version("deltalake"),
        "pyarrow": _version("pyarrow"),
        "our JVM flags (local mode)": SHORT_JOB_JAVA_OPTIONS,
        "git commit": run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]),
    }


def _fmt_s(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _fmt_mb(value: int) -> str:
    return f"{value / 2**20:,.0f}"


@dataclass
class Summary:
    """min/median/max of the compared figure of one contender at one size."""

    contender: str
    adds: int
    runs: list[Measurement]

    @property
    def figures(self) -> list[float]:
        return sorted(f for m in self.runs if (f := m.figure) is not None)

    @property
    def median(self) -> float | None:
        return statistics.median(self.figures) if self.figures else None

    def row(self) -> str:
        figs = self.figures
        loads = [m.load_before for m in self.runs] + [m.load_after for m in self.runs]
        errors = sorted({m.error for m in self.runs if m.error})
        rss = max((m.peak_rss_bytes for m in self.runs), default=0)
        n = "—" if self.adds < 0 else f"{self.adds:,}"
        return (
            f"| {n} | {self.contender} | {len(figs)}/{len(self.runs)} | {_fmt_s(figs[0] if figs else None)} | "
            f"{_fmt_s(self.median)} | {_fmt_s(figs[-1] if figs else None)} | {_fmt_mb(rss)} | "
            f"{min(loads):.1f}–{max(loads):.1f} | {'; '.join(errors)[:200]} |"
        )


def _summaries(results: list[Measurement]) -> dict[tuple[str, int], Summary]:
    out: dict[tuple[str, int], Summary] = {}
    for m in results:
        out.setdefault((m.contender, m.adds), Summary(m.contender, m.adds, [])).runs.append(m)
    return out


#: (label, numerator, denominator, size filter or None for every size, target ratio or None)
RATIOS: tuple[tuple[str, str, str, int | None, float | None], ...] = (
    ("ours V2 / delta-spark V2", "ours-v2", "delta-spark-v2", None, None),
    ("ours V2 / delta-spark V2 at 100k (target ≤ 0.3)", "ours-v2", "delta-spark-v2", 100_000, 0.3),
    ("ours V2 / delta-spark V2 at 1M (target ≤ 0.4)", "ours-v2", "delta-spark-v2", 1_000_000, 0.4),
    ("ours V2 / deltalake (V1) at 1M (target ≤ 1.2)", "ours-v2", "deltalake", 1_000_000, 1.2),
    ("ours V2 / deltalake (V1)", "ours-v2", "deltalake", None, None),
    ("ours V2 with JSON statistics only (deltalake's content) / deltalake (V1)", "ours-v2-json", "deltalake", None, None),
    ("ours V2 / pyarrow floor", "ours-v2", "pyarrow-floor", None, None),
    ("ours V2, short-job JVM flags / default JVM flags", "ours-v2", "ours-v2-c2", None, None),
    ("ours incremental / ours full, after a 1 % append (target ≤ 0.1)", "ours-v2-incr", "ours-v2-incr-full", None, 0.1),
    ("ours snapshot / delta-spark snapshot", "ours-snapshot", "delta-spark-snapshot", None, None),
    ("ours snapshot / delta-spark snapshot at 1M (target ≤ 0.5)", "ours-snapshot", "delta-spark-snapshot", 1_000_000, 0.5),
)  # fmt: skip
WALL_TARGETS = {"cli-checkpoint": 6.0, "cli-snapshot": 5.0}


def _ratio_lines(by: dict[tuple[str, int], Summary], sizes: list[int]) -> list[str]:
    lines = ["| ratio (of medians) | N adds | value | target |", "|---|---:|---:|---|"]
    for label, num, den, only, target in RATIOS:
        for n in sizes if only is None else [only]:
            a, b = by.get((num, n)), by.get((den, n))
            if a is None or b is None or a.median is None or not b.median:
                continue
            value = a.median / b.median
            verdict = "—" if target is None else ("met" if value <= target else f"NOT met (≤ {target})")
            lines.append(f"| {label} | {n:,} | {value:.2f}× | {verdict} |")
    for contender, limit in WALL_TARGETS.items():
        s = by.get((contender, -1))
        if s is not None and s.median is not None:
            verdict = "met" if s.median <= limit else f"NOT met (≤ {limit:.0f} s)"
            lines.append(f"| {contender} wall, 10-commit table (s) | — | {s.median:.1f} s | {verdict} |")
    return lines


@dataclass(frozen=True)
class Point:
    """One point of a scaling table or plot: a contender's median at one size in one run."""

    contender: str
    adds: int
    median: float
    run: str | None = None  # the run's label in a report merged from several runs (``--merge``)


def _points(by: dict[tuple[str, int], Summary], run: str | None = None) -> list[Point]:
    """The points of one run: every sized, non-wall contender with a median, by contender then size."""
    return [
        Point(c, n, s.median, run)
        for c in CONTENDERS
        if c not in WALL_CONTENDERS
        for n in sorted(size for (name, size) in by if name == c and size >= 0)
        if (s := by[(c, n)]).median is not None
    ]


def _scaling(points: list[Point]) -> list[str]:
    """Contenders x sizes; a cell lists every run's median at that size (a run's label with it, if any)."""
    sizes = sorted({p.adds for p in points})
    contenders = [c for c in CONTENDERS if any(p.contender == c for p in points)]
    lines = ["| contender | " + " | ".join(f"{n:,}" for n in sizes) + " |", "|---|" + "---:|" * len(sizes)]
    for c in contenders:
        cells = [
            "<br>".join(
                _fmt_s(p.median) + ("" if p.run is None else f" ({p.run})")
                for p in points
                if (p.contender, p.adds) == (c, n)
            )
            or "—"
            for n in sizes
        ]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return lines


def plot_lines(points: list[Point]) -> list[tuple[str, str | None, list[Point]]]:
    """The lines :func:`plot` draws: one per contender and run (``None`` for an unlabelled one), in
    :data:`CONTENDERS` order then run order, each through that run's points in increasing size — two runs
    at one size are two lines, never one line going back and forth between them."""
    lines = []
    for c in CONTENDERS:
        for run in dict.fromkeys(p.run for p in points if p.contender == c):
            mine = sorted((p for p in points if (p.contender, p.run) == (c, run)), key=lambda p: p.adds)
            lines.append((c, run, mine))
    return lines


def plot(
    points: list[Point], out: Path, title: str = "Checkpoint write / snapshot time vs table size"
) -> bool:
    """Median time vs size, log-log, as a PNG: the :func:`plot_lines`, a contender's in one colour (in the
    legend once), a point of a labelled run annotated with its label. False without matplotlib (the
    ``bench`` extra); the caller plots only when there are points."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    lines = plot_lines(points)
    colours = {c: f"C{i % 10}" for i, c in enumerate(dict.fromkeys(c for c, _run, _mine in lines))}
    legend: set[str] = set()
    for c, _run, mine in lines:
        label = None if c in legend else c
        legend.add(c)
        ax.plot([p.adds for p in mine], [p.median for p in mine], marker="o", color=colours[c], label=label)
        for p in mine:
            if p.run is not None:
                ax.annotate(p.run, (p.adds, p.median), textcoords="offset points", xytext=(4, 4), fontsize=6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("add actions in the table")
    ax.set_ylabel("median seconds (op)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def _plot_line(plotted: str | None) -> str:
    return (
        f"![scaling]({plotted})" if plotted else "(no plot: matplotlib, the `bench` extra, is not installed)"
    )


def report(results: list[Measurement], env: dict[str, str], command: str, plotted: str | None) -> str:
    """The run's RESULTS.md; ``plotted`` is the scaling plot's file name (None: not drawn)."""
    by = _summaries(results)
    sizes = sorted({m.adds for m in results if m.adds >= 0})
    points = _points(by)
    scaling = (
        [*_scaling(points), "", _plot_line(plotted)]
        if points
        else ["No table size in this run (its contenders time whole commands): no scaling table, no plot."]
    )
    lines = [
        "# Checkpoint benchmark",
        "",
        "Generated by `benchmarks/run_checkpoint_bench.py` — its module docstring says what each contender",
        "does and what is timed. Every figure below was printed by that run; nothing is hand-edited.",
        "",
        "## Command",
        "",
        "```bash",
        command,
        "```",
        "",
        "## Machine and versions",
        "",
        "| | |",
        "|---|---|",
        *[f"| {k} | {v.replace(chr(10), '<br>')} |" for k, v in env.items()],
        "",
        "## Results (seconds; min / median / max over the repetitions)",
        "",
        "`op` = the operation inside the child (JVM start-up excluded, except the wait for the JVM that our CLI starts at launch, inside `ours-v*`'s op); for `cli-*` the whole command's wall"
        " time. load = the 1-minute load average before and after each run (range).",
        "",
        "| N adds | contender | ok | min | median | max | peak RSS (MiB) | load | errors |",
        "|---:|---|---:|---:|---:|---:|---:|---|---|",
        *[by[k].row() for k in sorted(by, key=lambda k: (k[1], CONTENDERS.index(k[0])))],
        "",
        "## Ratios and targets",
        "",
        *_ratio_lines(by, sizes),
        "",
        "## Scaling (median op, seconds)",
        "",
        *scaling,
        "",
        "## Runs in order (phases of our writer from its own timings)",
        "",
        "| # | N | contender | rep | op | process | load before → after | phases |",
        "|---:|---:|---|---:|---:|---:|---|---|",
    ]
    for i, m in enumerate(results, start=1):
        phases = ", ".join(f"{k} {v:.1f}" for k, v in m.phases.items())
        lines.append(
            f"| {i} | {m.adds:,} | {m.contender} | {m.rep} | {_fmt_s(m.op_s)} | {m.process_s:.1f} | "
            f"{m.load_before:.1f} → {m.load_after:.1f} | {phases or (m.error or '')} |"
        )
    lines.append("")
    return "\n".join(lines)


def _source(work: Path, kind: str, n: int, driver_memory: str) -> Path:
    """The synthetic table of ``kind`` and size ``n`` (generated once, reused across runs)."""
    source = work / f"source-{kind}-{n}"
    marker = source / ".generated"
    if marker.exists():
        return source
    started = time.perf_counter()
    if kind == "small":
        generate(source, SMALL_TABLE[0], v2=True, adds_per_commit=SMALL_TABLE[1])
    elif kind == "v2cp":  # the v2 table with our V2 checkpoint at its latest version
        generate(source, n, v2=True)
        subprocess.run(
            _ours_cli(source, driver_memory, "v2"),
            cwd=ROOT,
            env=_child_env(),
            check=True,
            capture_output=True,
        )
    elif kind == "v2incr":  # our --incremental checkpoint at the latest version, then a 1 % append
        generate(source, n, v2=True)
        subprocess.run(
            _ours_cli(source, driver_memory, "v2", incremental=True),
            cwd=ROOT,
            env=_child_env(),
            check=True,
            capture_output=True,
        )
        append(source, max(1, n * INCREMENTAL_CHANGE_PERCENT // 100), start=n)
    else:
        generate(source, n, v2=kind == "v2")
    marker.write_text(str(n))
    print(f"generated {source} in {time.perf_counter() - started:.1f}s", flush=True)
    return source


def _command_line() -> str:
    return f"cd {ROOT} && .venv/bin/python benchmarks/run_checkpoint_bench.py {' '.join(sys.argv[1:])}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", default=",".join(DEFAULT_CONTENDERS), help="comma-separated contenders")
    parser.add_argument("--work", type=Path, default=Path("/tmp/delta-ckpt-bench"))
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--timeout", type=float, default=3600.0, help="per run, seconds")
    parser.add_argument("--results", type=Path, help="the report (default benchmarks/RESULTS.md)")
    parser.add_argument(
        "--render", type=Path, help="only write the report from a results.json (e.g. of a stopped run)"
    )
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        metavar="RESULTS_JSON",
        help="only write one scaling table and plot from several runs' results.json (needs --results)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.table, args.driver_memory)
        return
    if args.merge:
        if args.results is None:
            parser.error("--merge needs --results (not to overwrite benchmarks/RESULTS.md)")
        missing = [str(p) for p in args.merge if not p.is_file()]
        if missing:
            parser.error(f"--merge: no such results.json: {', '.join(missing)}")
        merge(args.merge, args.results, _command_line())
        return
    args.results = args.results or HERE / "RESULTS.md"
    if args.render:
        render(args.render, args.results)
        return
    contenders = [c for c in args.only.split(",") if c]
    unknown = set(contenders) - set(CONTENDERS)
    if unknown:
        raise SystemExit(f"unknown contender(s): {sorted(unknown)}; known: {CONTENDERS}")
    command = _command_line()
    env = environment()
    args.work.mkdir(parents=True, exist_ok=True)
    args.results.parent.mkdir(parents=True, exist_ok=True)  # before the first run, not after it
    results: list[Measurement] = []
    raw_path = args.results.with_name(args.results.stem.lower() + ".json")  # RESULTS.md -> results.json
    groups = [(-1, [c for c in contenders if c in WALL_CONTENDERS])]
    groups += [(n, [c for c in contenders if c not in WALL_CONTENDERS]) for n in args.sizes]
    for n, members in groups:
        if not members:
            continue
        sources = {TABLE_OF[c]: _source(args.work, TABLE_OF[c], n, args.driver_memory) for c in members}
        for rep in range(args.reps):
            shift = rep % len(members)
            for contender in members[shift:] + members[:shift]:  # interleaved, order rotated per rep
                label = "10 commits" if n < 0 else f"N={n:,}"
                print(f"{label} rep {rep} {contender} (load {_load():.2f}) …", flush=True)
                m = measure(
                    contender,
                    n,
                    rep,
                    sources[TABLE_OF[contender]],
                    args.work,
                    args.driver_memory,
                    args.timeout,
                )
                results.append(m)
                print(
                    f"  op {_fmt_s(m.op_s)}s, process {m.process_s:.1f}s, peak {_fmt_mb(m.peak_rss_bytes)} MiB, "
                    f"load after {m.load_after:.2f}" + (f", ERROR {m.error}" if m.error else ""),
                    flush=True,
                )
                raw = {"command": command, "environment": env, "runs": [m.__dict__ for m in results]}
                raw_path.write_text(json.dumps(raw, indent=2) + "\n")
    write_report(results, env, command, args.results)


def write_report(results: list[Measurement], env: dict[str, str], command: str, out: Path) -> None:
    """``out`` (RESULTS.md) and, when the run has sizes to plot, the scaling plot next to it."""
    png = out.with_name("scaling.png")
    points = _points(_summaries(results))
    plotted = png.name if points and plot(points, png) else None
    text = report(results, env, command, plotted)
    out.write_text(text)
    print(text)


def _raw(raw_path: Path) -> dict[str, Any]:
    """A results.json: ``command``, ``environment`` (None when not recorded) and ``runs``."""
    data = json.loads(raw_path.read_text())
    if isinstance(data, list):  # written before the file recorded its command and machine
        data = {"command": None, "environment": None, "runs": data}
    return dict(data)


def render(raw_path: Path, out: Path) -> None:
    """The report of the runs recorded in ``raw_path`` (written after every run)."""
    data = _raw(raw_path)
    results = [Measurement(**row) for row in data["runs"]]
    command = data["command"] or "(not recorded in " + raw_path.name + ")"
    env = data["environment"] or {**environment(), "loadavg at start": "not recorded"}
    write_report(
        results, env, command + f"\n# report rendered from {raw_path.name} ({len(results)} runs)", out
    )


def merge(raw_paths: list[Path], out: Path, command: str) -> None:
    """One scaling table and plot (``out`` and ``scaling.png`` next to it) from several runs' results.json.

    Run ``i`` is labelled ``R<i> <commit>``; every figure is one run's median over its own repetitions,
    shown with that label, and no figure combines runs: two runs at one size are two entries (two points).
    """
    raws = [(path, _raw(path)) for path in raw_paths]
    runs = [
        (f"R{i} {(data['environment'] or {}).get('git commit', '?')}", path, data)
        for i, (path, data) in enumerate(raws, start=1)
    ]
    points: list[Point] = []
    details: list[str] = []
    for label, _path, data in runs:
        by = _summaries([Measurement(**row) for row in data["runs"]])
        points += _points(by, label)
        details += [
            f"| {label} " + by[k].row() for k in sorted(by, key=lambda k: (k[1], CONTENDERS.index(k[0])))
        ]
    commits = sorted({label.split(" ", 1)[1] for label, _path, _data in runs})
    png = out.with_name("scaling.png")
    out.parent.mkdir(parents=True, exist_ok=True)
    plotted = (
        png.name
        if points and plot(points, png, "Median time vs table size, by run (R<i> <commit>)")
        else None
    )
    lines = [
        "# Checkpoint benchmark: scaling across runs",
        "",
        "Merged by `benchmarks/run_checkpoint_bench.py --merge` from the runs below; every figure was printed",
        "by one of them (its own command, machine and load are in its RESULTS.md / results.json).",
        "",
        "```bash",
        command,
        "```",
        "",
        "## Runs",
        "",
        "| run | results.json | command | load (1-min, range over its runs) |",
        "|---|---|---|---|",
    ]
    for label, path, data in runs:
        loads = [x for row in data["runs"] for x in (row["load_before"], row["load_after"])]
        load = f"{min(loads):.1f}–{max(loads):.1f}" if loads else "—"
        lines.append(f"| {label} | {path} | `{data['command'] or 'not recorded'}` | {load} |")
    lines += [
        "",
        (
            f"The runs are of {len(commits)} commits ({', '.join(commits)}): figures of different commits are"
            " different code."
            if len(commits) > 1
            else f"Every run is of commit {commits[0]}."
        )
        + " Each figure is one run's median over its own repetitions, labelled with its run; no figure"
        " averages or otherwise combines runs (two runs at one size are two entries, two points).",
        "",
        "## Scaling (median op, seconds; run in brackets)",
        "",
        *(_scaling(points) if points else ["No run has a table size: no scaling table, no plot."]),
        "",
    ]
    if points:
        lines += [_plot_line(plotted), ""]
    lines += [
        "## Every run's summaries",
        "",
        "| run | N adds | contender | ok | min | median | max | peak RSS (MiB) | load | errors |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|---|",
        *details,
        "",
    ]
    text = "\n".join(lines)
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
