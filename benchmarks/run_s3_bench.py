"""S3 benchmark: a V2 checkpoint of the same table on the tests' S3 server (SeaweedFS) vs on local disk.

Spec: ``spec/checkpoints.md`` §19.4 Stores (issue #13, "Measured"). Each run is a fresh
``delta-ckpt checkpoint TABLE --spec v2 --json`` process (``local[2]``) on a fresh copy of a
synthetic V2 table (:mod:`synthetic_table`, ``--adds`` add actions in commits of 1,000): a
directory on local disk, or a fresh prefix of one SeaweedFS bucket (started for the benchmark on
127.0.0.1 by ``tests/support/servers/seaweed.py``; Spark's executors reach it through s3a with the
cached S3A connector jars). The contenders are **interleaved**: repetition ``r`` runs both, in an
order rotated by ``r``; ``--reps`` (default 3) repetitions give min/median/max. The results file is
rewritten after every repetition, so a run stopped early keeps the repetitions it finished.

Figures of a run: ``wall`` (the whole process), ``total`` (the command's own ``timingsSeconds.total``:
``write_checkpoint`` from its start to ``_last_checkpoint``, which includes starting Spark when the
session starts there), and on S3 the number of S3 requests the
server counted during the run by type (``SeaweedFS_s3_request_total`` from its metrics port,
after minus before: the driver's obstore client and the executors' s3a together). The 1-minute
load average is recorded before and after each run.

With ``--trace``, one more S3 run (not timed, after the repetitions) goes through a recording proxy
(``tests/support/servers/hold_proxy.py``, holding nothing) and attributes every request: which
client sent it (the driver's obstore, or Hadoop's S3A in the driver or an executor, by its
``User-Agent``), what it is (``HEAD``, ``GET``, ``LIST``, ``PUT``, ``COPY``, ``DELETE`` — SeaweedFS
counts a ``HEAD`` as a ``GET``) and on what (a commit, the staging directory's committer files
under ``_temporary``, other staged files, a sidecar, the top-level file, ``_last_checkpoint``).

Usage (the results file shows the command that produced it)::

    .venv/bin/python benchmarks/run_s3_bench.py --adds 100000 --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from synthetic_table import generate  # noqa: E402

from conformance.oracles.delta_jars import cached_s3a_jars  # noqa: E402
from reference_impl.storage import Location, storage_for  # noqa: E402
from tests.support.servers.hold_proxy import holding_proxy  # noqa: E402
from tests.support.servers.seaweed import S3Server, seaweed_s3  # noqa: E402

CONTENDERS = ("local", "s3")


def run_checkpoint(table: str, global_args: list[str], options: list[str]) -> dict[str, Any]:
    """One ``delta-ckpt GLOBAL… checkpoint TABLE --spec v2 --json OPTIONS…`` process: wall time, total, loads."""
    argv = [
        sys.executable,
        "-m",
        "reference_impl.cli",
        *global_args,
        "checkpoint",
        table,
        "--spec",
        "v2",
        "--json",
    ]
    argv += options
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    env = {**os.environ, "DELTA_CKPT_SPARK_MASTER": "local[2]"}
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{table}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    result = json.loads(proc.stdout)
    sidecars = sum(1 for f in result["files"] if f["role"] == "sidecar")
    return {
        "wall_s": round(wall, 2),
        "total_s": result["timingsSeconds"]["total"],
        "sidecars": sidecars,
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


#: What a request is on, by the key it names (or the prefix it lists), first match wins.
TARGETS = (
    ("commit", re.compile(r"_delta_log/\d{20}\.json$")),
    ("staging: committer (_temporary)", re.compile(r"\.delta-ckpt-staging-[^/]*/.*_temporary")),
    ("staging: other", re.compile(r"\.delta-ckpt-staging-")),
    ("sidecar", re.compile(r"_delta_log/_sidecars/")),
    ("top-level file", re.compile(r"_delta_log/\d{20}\.checkpoint\.")),
    ("_last_checkpoint", re.compile(r"_last_checkpoint$")),
)


def attribute(method: str, target: str, headers: dict[str, str]) -> tuple[str, str, str]:
    """``(client, operation, on what)`` of one request seen by the proxy."""
    client = "obstore (driver)" if "object_store" in headers.get("user-agent", "") else "s3a (Spark)"
    path, _, query = target.partition("?")
    params = urllib.parse.parse_qs(query, keep_blank_values=True)
    if "list-type" in params:
        operation, key = "LIST", params.get("prefix", [""])[0]
    elif "delete" in params:
        operation, key = "DELETE (batch)", path
    else:
        operation = "COPY" if "x-amz-copy-source" in headers else method
        key = urllib.parse.unquote(path)
    what = next((name for name, pattern in TARGETS if pattern.search(key.rstrip("/"))), "other")
    return client, operation, what


def trace(server: S3Server, source: Path, conf: list[str]) -> Counter[tuple[str, str, str]]:
    """One S3 run through a recording proxy: its requests counted by :func:`attribute`."""
    uri = upload(server, source, "bench-trace")
    with holding_proxy(server.endpoint, lambda method, target: False) as proxy:
        options = server.storage_options(AWS_ENDPOINT_URL=proxy.endpoint)
        run_checkpoint(uri, conf, [f"--storage-option={k}={v}" for k, v in options.items()])
    counted: Counter[tuple[str, str, str]] = Counter()
    for request, headers in zip(proxy.requests, proxy.headers, strict=True):
        method, _, target = request.partition(" ")
        counted[attribute(method, target, headers)] += 1
    return counted


def upload(server: S3Server, local: Path, prefix: str) -> str:
    """Copy the table's ``_delta_log`` to ``prefix`` of the bucket; its ``s3://`` URI."""
    root = Location.parse(server.uri(prefix))
    storage = storage_for(root, server.storage_options())
    for file in sorted((local / "_delta_log").iterdir()):
        storage.write_new(root / "_delta_log" / file.name, file.read_bytes())
    return root.uri


def summary(values: list[float]) -> str:
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adds", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "delta-ckpt-s3-bench")
    parser.add_argument("--results", type=Path, default=HERE / "S3_RESULTS.md")
    parser.add_argument("--trace", action="store_true", help="one more S3 run, its requests attributed")
    args = parser.parse_args(argv)
    jars = cached_s3a_jars()
    if jars is None:
        print("the S3A connector jars are not cached: run `delta-ckpt env --resolve-jars`", file=sys.stderr)
        return 2
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    source = args.work / "source"
    generate(source, args.adds, v2=True)
    rows: list[dict[str, Any]] = []
    with seaweed_s3(args.work / "s3") as server:
        conf = ["--conf", f"spark.jars={','.join(str(j) for j in jars)}"]
        options = [f"--storage-option={k}={v}" for k, v in server.storage_options().items()]
        for rep in range(args.reps):
            for contender in CONTENDERS[rep % 2 :] + CONTENDERS[: rep % 2]:
                if contender == "local":
                    table = args.work / f"local-{rep}"
                    shutil.copytree(source, table)
                    row = run_checkpoint(str(table), [], [])
                else:
                    uri = upload(server, source, f"bench-{rep}")
                    before = server.requests_by_type()
                    row = run_checkpoint(uri, conf, options)
                    row["requests"] = dict(sorted((server.requests_by_type() - before).items()))
                rows.append({"contender": contender, "rep": rep, **row})
                print(json.dumps(rows[-1]), flush=True)
            write_results(args, rows)  # after every repetition: a run stopped early keeps what it measured
        if args.trace:
            traced = trace(server, source, conf)
            for (client, operation, what), n in sorted(traced.items()):
                print(json.dumps({"trace": {"client": client, "operation": operation, "on": what, "n": n}}))
            write_results(args, rows, traced)
    return 0


def write_results(
    args: argparse.Namespace, rows: list[dict[str, Any]], traced: Counter[tuple[str, str, str]] | None = None
) -> None:
    command = "python benchmarks/run_s3_bench.py " + " ".join(sys.argv[1:])
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    done = len({r["rep"] for r in rows})
    reps = f"{done} interleaved repetitions" + (f" (of {args.reps} asked for)" if done < args.reps else "")
    lines = [
        "# S3 vs local disk: one V2 checkpoint (`benchmarks/run_s3_bench.py`)",
        "",
        f"Command: `{command}` — {args.adds:,} add actions, {reps}, "
        f"`local[2]`; commit {commit or 'unknown'}; {platform.node()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. The load column is the machine's 1-minute load average.",
        "",
        "| contender | wall s (min / median / max) | command total s (min / median / max) | sidecars | load before–after |",
        "|---|---|---|---|---|",
    ]
    for contender in CONTENDERS:
        mine = [r for r in rows if r["contender"] == contender]
        loads = [v for r in mine for v in (r["load_before"], r["load_after"])]
        lines.append(
            f"| {contender} | {summary([r['wall_s'] for r in mine])} | {summary([r['total_s'] for r in mine])} "
            f"| {mine[0]['sidecars']} | {min(loads):.1f}–{max(loads):.1f} |"
        )
    lines += ["", "S3 requests per checkpoint (counted by SeaweedFS, by type):", ""]
    for row in rows:
        if row["contender"] == "s3":
            counts = ", ".join(f"{k} {v}" for k, v in row["requests"].items())
            lines.append(f"- repetition {row['rep']}: {counts} (total {sum(row['requests'].values())})")
    if traced:
        lines += [
            "",
            f"Requests of one more S3 run through a recording proxy, attributed ({sum(traced.values())} in all):",
            "",
            "| client | operation | on | requests |",
            "|---|---|---|---|",
            *(f"| {c} | {o} | {w} | {n} |" for (c, o, w), n in sorted(traced.items(), key=lambda i: -i[1])),
        ]
    lines += ["", "Raw rows:", "", "```", *(json.dumps(r) for r in rows), "```", ""]
    args.results.write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
