"""Checkpoint-writing benchmark: our V1/V2 writer vs delta-spark, deltalake and a pyarrow floor.

For each size N (default 100,000 and 1,000,000 ``add`` actions) two synthetic tables are generated
with :mod:`synthetic_table` — one classic (protocol 1/2), one with ``v2Checkpoint`` and
``delta.checkpointPolicy=v2`` — and every contender checkpoints a fresh copy of the right one, each
in its **own subprocess** (no shared JVM, no warm caches):

| contender | table | what is timed (``op``) |
|---|---|---|
| ``ours-v1`` | classic | ``delta-ckpt checkpoint --spec v1`` (replay, reconcile, write, verify, publish, ``_last_checkpoint``) |
| ``ours-v2`` | v2 | ``delta-ckpt checkpoint --spec v2`` (UUID-named JSON top-level file, 50,000 actions per sidecar) |
| ``delta-spark-v1`` | classic | ``DeltaLog.forTable`` + ``update()`` (snapshot) + ``checkpoint()`` |
| ``delta-spark-v2`` | v2 | the same; delta-spark writes a UUID-named V2 checkpoint (JSON top-level file) |
| ``deltalake`` | classic | ``DeltaTable(path)`` + ``create_checkpoint()`` |
| ``pyarrow-floor`` | classic | ``pyarrow.json`` reads the commits, one ``pq.write_table`` (zstd) of the add rows |

``op`` excludes interpreter and JVM start-up (it is timed inside the child); ``process`` is the
child's whole wall time. **Peak memory** is the peak of the summed RSS of the child's whole process
tree (Python driver + JVM + Python workers), sampled from ``/proc`` every 100 ms by the parent.

Usage (the command that produced ``RESULTS.md``)::

    .venv/bin/python benchmarks/run_checkpoint_bench.py --sizes 100000 1000000 --driver-memory 8g

``--only ours-v2,delta-spark-v2`` runs a subset; ``--work DIR`` sets where tables go (default
``/tmp/delta-ckpt-bench``); results go to ``benchmarks/RESULTS.md`` (``--results``) and the raw
figures next to it (``results.json``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
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

from synthetic_table import generate  # noqa: E402

CONTENDERS = ("ours-v1", "ours-v2", "delta-spark-v1", "delta-spark-v2", "deltalake", "pyarrow-floor")
TABLE_OF = {
    "ours-v1": "classic", "ours-v2": "v2", "delta-spark-v1": "classic", "delta-spark-v2": "v2",
    "deltalake": "classic", "pyarrow-floor": "classic",
}  # fmt: skip
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

    spark = get_delta_spark("local[2]", [f"spark.driver.memory={driver_memory}"])
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


def run_child(kind: str, table: str, driver_memory: str) -> None:
    if kind == "delta-spark":
        result = child_delta_spark(table, driver_memory)
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
    ok: bool
    op_s: float | None
    process_s: float
    peak_rss_bytes: int
    phases: dict[str, float] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def _command(contender: str, table: Path, driver_memory: str) -> list[str]:
    if contender.startswith("ours-"):
        spec = contender.split("-")[1]
        return [
            PYTHON,
            "-m",
            "reference_impl.cli",
            "--master",
            "local[2]",
            "--conf",
            f"spark.driver.memory={driver_memory}",
            "checkpoint",
            str(table),
            "--spec",
            spec,
            "--json",
        ]
    kind = {
        "delta-spark-v1": "delta-spark",
        "delta-spark-v2": "delta-spark",
        "deltalake": "deltalake",
        "pyarrow-floor": "pyarrow",
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


def measure(
    contender: str, adds: int, source: Path, work: Path, driver_memory: str, timeout: float
) -> Measurement:
    table = work / f"run-{contender}-{adds}"
    if table.exists():
        shutil.rmtree(table)
    shutil.copytree(source, table)
    env = dict(os.environ)
    env.pop("DELTA_CKPT_FAULT", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    started = time.perf_counter()
    proc = subprocess.Popen(
        _command(contender, table, driver_memory),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with TreeMemorySampler(proc.pid) as sampler:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            return Measurement(
                contender,
                adds,
                False,
                None,
                time.perf_counter() - started,
                sampler.peak,
                error=f"timed out after {timeout:.0f}s",
            )
    process_s = time.perf_counter() - started
    if proc.returncode != 0:
        tail = (err or "").strip().splitlines()[-3:]
        return Measurement(
            contender,
            adds,
            False,
            None,
            process_s,
            sampler.peak,
            error=f"exit {proc.returncode}: {' | '.join(tail)}",
        )
    detail = _checkpoint_files(table)
    if contender.startswith("ours-"):
        result = json.loads(out)
        phases = dict(result["timingsSeconds"])
        op = float(phases.pop("total"))
        detail["numAddFiles"] = result["numAddFiles"]
    else:
        line = next(text for text in out.splitlines() if text.startswith("BENCH-RESULT "))
        result = json.loads(line[len("BENCH-RESULT ") :])
        op, phases = float(result.pop("op")), dict(result.pop("phases"))
        detail.update(result)
    shutil.rmtree(table, ignore_errors=True)
    return Measurement(contender, adds, True, op, process_s, sampler.peak, phases, detail)


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

    sys.path.insert(0, str(ROOT))
    from conformance.oracles.delta_jars import DELTA_VERSION

    return {
        "nproc": run(["nproc"]),
        "free -h": run(["free", "-h"]),
        "cpu": _cpu_model(),
        "loadavg at start": Path("/proc/loadavg").read_text().strip(),
        "python": platform.python_version(),
        "java": run(["java", "-version"]).splitlines()[0],
        "pyspark": _version("pyspark"),
        "delta-spark (jar)": DELTA_VERSION,
        "deltalake": _version("deltalake"),
        "pyarrow": _version("pyarrow"),
    }


def _fmt_s(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _fmt_mb(value: int) -> str:
    return f"{value / 2**20:,.0f}"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "—"
    return f"{a / b:.2f}×"


def report(results: list[Measurement], env: dict[str, str], command: str) -> str:
    by = {(m.contender, m.adds): m for m in results}
    sizes = sorted({m.adds for m in results})
    lines = [
        "# Checkpoint-writing benchmark",
        "",
        "Generated by `benchmarks/run_checkpoint_bench.py` (figures) — see its module docstring for",
        "what each contender does and what is timed.",
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
    ]
    for key, value in env.items():
        lines.append(f"| {key} | {value.replace(chr(10), '<br>')} |")
    lines += [
        "",
        "## Results",
        "",
        "`op` = seconds for the checkpoint itself (log replay included, process/JVM start-up excluded); "
        "`process` = the subprocess's whole wall time; peak RSS = whole process tree (driver + JVM + "
        'workers). Ratios are of `op`; "vs delta-spark" is to delta-spark\'s checkpoint of the same spec '
        "(V1 for deltalake and the floor). The floor writes only the basic `add` fields (no parsed stats "
        "columns). loadavg = the machine's 1-minute load average when the run started (other processes "
        "were running).",
        "",
        "| N adds | contender | op (s) | process (s) | peak RSS (MiB) | vs delta-spark | vs pyarrow floor | files written | loadavg before |",
        "|---:|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for n in sizes:
        floor = by.get(("pyarrow-floor", n))
        for contender in CONTENDERS:
            m = by.get((contender, n))
            if m is None:
                continue
            peer = {
                "ours-v1": "delta-spark-v1",
                "ours-v2": "delta-spark-v2",
                "delta-spark-v2": "delta-spark-v2",
            }.get(contender, "delta-spark-v1")
            ds = by.get((peer, n))
            files = (
                m.error
                if not m.ok
                else (
                    f"{len(m.detail.get('files', []))} top-level/part file(s), {m.detail.get('sidecars', 0)} sidecar(s), "
                    f"{m.detail.get('bytes', 0) / 2**20:,.1f} MiB"
                )
            )
            lines.append(
                f"| {n:,} | {contender} | {_fmt_s(m.op_s)} | {_fmt_s(m.process_s)} | {_fmt_mb(m.peak_rss_bytes)} | "
                f"{_ratio(m.op_s, ds.op_s if ds else None) if contender != peer else '1.00×'} | "
                f"{_ratio(m.op_s, floor.op_s if floor else None)} | {files} | {m.detail.get('loadavg_before', '?')} |"
            )
    lines += ["", "## Phases", ""]
    for n in sizes:
        for contender in CONTENDERS:
            m = by.get((contender, n))
            if m is None or not m.phases:
                continue
            phases = ", ".join(f"{k} {v:.1f}s" for k, v in m.phases.items())
            lines.append(f"- **{contender}, N={n:,}**: {phases}")
    lines.append("")
    big = max(sizes) if sizes else -1
    ours, theirs = by.get(("ours-v2", big)), by.get(("delta-spark-v2", big))
    lines += ["## Our V2 writer vs delta-spark's V2 at the largest N", ""]
    if ours and theirs and ours.op_s is not None and theirs.op_s is not None:
        diff = ours.op_s - theirs.op_s
        if diff > 0:
            top = sorted(ours.phases.items(), key=lambda kv: kv[1], reverse=True)[:4]
            lines.append(
                f"At N={big:,} our V2 writer took {ours.op_s:.1f}s, delta-spark's {theirs.op_s:.1f}s: "
                f"**{diff:.1f}s ({diff / theirs.op_s:.0%}) slower**. Largest phases: "
                + ", ".join(f"{k} {v:.1f}s" for k, v in top)
                + "."
            )
        else:
            lines.append(
                f"At N={big:,} our V2 writer took {ours.op_s:.1f}s, delta-spark's {theirs.op_s:.1f}s: "
                f"at or below delta-spark ({-diff:.1f}s faster)."
            )
    else:
        lines.append("Not measured (a run failed or was skipped; see the table).")
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--only", default=",".join(CONTENDERS), help="comma-separated contenders")
    parser.add_argument("--work", type=Path, default=Path("/tmp/delta-ckpt-bench"))
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--timeout", type=float, default=3600.0, help="per run, seconds")
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.table, args.driver_memory)
        return
    contenders = [c for c in args.only.split(",") if c]
    unknown = set(contenders) - set(CONTENDERS)
    if unknown:
        raise SystemExit(f"unknown contender(s): {sorted(unknown)}; known: {CONTENDERS}")
    command = (
        "cd "
        + str(ROOT)
        + " && .venv/bin/python benchmarks/run_checkpoint_bench.py "
        + " ".join(sys.argv[1:])
    )
    env = environment()
    args.work.mkdir(parents=True, exist_ok=True)
    results: list[Measurement] = []
    raw_path = args.results.with_name(args.results.stem.lower() + ".json")  # RESULTS.md -> results.json
    for n in args.sizes:
        sources = {}
        for kind in ("classic", "v2"):
            source = args.work / f"source-{kind}-{n}"
            marker = source / ".generated"
            if not marker.exists():
                started = time.perf_counter()
                generate(source, n, v2=kind == "v2")
                marker.write_text(str(n))
                print(f"generated {source} in {time.perf_counter() - started:.1f}s", flush=True)
            sources[kind] = source
        for contender in contenders:
            load = Path("/proc/loadavg").read_text().split()[0]
            print(f"N={n:,} {contender} (loadavg {load}) …", flush=True)
            m = measure(
                contender, n, sources[TABLE_OF[contender]], args.work, args.driver_memory, args.timeout
            )
            m.detail["loadavg_before"] = load
            results.append(m)
            print(
                f"  op {_fmt_s(m.op_s)}s, process {m.process_s:.1f}s, peak {_fmt_mb(m.peak_rss_bytes)} MiB"
                + (f", ERROR {m.error}" if m.error else ""),
                flush=True,
            )
            raw_path.write_text(json.dumps([m.__dict__ for m in results], indent=2) + "\n")
    text = report(results, env, command)
    args.results.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
