"""The matrix over several processes (``conformance run --workers N``: pytest-xdist, ``--dist loadgroup``).

Issue #15 item 7: spreading the run over the machine's cores must change nothing in the reports — the
same test IDs with the same outcomes and scores in results.json (in collection order), the same JUnit
test cases, the implementations listed — and each implementation output must still be made once: the
tests of one writer profile on one shape (its writer tests and the cross tests reading it) share a
group (:mod:`conformance.scheduling`), run in one worker, and so share one written table.

The nested runs use the deltalake example program (``conformance/examples/deltalake_harness.py``) as
writer and reader: no Spark, no JVM.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import MAX_AUTO_WORKERS, RUN_SPARK_CONF, run_spark_conf, run_spark_environment, workers
from conformance.plugin import xdist_group
from reference_impl.cli.main import build_parser
from reference_impl.spark.session import settings_from_env
from spec.schemas import validator
from spec.spark_conf import ENV_CONF, ENV_MASTER, conf_from_env

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "conformance" / "examples" / "deltalake_harness.py"
SHAPES = "partitioned,empty"


def _run(pytester: pytest.Pytester, name: str, *extra: str) -> tuple[dict[str, Any], Path, Path]:
    out = pytester.path / name
    out.mkdir()
    basetemp = out / "tmp"
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        f"--basetemp={basetemp}",
        "--pyargs",
        "conformance.suite.test_writer_output",
        "conformance.suite.test_cross",
        "--impl-cmd",
        f"dl={sys.executable} {HARNESS}",
        "--ckpt-shapes",
        SHAPES,
        "--ckpt-results",
        str(out / "results.json"),
        f"--junitxml={out / 'junit.xml'}",
        *extra,
    )
    assert result.ret in (0, 1), f"{name}: pytest exit status {result.ret}:\n{result.stdout.str()[-3000:]}"
    return json.loads((out / "results.json").read_text()), out / "junit.xml", basetemp


def _cases(junit: Path) -> list[tuple[str, str, tuple[str, ...], tuple[tuple[str, str], ...]]]:
    cases = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome = tuple(sorted(c.tag for c in case if c.tag in ("failure", "error", "skipped")))
        props = tuple(sorted((p.get("name", ""), p.get("value", "")) for p in case.iter("property")))
        cases.append((case.get("classname", ""), case.get("name", ""), outcome, props))
    return sorted(cases)


def _written(basetemp: Path) -> Counter[str]:
    """How many times each writer output (``<writer>-<profile>-<shape>`` directory) was made."""
    pattern = re.compile(r"^dl-[\w.-]+-(?:partitioned|empty)\d+$")
    return Counter(re.sub(r"\d+$", "", d.name) for d in basetemp.rglob("dl-*") if pattern.match(d.name))


@pytest.mark.deltalake
@pytest.mark.slow
def test_two_workers_report_what_one_process_reports(pytester: pytest.Pytester) -> None:
    """``-n 2 --dist loadgroup`` gives the results.json entries (IDs, outcomes, scores, order), the JUnit
    test cases and the implementations of a run in one process, and writes each output once; each entry names
    the worker that ran it and when (one worker per group), so a run's schedule can be read afterwards."""
    serial, serial_junit, serial_tmp = _run(pytester, "serial")
    parallel, parallel_junit, parallel_tmp = _run(pytester, "parallel", "-n", "2", "--dist", "loadgroup")

    def entries(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [(r["nodeid"], r["outcome"], json.dumps(r["scores"], sort_keys=True)) for r in doc["results"]]

    assert entries(serial), "the serial run recorded no results"
    assert entries(parallel) == entries(serial), (
        f"results.json differs: serial {len(serial['results'])} entries, parallel {len(parallel['results'])}; "
        f"first differences: {[e for e in entries(parallel) if e not in entries(serial)][:3]}"
    )
    assert parallel["implementations"] == serial["implementations"], parallel["implementations"]
    assert _cases(parallel_junit) == _cases(serial_junit), f"JUnit test cases differ ({parallel_junit})"
    made = _written(parallel_tmp)
    assert made and made == _written(serial_tmp), (
        f"outputs made: parallel {made}, serial {_written(serial_tmp)}"
    )
    assert set(made.values()) == {1}, f"an output was written more than once over two workers: {made}"
    assert not list(validator("results.schema.json").iter_errors(parallel)), (
        "results.json violates its schema"
    )
    assert all("worker" not in r for r in serial["results"]), "a run without workers names a worker"
    ran_on: dict[str, set[str]] = {}
    for r in parallel["results"]:
        assert r["startedAt"] <= r["finishedAt"], f"{r['nodeid']}: finished before it started"
        group = xdist_group(_params(r))
        ran_on.setdefault(group or r["nodeid"], set()).add(r["worker"])
    assert {w for ws in ran_on.values() for w in ws} == {"gw0", "gw1"}, f"workers named: {ran_on}"
    assert all(len(ws) == 1 for ws in ran_on.values()), f"a group ran on two workers: {ran_on}"


def _params(result: dict[str, Any]) -> dict[str, Any]:
    """The writer and shape parameters of a results.json entry, as :func:`xdist_group` takes them."""
    if "writer" not in result or "shape" not in result:
        return {}
    implementation, profile = result["writer"].split(":", 1)
    return {"writer_profile": (implementation, profile), "shape_name": result["shape"]}


def test_groups_keep_each_output_in_one_worker() -> None:
    """Writer and cross tests of one writer profile on one shape share a group, every cleanup test of a case
    shares one, the readers' fixture tests have none."""
    write = xdist_group({"writer_profile": ("delta-spark", "v2-json"), "shape_name": "partitioned"})
    cross = xdist_group(
        {"writer_profile": ("delta-spark", "v2-json"), "shape_name": "partitioned", "reader_name": "x"}
    )
    assert write == cross == "write-delta-spark-v2-json-partitioned", (write, cross)
    assert xdist_group({"writer_profile": ("delta-spark", "v2-json"), "shape_name": "empty"}) != write
    clean = {xdist_group({"cleaner_name": c, "cleanup_case_name": "classic"}) for c in ("a", "b")}
    assert clean == {"clean-classic"}, clean
    assert xdist_group({"reader_name": "x", "fixture_expectation": object()}) is None


def test_auto_workers_spread_bundled_implementations_only() -> None:
    """``--workers auto`` uses every CPU (at most 4) when bundled implementations run, one process for
    ``--impl-cmd`` programs alone; a number given is taken as it is."""
    cpus = min(len(os.sched_getaffinity(0)), MAX_AUTO_WORKERS)

    def run(**options: Any) -> int:
        defaults: dict[str, Any] = {"impl": [], "impl_cmd": [], "cross_writers": None}
        return workers(0, argparse.Namespace(**{**defaults, **options}))

    assert run() == cpus, "the default run (every bundled implementation)"
    assert run(impl=["reference"]) == cpus
    assert run(impl_cmd=["mine=./h"]) == 1, "a harness alone"
    assert run(impl_cmd=["mine=./h"], cross_writers="bundled") == cpus, "a harness reading live writers"
    assert workers(3, argparse.Namespace(impl=[], impl_cmd=["mine=./h"], cross_writers=None)) == 3


#: What ``conformance run`` adds to its workers' Spark settings: no adaptive execution and no generated code
#: (whole-stage or expression), and a driver JVM with both JIT tiers (no ``-XX:TieredStopAtLevel=1``), UTC
#: and the serial collector.
RUN_CONF = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC -XX:+UseSerialGC",
}


def test_run_sessions_start_with_small_query_settings_and_c2_unless_the_user_sets_them() -> None:
    """``conformance run`` hands its workers :data:`RUN_CONF` in ``DELTA_CKPT_SPARK_CONF``, after the user's own
    entries, and leaves a key the user set as the user set it."""
    assert RUN_SPARK_CONF == RUN_CONF, RUN_SPARK_CONF
    alone = run_spark_conf({})
    assert json.loads(alone) == RUN_CONF, alone
    mixed = json.loads(run_spark_conf({ENV_CONF: "spark.sql.shuffle.partitions=4;spark.ui.enabled=false"}))
    assert mixed == {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false", **RUN_CONF}, mixed
    mine = json.loads(run_spark_conf({ENV_CONF: "spark.sql.codegen.wholeStage = true"}))
    assert mine == {**RUN_CONF, "spark.sql.codegen.wholeStage": "true"}, mine


def test_global_master_and_conf_reach_every_session_of_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """``delta-ckpt --master M --conf K=V conformance run``: the global flags go to the run's sessions (every
    worker's, started by whichever adapter) through the variables the sessions read, over the environment's;
    a value holding ``;`` or a newline reaches them whole (the variable is JSON)."""
    args = build_parser().parse_args(
        ["--master", "local[1]", "--conf", "spark.ui.enabled=true", "--conf", "a.b=c=d",
         "--conf", "j.opts=-Da=1;-Db=2", "--conf", "multi.line=one\ntwo", "conformance", "run"]
    )  # fmt: skip
    environ = {ENV_MASTER: "local[3]", ENV_CONF: "spark.ui.enabled=false;x.y=1"}
    env = run_spark_environment(args, environ)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = settings_from_env()  # what a worker's reference session is started with
    assert settings.master == "local[1]", env
    assert settings.conf == {
        "spark.ui.enabled": "true", "x.y": "1", "a.b": "c=d", "j.opts": "-Da=1;-Db=2", "multi.line": "one\ntwo",
        **RUN_CONF,
    }, env  # fmt: skip
    assert conf_from_env() == settings.conf, env  # what a worker's Delta session reads
    plain = run_spark_environment(build_parser().parse_args(["conformance", "run"]), environ)
    assert list(plain) == [ENV_CONF], plain
    assert json.loads(plain[ENV_CONF]) == {"spark.ui.enabled": "false", "x.y": "1", **RUN_CONF}, plain
