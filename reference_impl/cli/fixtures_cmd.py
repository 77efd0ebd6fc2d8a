"""``delta-ckpt fixtures list | generate | verify | index | pack``: the golden tables under ``fixtures/``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.oracles.delta_jars import project_root
from reference_impl.cli.main import add_json_flag, emit_json


def default_fixtures_dir() -> Path:
    root = project_root()
    return (root if root is not None else Path.cwd()) / "fixtures"


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "fixtures", help="list, generate, verify, index or pack the golden tables in fixtures/",
        description="Golden Delta tables with expected states (one directory per case).",
    )  # fmt: skip
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    lst = actions.add_parser("list", help="list the registered cases")
    add_json_flag(lst)
    lst.set_defaults(func=run_list)

    gen = actions.add_parser("generate", help="(re)generate cases deterministically (needs Spark)")
    gen.add_argument("--only", nargs="+", metavar="NAME", help="only these cases")
    gen.add_argument("--out", type=Path, default=None, help="output directory (default: fixtures/)")
    gen.add_argument("--foreign", action="store_true",
                     help="also generate the foreign cases (tables written by delta-spark and deltalake)")  # fmt: skip
    gen.set_defaults(func=run_generate)

    ver = actions.add_parser(
        "verify", help="regenerate into a temp dir and prove fixtures/ matches (needs Spark)"
    )
    ver.add_argument("--only", nargs="+", metavar="NAME", help="only these cases")
    ver.add_argument("--fixtures", type=Path, default=None, help="directory to verify (default: fixtures/)")
    add_json_flag(ver)
    ver.set_defaults(func=run_verify)

    idx = actions.add_parser("index", help="write fixtures/README.md and fixtures/index.json")
    idx.add_argument("--fixtures", type=Path, default=None)
    idx.set_defaults(func=run_index)

    pk = actions.add_parser("pack", help="build a reproducible tarball of fixtures/ for other languages")
    pk.add_argument("--fixtures", type=Path, default=None)
    pk.add_argument(
        "--out", type=Path, default=Path("dist"), help="where to put the tarball (default: dist/)"
    )
    pk.set_defaults(func=run_pack)


def run_list(args: argparse.Namespace) -> int:
    from fixtures.generator.generate import load_cases

    cases = sorted(load_cases().values(), key=lambda c: (c.kind, c.name))
    if args.json:
        emit_json([{"name": c.name, "kind": c.kind, "producer": c.producer, "description": c.description,
                    "requirements": list(c.requirements)} for c in cases])  # fmt: skip
    else:
        for c in cases:
            print(f"{c.kind:8} {c.name:48} {c.description}")
        print(f"{len(cases)} cases")
    return 0


def _spark(args: argparse.Namespace, *, delta: bool) -> Any:
    from reference_impl.spark.session import get_delta_spark, get_spark, settings_from_env

    settings = settings_from_env(args.master, args.conf)
    return get_delta_spark(settings) if delta else get_spark(settings)


def _say(message: str) -> None:
    print(f"[fixtures] {message}", file=sys.stderr, flush=True)


def run_generate(args: argparse.Namespace) -> int:
    from fixtures.generator.generate import generate, select, write_index

    out = args.out or default_fixtures_dir()
    cases = select(args.only, foreign=args.foreign)
    needs_delta = any(c.kind == "foreign" for c in cases)
    generate(out, _spark(args, delta=needs_delta), cases, progress=_say)
    if args.out is None:
        write_index(out)
    print(f"generated {len(cases)} case(s) into {out}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from fixtures.generator.generate import verify

    fixtures = args.fixtures or default_fixtures_dir()
    problems = verify(fixtures, _spark(args, delta=False), args.only, progress=_say)
    if args.json:
        emit_json({"ok": not problems, "problems": problems})
    else:
        for problem in problems:
            print(problem)
        print("fixtures verified: regeneration matches" if not problems else f"{len(problems)} difference(s)")
    return 0 if not problems else 1


def run_index(args: argparse.Namespace) -> int:
    from fixtures.generator.generate import write_index

    readme, index = write_index(args.fixtures or default_fixtures_dir())
    print(f"wrote {readme} and {index}")
    return 0


def run_pack(args: argparse.Namespace) -> int:
    from fixtures.generator.generate import pack

    target = pack(args.fixtures or default_fixtures_dir(), args.out)
    print(f"wrote {target} ({target.stat().st_size} bytes)")
    return 0
