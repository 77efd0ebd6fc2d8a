"""``delta-ckpt conformance run | report``: the conformance matrix over implementations and fixtures."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reference_impl.cli.main import add_json_flag, emit_json

_EPILOG = """examples:
  delta-ckpt conformance run                                   # bundled: reference, delta-spark, deltalake, deltalake-cmd
  delta-ckpt conformance run --impl reference --impl deltalake
  delta-ckpt conformance run --impl-cmd mine="./my-harness --stdio"   # your implementation, any language
  delta-ckpt conformance run --shapes quick -k "reader_fixture"
outputs (in --report, default reports/conformance): junit.xml, results.json, MATRIX.md, index.html"""


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "conformance", help="run the conformance suite and write the matrix (MATRIX.md, index.html, JUnit)",
        description="The Delta checkpoint conformance suite: writer × reader matrix, readers × golden tables.",
    )  # fmt: skip
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = actions.add_parser("run", help="run the suite", epilog=_EPILOG,
                             formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    run.add_argument(
        "--impl", action="append", default=[], metavar="NAME", help="implementation to test (repeatable)"
    )
    run.add_argument("--impl-cmd", action="append", default=[], metavar="NAME=COMMAND",
                     help="a program speaking the subprocess protocol (repeatable)")  # fmt: skip
    run.add_argument("--report", type=Path, default=Path("reports/conformance"), help="output directory")
    run.add_argument("--fixtures", type=Path, default=None, help="golden tables (default: fixtures/)")
    run.add_argument(
        "--shapes", default="all", help="source shapes for writer/cross tests: all | quick | A,B"
    )
    run.add_argument("-k", dest="keyword", default=None, help="pytest -k expression to select tests")
    run.add_argument("--quiet", action="store_true", help="less pytest output")
    run.set_defaults(func=run_suite)
    rep = actions.add_parser("report", help="render MATRIX.md and index.html from a results.json")
    rep.add_argument("results", type=Path)
    rep.add_argument(
        "--out", type=Path, default=None, help="output directory (default: next to results.json)"
    )
    add_json_flag(rep)
    rep.set_defaults(func=run_report)


def run_suite(args: argparse.Namespace) -> int:
    import pytest

    from conformance.report import cross_grid, write_reports

    report = args.report
    report.mkdir(parents=True, exist_ok=True)
    results = report / "results.json"
    argv = ["--pyargs", "conformance.suite", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
            f"--junitxml={report / 'junit.xml'}", f"--ckpt-results={results}", f"--ckpt-shapes={args.shapes}",
            "-rfE", "--tb=line", "-o", "console_output_style=progress"]  # fmt: skip
    if not args.keyword:
        argv.append("--strict-expectations")
    argv += ["-q"] if args.quiet else []
    for name in args.impl:
        argv += ["--impl", name]
    for command in args.impl_cmd:
        argv += ["--impl-cmd", command]
    if args.fixtures:
        argv += ["--fixtures-dir", str(args.fixtures)]
    if args.keyword:
        argv += ["-k", args.keyword]
    print(f"[conformance] pytest {' '.join(argv)}", file=sys.stderr, flush=True)
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
    return 0 if status == 0 else 1


def run_report(args: argparse.Namespace) -> int:
    from conformance.report import write_reports

    md, page = write_reports(args.results, args.out or args.results.parent)
    if args.json:
        emit_json({"markdown": str(md), "html": str(page)})
    else:
        print(f"wrote {md} and {page}")
    return 0
