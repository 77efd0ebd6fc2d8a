"""The conformance suite's commands of ``delta-ckpt``: ``conformance``, ``spec``, ``demo``, and ``env --resolve-jars``.

They plug into the command line through the entry-point group ``delta_ckpt.commands``
(``pyproject.toml``); ``reference_impl`` never imports this module.

| command | what it does |
|---|---|
| ``conformance run`` / ``report`` | the conformance matrix over implementations and fixtures |
| ``spec extract`` / ``coverage`` | regenerate ``spec/requirements.json``; which tests prove each requirement |
| ``demo`` | build a small V2-checkpointed table with delta-spark and read it with the reference reader |
| ``env --resolve-jars`` | delta-spark's jars: resolve them from Maven Central into the cache, and report them |

A delta-spark jar problem is a coded error (``STORAGE_ERROR``), printed as one line like every error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from spec.spark_conf import (
    BASE_CONF,
    ENV_CONF,
    ENV_MASTER,
    SMALL_QUERIES_CONF,
    conf_from_env,
    encode_env_conf,
    parse_conf_pairs,
)
from spec.table_state import TableState

#: ``--workers auto``: one test process per CPU, at most this many (each may run a Spark JVM).
MAX_AUTO_WORKERS = 4
#: Spark settings of the run's sessions (every worker's) unless ``DELTA_CKPT_SPARK_CONF`` sets the key, for
#: performance only (the same results):
#: - the suite's tables are tiny: :data:`~spec.spark_conf.SMALL_QUERIES_CONF` (no adaptive execution, no
#:   generated code), as start-up settings of the session, which the code under test leaves as they are
#:   (``reference_impl.spark.session.size_queries`` sizes only a session the reference created; until
#:   86c149d it set them on the workers' shared session as a side effect, ``benchmarks/MATRIX_RESULTS.md``
#:   stop 26);
#: - the driver JVM keeps the JIT's second tier (C2): a worker's session lives for the whole run and serves
#:   hundreds of reads, so the short-job flags' C1-only JIT (``SHORT_JOB_JAVA_OPTIONS``, made for one
#:   command) costs more than C2's compilations (``benchmarks/MATRIX_RESULTS.md``, stop 22). The serial
#:   collector and the time zone stay.
RUN_SPARK_CONF: dict[str, str] = {
    **SMALL_QUERIES_CONF,
    "spark.driver.extraJavaOptions": f"{BASE_CONF['spark.driver.extraJavaOptions']} -XX:+UseSerialGC",
}
#: The directory holding the ``conformance`` package: a checkout, or site-packages of an installed wheel.
PACKAGE_ROOT = Path(__file__).resolve().parents[1]

_DEMO_DOC = """``delta-ckpt demo [--out DIR]``: write a small table with delta-spark, then read it back with ours.

The table has a V2 checkpoint (JSON top-level file and several sidecars, written by delta-spark), a
few commits after it, a deletion and a transaction id. The reference reader then reconstructs it
and prints the ``snapshot`` summary, and the demo says whether delta-spark's own snapshot agrees."""


def _add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document on stdout instead of text"
    )


def _emit_json(document: Any) -> None:
    json.dump(document, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


def _say(message: str, quiet: bool) -> None:
    if not quiet:
        print(f"[delta-ckpt] {message} …", file=sys.stderr, flush=True)


_EPILOG = """examples:
  delta-ckpt conformance run                                   # bundled: reference, delta-spark, deltalake, deltalake-cmd, kernel-java
  delta-ckpt conformance run --impl reference --impl deltalake
  delta-ckpt conformance run --impl-cmd mine="./my-harness --stdio"   # your implementation, any language
  delta-ckpt conformance run --impl-cmd mine="./my-harness" --expectations mine.yaml --fail-on should
  delta-ckpt conformance run --shapes quick -k "reader_fixture"
  delta-ckpt conformance run --workers 1                       # one process (default auto: one per CPU)

expectations: a YAML file (or a directory of <implementation>.yaml files) listing, with a reason,
  tests an implementation cannot run (skip) and tests it is known to fail (xfail, strict: a pass
  fails the run). Patterns match whole test ids: * any characters, ? one, everything else literally
  ([ too). With --strict-expectations (the default) an entry that matches no collected test is an
  error; -k and --shapes narrow what runs, not what entries are checked against, and with --fixtures
  an entry for a bundled fixture left out is not stale.

exit status: 0 when nothing failed at the --fail-on level (default must: a failed MUST requirement,
  a known failure that now passes, or an error; should: also failed SHOULDs; never), 1 when
  something did, 2 when the run could not happen (bad option, unknown implementation file, no
  results). Failed SHOULDs and MAYs not implemented are always in the matrix.

outputs (in --report, default reports/conformance): junit.xml, results.json, MATRIX.md, index.html"""


def register_conformance(sub: Any) -> None:
    """``delta-ckpt conformance run | report``."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "conformance",
        help="run the conformance suite and write the matrix (MATRIX.md, index.html, JUnit)",
        description="The Delta checkpoint conformance suite: writer × reader matrix, readers × golden tables.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = actions.add_parser(
        "run", help="run the suite", epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    run.add_argument(
        "--impl", action="append", default=[], metavar="NAME", help="implementation to test (repeatable)"
    )
    run.add_argument(
        "--impl-cmd",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="a program speaking the subprocess protocol (repeatable)",
    )
    run.add_argument("--report", type=Path, default=Path("reports/conformance"), help="output directory")
    run.add_argument("--fixtures", type=Path, default=None, help="golden tables (default: fixtures/)")
    run.add_argument(
        "--shapes",
        default="all",
        help="source shapes for writer/cross tests: all | quick | A,B (the many-files shape has 10,000 "
        "live files but no data files: only readers that do not open data files can read it)",
    )
    run.add_argument(
        "--expectations",
        action="append",
        default=[],
        type=Path,
        metavar="FILE|DIR",
        help="known failures and skips of your implementation (repeatable; see below)",
    )
    run.add_argument(
        "--strict-expectations",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="an expectation entry that matches no collected test is an error (default: on, also with -k or --shapes)",
    )
    run.add_argument(
        "--fail-on",
        choices=["must", "should", "never"],
        default="must",
        help="which failures make the exit status 1 (default: must)",
    )
    run.add_argument(
        "--cross-writers",
        default=None,
        metavar="NAME,…|bundled",
        help="bundled writers whose checkpoints your reader also reads live in the cross tests, untested "
        "themselves (bundled: reference, delta-spark, deltalake, kernel-java — needs Java and Spark; "
        "default: none, their frozen outputs are fixtures)",
    )
    run.add_argument(
        "--impl-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="longest wait for one answer of an --impl-cmd program (default: 600)",
    )
    run.add_argument(
        "--workers",
        type=_workers_option,
        default=0,
        metavar="N|auto",
        help="processes running tests side by side (pytest-xdist; each has its own Spark and harness "
        "programs, and every implementation output is made once, in one of them); 1: this process "
        f"alone; auto (default): one per CPU, at most {MAX_AUTO_WORKERS}, when bundled implementations "
        "run, one for --impl-cmd programs alone",
    )
    run.add_argument("-k", dest="keyword", default=None, help="pytest -k expression to select tests")
    run.add_argument("--quiet", action="store_true", help="less pytest output")
    run.set_defaults(func=run_suite)
    rep = actions.add_parser("report", help="render MATRIX.md and index.html from a results.json")
    rep.add_argument("results", type=Path)
    rep.add_argument(
        "--out", type=Path, default=None, help="output directory (default: next to results.json)"
    )
    _add_json_flag(rep)
    rep.set_defaults(func=run_report)


def _workers_option(value: str) -> int:
    """``--workers``: a positive number, or ``auto`` (0)."""
    if value == "auto":
        return 0
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number or auto, got {value!r}")
    return int(value)


def workers(requested: int, args: argparse.Namespace) -> int:
    """The number of test processes to run; 1 when pytest-xdist is not installed.

    ``auto`` (``requested`` 0): one per CPU, at most :data:`MAX_AUTO_WORKERS`, when bundled implementations
    run (their Spark and Kernel work is what takes minutes); one when only ``--impl-cmd`` programs
    run, whose reader-only runs take seconds and would mostly pay for starting the workers."""
    bundled = bool(args.impl) or not args.impl_cmd or args.cross_writers not in (None, "none")
    count = requested or (min(len(os.sched_getaffinity(0)), MAX_AUTO_WORKERS) if bundled else 1)
    if count > 1 and importlib.util.find_spec("xdist") is None:
        print("[conformance] pytest-xdist is not installed: running in one process", file=sys.stderr)
        return 1
    return count


def run_spark_conf(environ: Mapping[str, str], flags: Sequence[str] = ()) -> str:
    """``DELTA_CKPT_SPARK_CONF`` for the run, JSON (:func:`spec.spark_conf.encode_env_conf`, so a value may
    hold ``;`` or a newline): the entries of ``environ``'s, then the global ``--conf`` ``flags`` (``k=v``; a
    later entry wins), then each :data:`RUN_SPARK_CONF` entry that neither sets."""
    conf = conf_from_env(environ)
    conf.update(parse_conf_pairs(flags, source="--conf"))
    return encode_env_conf({**conf, **{k: v for k, v in RUN_SPARK_CONF.items() if k not in conf}})


def run_spark_environment(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, str]:
    """The Spark settings of the run's sessions (every worker's, whichever adapter starts it), as the
    environment variables the sessions read: the global ``--master`` and ``--conf`` flags over
    ``DELTA_CKPT_SPARK_MASTER`` and ``DELTA_CKPT_SPARK_CONF``, plus :data:`RUN_SPARK_CONF`."""
    out = {ENV_CONF: run_spark_conf(environ, args.conf)}
    if args.master:
        out[ENV_MASTER] = args.master
    return out


def run_suite(args: argparse.Namespace) -> int:
    import pytest

    from conformance.report import cross_grid, write_reports

    report = args.report
    report.mkdir(parents=True, exist_ok=True)
    results = report / "results.json"
    argv = [
        "--pyargs",
        "conformance.suite",
        # Test IDs start at the installed package (conformance/suite/…), wherever it is installed and
        # whatever the current directory: an ID copied from one report matches in any other.
        f"--rootdir={PACKAGE_ROOT}",
        # This command imported the suite's packages before pytest could rewrite their assertions; the
        # test modules themselves are imported (and rewritten) later, so the warning says nothing useful.
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "-p",
        "no:cacheprovider",
        "-o",
        "junit_family=xunit1",
        f"--junitxml={report / 'junit.xml'}",
        f"--ckpt-results={results}",
        f"--ckpt-shapes={args.shapes}",
        "-rfE",
        "--tb=line",
        "-o",
        "console_output_style=progress",
    ]
    argv.append(f"--fail-on={args.fail_on}")
    if args.strict_expectations:
        argv.append("--strict-expectations")
    for source in args.expectations:
        argv += ["--expectations", str(source)]
    if args.cross_writers is not None:
        argv.append(f"--cross-writers={args.cross_writers}")
    if args.impl_timeout is not None:
        argv += ["--impl-timeout", str(args.impl_timeout)]
    argv += ["-q"] if args.quiet else []
    processes = workers(args.workers, args)
    if processes > 1:  # tests sharing an implementation's output stay in one worker (plugin.xdist_group)
        argv += ["-n", str(processes), "--dist", "loadgroup"]
    for name in args.impl:
        argv += ["--impl", name]
    for command in args.impl_cmd:
        argv += ["--impl-cmd", command]
    if args.fixtures:
        argv += ["--fixtures-dir", str(args.fixtures)]
    if args.keyword:
        argv += ["-k", args.keyword]
    print(f"[conformance] pytest {' '.join(argv)}", file=sys.stderr, flush=True)
    os.environ.update(run_spark_environment(args, os.environ))  # workers inherit it
    status = int(pytest.main(argv))
    if not results.is_file():
        print("[conformance] no results were written (collection failed?)", file=sys.stderr)
        return status or 2
    md, page = write_reports(results, report)
    data = json.loads(results.read_text())
    for row_key in ("writer", "cleaner"):
        rows, readers, grid = cross_grid(data, row_key)
        if rows:
            print(f"\n{row_key} \\ reader".ljust(34) + "".join(r.ljust(16) for r in readers))
            for row in rows:
                cells = ["{}/{}".format(*grid[(row, r)][::2]) if (row, r) in grid else "-" for r in readers]
                print(row.ljust(33) + "".join(c.ljust(16) for c in cells))
    print(f"\nwrote {md}, {page}, {report / 'junit.xml'} and {results}")
    return {0: 0, 1: 1}.get(status, 2)  # 1: failures at the --fail-on level; 2: the run did not happen


def run_report(args: argparse.Namespace) -> int:
    from conformance.report import write_reports

    md, page = write_reports(args.results, args.out or args.results.parent)
    if args.json:
        _emit_json({"markdown": str(md), "html": str(page)})
    else:
        print(f"wrote {md} and {page}")
    return 0


def register_spec(sub: Any) -> None:
    """``delta-ckpt spec extract | coverage | release``."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "spec",
        help="regenerate spec/requirements.json, or show requirement coverage by tests",
        description="The normative spec's requirement index (spec/checkpoints.md).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    ext = actions.add_parser("extract", help="regenerate spec/requirements.json from spec/checkpoints.md")
    ext.set_defaults(func=run_extract)
    rel = actions.add_parser(
        "release",
        help="freeze the current spec version's requirement index as spec/releases/<version>.json",
        description="Checks the ID policy against every earlier release and spec/CHANGELOG.md, then writes "
        "spec/releases/<version>.json. Exit status 2, nothing written, when the policy is broken or the "
        "version was already released.",
    )
    rel.set_defaults(func=run_release)
    cov = actions.add_parser("coverage", help="each requirement with the tests that cite it")
    cov.add_argument("--all", action="store_true", help="list every requirement (default: summary + gaps)")
    _add_json_flag(cov)
    cov.set_defaults(func=run_coverage)


def run_extract(args: argparse.Namespace) -> int:
    from spec.requirements import REQUIREMENTS_JSON, SPEC_DIR, main_extract

    status = main_extract(SPEC_DIR)
    print(f"wrote {REQUIREMENTS_JSON}")
    return status


def run_release(args: argparse.Namespace) -> int:
    from spec.history import main_release

    return main_release()


def run_coverage(args: argparse.Namespace) -> int:
    from conformance.coverage import compute

    cov = compute()
    gaps = cov.uncovered_musts()
    if args.json:
        _emit_json(
            {
                "summary": cov.summary(),
                "uncoveredMust": gaps,
                "unknownIds": cov.unknown,
                "withdrawnIds": cov.withdrawn,
                "requirements": {
                    r: {
                        "level": q["level"],
                        "status": cov.status(r),
                        "tests": cov.tests.get(r, []),
                        "untestable": q.get("untestable"),
                    }
                    for r, q in cov.requirements.items()
                },
            }
        )
        return 1 if gaps or cov.unknown or cov.withdrawn else 0
    summary = cov.summary()
    print("level/area      tested  untestable  uncovered  withdrawn")
    for key in sorted(summary, key=lambda k: (not k.startswith(("MUST", "SHOULD", "MAY")), k)):
        row = summary[key]
        print(
            f"{key:15} {row.get('tested', 0):6}  {row.get('untestable', 0):10}  {row.get('uncovered', 0):9}"
            f"  {row.get('withdrawn', 0):9}"
        )
    for req_id, req in cov.requirements.items():
        status = cov.status(req_id)
        if args.all or (status == "uncovered" and req["level"] == "MUST"):
            tests = cov.tests.get(req_id, [])
            detail = (
                f"{len(tests)} test(s), e.g. {tests[0]}" if tests else (req.get("untestable") or "NO TEST")
            )
            print(f"{req_id:16} {req['level']:6} {status:10} {detail}")
    for item in cov.unknown:
        print(f"unknown requirement id: {item}")
    for item in cov.withdrawn:
        print(f"cites a withdrawn requirement: {item}")
    print(f"{len(gaps)} MUST requirement(s) with neither a test nor an untestable reason")
    return 1 if gaps or cov.unknown or cov.withdrawn else 0


def register_demo(sub: Any) -> None:
    """``delta-ckpt demo``."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo",
        help="build a small V2-checkpointed table with delta-spark and read it with the reference reader",
        description=_DEMO_DOC,
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="where to write the table (default: a temp dir)"
    )
    _add_json_flag(parser)
    parser.set_defaults(func=run_demo)


def build_demo_table(spark: Any, path: Path) -> None:
    """Five commits; delta-spark writes a V2 checkpoint (JSON top-level file + sidecars) at version 3."""
    spark.conf.set("spark.databricks.delta.checkpoint.partSize", "3")
    location = str(path)
    spark.sql(
        f"CREATE TABLE delta.`{location}` (id BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.checkpointInterval'='3', 'delta.checkpointPolicy'='v2')"
    )
    for i in range(3):
        (
            spark.range(i * 4, i * 4 + 4, 1, 2)
            .selectExpr("id", "cast(id % 2 as string) part")
            .write.format("delta")
            .mode("append")
            .option("txnAppId", "demo")
            .option("txnVersion", i)
            .save(location)
        )
    spark.sql(f"DELETE FROM delta.`{location}` WHERE id = 1")
    spark.conf.unset("spark.databricks.delta.checkpoint.partSize")


def _demo_summary(table: Path, state: TableState) -> dict[str, Any]:
    return {
        "table": str(table),
        "version": state.version,
        "protocol": state.protocol,
        "numFiles": state.num_files,
        "sizeInBytes": state.total_size,
        "numTombstones": len(state.tombstones),
        "numTxns": len(state.txns),
        "numDomains": len(state.domain_metadata),
        **state.source,
    }


def run_demo(args: argparse.Namespace) -> int:
    from conformance.adapters.reference import ReferenceImplementation
    from conformance.oracles.delta_spark import delta_spark_state
    from conformance.oracles.session import get_delta_spark

    quiet = args.json
    _say("starting Spark with delta-spark", quiet)
    spark = get_delta_spark(args.master, args.conf)
    out = args.out or Path(tempfile.mkdtemp(prefix="delta-ckpt-demo-")) / "table"
    _say(f"writing the demo table with delta-spark at {out}", quiet)
    build_demo_table(spark, out)
    _say("reading it back with the reference reader", quiet)
    ours = ReferenceImplementation().read(out).state
    _say("asking delta-spark for its own snapshot", quiet)
    theirs = delta_spark_state(spark, str(out))
    agree = ours.comparable() == theirs.comparable()
    summary = _demo_summary(out, ours)
    if args.json:
        _emit_json({"table": str(out), "summary": summary, "agreesWithDeltaSpark": agree})
    else:
        checkpoint = summary.get("checkpoint") or {}
        print(f"table       {out}")
        print(
            f"version     {ours.version}: {ours.num_files} live files, {ours.total_size} bytes, "
            f"{len(ours.tombstones)} tombstones, {len(ours.txns)} app id(s)"
        )
        print(
            f"checkpoint  {checkpoint.get('kind', 'none')} at version {checkpoint.get('version')}: "
            f"{', '.join(checkpoint.get('files', []))} ({len(checkpoint.get('sidecars', []))} sidecar(s)), "
            f"found by {summary.get('foundBy')}"
        )
        print(f"delta-spark agrees: {'yes' if agree else 'NO'}")
    return 0 if agree else 1


def register_env_jars(sub: Any) -> None:
    """``delta-ckpt env --resolve-jars``: delta-spark's jars, as a section of the ``env`` command."""
    parser = sub.choices.get("env")
    if parser is None:  # the implementation's env command is not installed
        return
    parser.add_argument(
        "--resolve-jars",
        action="store_true",
        help="resolve delta-spark's jars and the S3A connector (hadoop-aws) from Maven Central into the cache (exit 2 on failure)",
    )
    parser.get_default("env_sections").append(_jars_section)


def _jars_section(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from conformance.oracles.delta_jars import (
        DeltaJarsUnavailable,
        cached_delta_jars,
        cached_s3a_jars,
        delta_coordinate,
        resolve_delta_jars,
        resolve_s3a_jars,
    )
    from spec.cache import cache_dir

    jars, s3a = cached_delta_jars(), cached_s3a_jars()
    error = None
    if args.resolve_jars:
        try:
            jars = jars or resolve_delta_jars()
            s3a = s3a or resolve_s3a_jars()
        except DeltaJarsUnavailable as exc:
            error = str(exc)
    facts = {
        "delta-spark jar": ":".join(delta_coordinate()),
        "jars cached": jars is not None,
        "s3a connector jars": ",".join(str(j) for j in s3a) if s3a else None,
        "cache": str(cache_dir()),
        "jars error": error,
    }
    return facts, 2 if args.resolve_jars and error else 0
