"""``delta-ckpt spec extract | coverage``: the requirement index and which tests prove each rule."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from conformance.oracles.delta_jars import project_root
from reference_impl.cli.main import add_json_flag, emit_json


def _spec_dir() -> Path:
    root = project_root()
    return (root if root is not None else Path.cwd()) / "spec"


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "spec", help="regenerate spec/requirements.json, or show requirement coverage by tests",
        description="The normative spec's requirement index (spec/checkpoints.md).",
    )  # fmt: skip
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    ext = actions.add_parser("extract", help="regenerate spec/requirements.json from spec/checkpoints.md")
    ext.set_defaults(func=run_extract)
    cov = actions.add_parser("coverage", help="each requirement with the tests that cite it")
    cov.add_argument("--all", action="store_true", help="list every requirement (default: summary + gaps)")
    add_json_flag(cov)
    cov.set_defaults(func=run_coverage)


def run_extract(args: argparse.Namespace) -> int:
    from spec.requirements import main_extract

    status = main_extract(_spec_dir())
    print(f"wrote {_spec_dir() / 'requirements.json'}")
    return status


def run_coverage(args: argparse.Namespace) -> int:
    from conformance.coverage import compute

    cov = compute()
    gaps = cov.uncovered_musts()
    if args.json:
        emit_json({
            "summary": cov.summary(),
            "uncoveredMust": gaps,
            "unknownIds": cov.unknown,
            "requirements": {r: {"level": q["level"], "status": cov.status(r), "tests": cov.tests.get(r, []),
                                 "untestable": q.get("untestable")} for r, q in cov.requirements.items()},
        })  # fmt: skip
        return 1 if gaps or cov.unknown else 0
    summary = cov.summary()
    print("level/area      tested  untestable  uncovered")
    for key in sorted(summary, key=lambda k: (not k.startswith(("MUST", "SHOULD", "MAY")), k)):
        row = summary[key]
        print(
            f"{key:15} {row.get('tested', 0):6}  {row.get('untestable', 0):10}  {row.get('uncovered', 0):9}"
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
    print(f"{len(gaps)} MUST requirement(s) with neither a test nor an untestable reason")
    return 1 if gaps or cov.unknown else 0
