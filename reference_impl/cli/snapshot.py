"""``delta-ckpt snapshot TABLE [--version N] [--json]``: reconstruct a version with the reference reader."""

from __future__ import annotations

import argparse
from typing import Any

from reference_impl.cli.common import (
    add_json_flag,
    add_table_argument,
    add_version_argument,
    emit_json,
    open_table_from_args,
    spark_from_args,
    start_spark_from_args,
)


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "snapshot",
        help="reconstruct a table version and print a summary (or the full TableState with --json)",
        description="Reconstruct a table version by log replay (reference reader) and describe it.",
    )
    add_table_argument(parser)
    add_version_argument(parser, "version to reconstruct")
    parser.add_argument(
        "--now",
        type=int,
        default=None,
        metavar="MS",
        help="clock for tombstone/txn expiry, ms since epoch (default: now)",
    )
    add_json_flag(parser)
    parser.set_defaults(func=run)


def human_summary(summary: dict[str, Any]) -> str:
    protocol = summary["protocol"]
    cp = summary["checkpoint"]
    if cp is None:
        checkpoint = "none (replayed from commit 0)"
    else:
        sidecars = f", {len(cp['sidecars'])} sidecar(s)" if cp["sidecars"] else ""
        checkpoint = f"v{cp['version']} {cp['kind']} ({cp['spec']}{sidecars}): {cp['files'][0]}"
        if len(cp["files"]) > 1:
            checkpoint += f" (+{len(cp['files']) - 1} parts)"
    commits = summary["commits"]
    found = {"hint": "named by _last_checkpoint", "listing": "found by listing", "commits": "no checkpoint"}[
        summary["foundBy"]
    ]
    lines = [
        f"table       {summary['table']}",
        f"version     {summary['version']}",
        f"protocol    reader {protocol['minReaderVersion']}, writer {protocol['minWriterVersion']}",
        f"features    reader: {', '.join(summary['readerFeatures']) or '-'}; "
        f"writer: {', '.join(summary['writerFeatures']) or '-'}",
        f"files       {summary['numFiles']} live, {summary['sizeInBytes']} bytes; {summary['numTombstones']} tombstones",
        f"txns        {summary['numTxns']} app id(s); domains: {summary['numDomains']}",
        f"checkpoint  {checkpoint}",
        f"            {found}; _last_checkpoint: {summary['hint']}"
        + (f" ({summary['hintDetail']})" if summary.get("hintDetail") else ""),
        f"commits     {commits[0]}..{commits[1]} replayed after it"
        if commits
        else "commits     none after it",
    ]
    if summary["fallbackFrom"]:
        lines.append(f"fallback    unreadable checkpoint(s) skipped: {', '.join(summary['fallbackFrom'])}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    table = open_table_from_args(args)
    start_spark_from_args(args)  # the reader's modules load while the JVM starts
    from reference_impl.read.snapshot import read_snapshot

    spark = spark_from_args(args)
    snap = read_snapshot(spark, table, version=args.version, now_ms=args.now)
    if args.json:
        emit_json(snap.table_state().to_json())
    else:
        print(human_summary(snap.summary()))
    return 0
