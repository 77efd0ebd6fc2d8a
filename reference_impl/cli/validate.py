"""``delta-ckpt validate TABLE [--version N] [--no-state] [--json]``: check checkpoints and ``_last_checkpoint`` against the spec."""

from __future__ import annotations

import argparse
from itertools import groupby
from typing import Any

from reference_impl.cli.common import add_json_flag, add_table_argument, emit_json, spark_from_args
from reference_impl.storage.options import parse_option_pairs
from reference_impl.validate import Report, validate_table
from reference_impl.validate.registry import CHECKS

_EPILOG = f"""what it checks (spec/checkpoints.md; each finding names its rule, and its level is the rule's):
{chr(10).join(f"  {c.area:<8} {c.name}" + (" (Spark; not with --no-state)" if c.needs_spark else "") for c in CHECKS)}
  With --version N: only the checkpoint files of version N, the sidecars they reference and
  _last_checkpoint; the whole-table checks ({", ".join(c.name for c in CHECKS if c.whole_table)}) are skipped.
  Nothing is written or deleted, on any store.
exit status: 0 clean (or only SHOULD/MAY findings), 1 a MUST rule is broken, 2 bad input (one line:
  a missing table, an unreachable store, no checkpoint file of version N).
examples:
  delta-ckpt validate /data/t                       # a report grouped by file
  delta-ckpt validate /data/t --json | jq '.findings[] | select(.level == "MUST")'
  delta-ckpt validate /data/t --no-state            # no Spark: names, files, sidecars, hint only
  delta-ckpt validate /data/t --version 120         # the checkpoint(s) of version 120 and the hint
  delta-ckpt validate s3://bucket/t --storage-option AWS_REGION=eu-west-1"""


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "validate",
        help="check every checkpoint and _last_checkpoint of a table against the spec (read-only)",
        description="Check a table's checkpoint files, sidecars and _last_checkpoint against the spec's rules.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_table_argument(parser)
    parser.add_argument(
        "--version",
        type=int,
        default=None,
        metavar="N",
        help="check only the checkpoint(s) of version N (and _last_checkpoint); default: every checkpoint",
    )
    parser.add_argument(
        "--no-state",
        action="store_true",
        help="skip the state check (each checkpoint against its commits): no Spark, only the driver reads files",
    )
    add_json_flag(parser)
    parser.set_defaults(func=run)


def human_report(report: Report) -> str:
    """The findings grouped by file, MUST first within a file; a summary line last."""
    scope = "" if report.version is None else f" (checkpoints of version {report.version})"
    lines = [f"table  {report.table}{scope}"]
    order = {"MUST": 0, "SHOULD": 1, "MAY": 2}
    findings = sorted(report.sorted_findings(), key=lambda f: (f.file, order[str(f.level)], f.rule))
    for file, group in groupby(findings, key=lambda f: f.file):
        lines.append(f"\n{file}")
        for f in group:
            code = f" [{f.code}]" if f.code else ""
            lines.append(f"  {f.level:<6} {f.rule:<16} {f.message}{code}")
            lines.append(f"         seen: {f.seen}")
    counts = report.counts()
    verdict = "MUST rules broken" if report.exit_status else "no MUST rule broken"
    checked = ", ".join(f"{v} {k}" for k, v in report.checked.items())
    lines.append(
        f"\n{verdict}: {counts['MUST']} MUST, {counts['SHOULD']} SHOULD, {counts['MAY']} MAY finding(s); "
        f"checked {checked}"
    )
    if report.skipped:
        lines.append(f"skipped: {', '.join(report.skipped)}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    report = validate_table(
        args.table,
        parse_option_pairs(args.storage_options),
        session=lambda: spark_from_args(args),
        state=not args.no_state,
        version=args.version,
    )
    if args.json:
        emit_json(report.to_json())
    else:
        print(human_report(report))
    return report.exit_status
