"""``delta-ckpt cleanup TABLE …``: metadata cleanup with compatibility checkpoints and sidecar GC."""

from __future__ import annotations

import argparse
import datetime as dt
import re
from typing import Any

from reference_impl.cleanup.cleaner import cleanup
from reference_impl.cleanup.plan import FileDecision, format_ms
from reference_impl.cleanup.result import CleanupResult
from reference_impl.cli.common import (
    add_json_flag,
    add_table_argument,
    emit_json,
    open_table_from_args,
    spark_from_args,
)
from reference_impl.errors import InvalidOption
from reference_impl.log.table_properties import parse_interval_ms
from reference_impl.progress import Progress
from spec.vocabulary import LogFileKind

_EPILOG = """what it does (spec/checkpoints.md §18, §13):
  cutoff = midnight UTC of (now - retention); the cutoff commit is the newest commit not newer than
  it; the newest complete checkpoint at or before that commit is kept with its commit and everything
  newer; older commits, checkpoints and .crc files and log compactions starting at or before it are
  deleted. Before deleting, a classic-named copy of a UUID-named newest checkpoint is written
  (compatibility checkpoint). Sidecars no remaining checkpoint references are deleted when older than
  the sidecar cutoff (default: the log cutoff; never later than midnight UTC of now - 1 day). A
  killed writer's staging directory (_delta_log/.delta-ckpt-staging-<uuid>/) is deleted when every
  file in it is older than both the log cutoff and midnight UTC of now - 1 day.
  Every invariant is checked first; if one fails nothing is written or deleted.
DURATION: a delta-spark interval, e.g. "30 days", "interval 1 week", "36 hours".
examples:
  delta-ckpt cleanup /data/t --dry-run                  # show the plan, change nothing
  delta-ckpt cleanup /data/t --retention "7 days" --json
  delta-ckpt cleanup /data/t --now 2024-05-01T00:00:00Z --sidecar-retention "2 days\""""


_NOT_LOG_FILES = (LogFileKind.SIDECAR, LogFileKind.HIDDEN, LogFileKind.STAGING)


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "cleanup",
        help="delete expired log files (keeping a compatibility checkpoint) and unreferenced sidecars",
        description="Metadata cleanup of a Delta table with the reference cleaner.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_table_argument(parser)
    parser.add_argument(
        "--retention",
        metavar="DURATION",
        help="log retention (default: delta.logRetentionDuration, else 30 days)",
    )
    parser.add_argument(
        "--sidecar-retention",
        metavar="DURATION",
        help="sidecar window (default: the log cutoff); at least 1 day",
    )
    parser.add_argument(
        "--now",
        metavar="TIMESTAMP",
        help="the clock: ms since the epoch or ISO-8601 (UTC unless stated); default: now",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan; change nothing")
    parser.add_argument(
        "--verify-all-versions",
        action="store_true",
        help="check the state of every kept version, not only the oldest and the latest",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_json_flag(parser)
    parser.set_defaults(func=run)


_DIGITS = re.compile(r"^-?\d+$")


def parse_now(text: str) -> int:
    """``--now``: milliseconds since the epoch, or an ISO-8601 timestamp (UTC unless it says otherwise)."""
    value = text.strip()
    if _DIGITS.match(value):
        return int(value)
    try:
        moment = dt.datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError as exc:
        raise InvalidOption(
            f"--now must be milliseconds since the epoch or an ISO-8601 timestamp, got {text!r}"
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1000)


def _when(ms: int | None) -> str:
    return "-" if ms is None else format_ms(ms)


def _line(d: FileDecision, width: int) -> str:
    version = "" if d.version is None else f"v{d.version}"
    return f"  {d.name:<{width}}  {d.label:<15} {version:>4}  {d.reason}"


def human_result(result: CleanupResult) -> str:
    head = "cleanup plan" if result.dry_run else "cleanup"
    lines = [f"{head} of {result.table}: {result.status} — {result.message}"]
    lines.append(f"now {_when(result.now_ms)}; latest version {result.latest_version}")
    if result.retention_ms is not None:
        days = result.retention_ms / 86_400_000
        lines.append(
            f"log retention {days:g} day(s) ({result.retention_source}); cutoff {_when(result.cutoff_ms)}"
        )
    if result.cutoff_commit is not None:
        c = result.cutoff_commit
        adjusted = " (adjusted to be increasing)" if c["adjusted"] else ""
        lines.append(
            f"cutoff commit: version {c['version']} at {c['timestampUtc']} ({c['source']}{adjusted})"
        )
    if result.cutoff_checkpoint is not None:
        cp = result.cutoff_checkpoint
        lines.append(f"cutoff checkpoint: version {cp['version']} ({cp['kind']}: {', '.join(cp['files'])})")
    if result.compat is not None:
        lines.append(f"compatibility checkpoint: {result.compat.action} — {result.compat.reason}")
    log_deleted = result.deleted_log_files
    names = [d.name for d in result.deleted + result.kept if d.kind not in _NOT_LOG_FILES]
    width = min(max((len(n) for n in names), default=10), 90)
    verb = "would delete" if result.dry_run else "deleted"
    if log_deleted:
        lines.append(f"{verb} ({len(log_deleted)} log file(s), in this order):")
        lines += [_line(d, width) for d in log_deleted]
    kept_log = [d for d in result.kept if d.kind not in _NOT_LOG_FILES]
    if kept_log:
        lines.append(f"kept ({len(kept_log)} log file(s)):")
        lines += [_line(d, width) for d in kept_log]
    hidden = [d for d in result.kept if d.kind is LogFileKind.HIDDEN]
    companions = sum(len(d.companions) for d in result.deleted)
    if hidden or companions:
        lines.append(f"hidden files: {len(hidden)} kept; {companions} Hadoop checksum(s) go with their files")
    if result.sidecar_cutoff_ms is not None:
        lines.append(
            f"sidecars: cutoff {_when(result.sidecar_cutoff_ms)} ({result.sidecar_cutoff_source}); "
            f"one-day floor {_when(result.sidecar_floor_ms)}"
        )
    for d in result.deleted_sidecars:
        lines.append(f"  {verb.split()[-1]:<6} {d.name}  {d.reason}")
    for d in result.kept_sidecars:
        users = f" [{', '.join(d.referenced_by)}]" if d.referenced_by else ""
        lines.append(f"  keep   {d.name}  {d.reason}{users}")
    if result.deleted_staging or result.kept_staging:
        lines.append("writer staging (CKPT-CLEAN-025):")
    for d in result.deleted_staging:
        lines.append(f"  {verb.split()[-1]:<6} {d.name}  {d.reason}")
    for d in result.kept_staging:
        lines.append(f"  keep   {d.name}  {d.reason}")
    if result.invariants:
        failed = [c for c in result.invariants if not c.ok]
        lines.append("invariants: " + ("all hold" if not failed else f"{len(failed)} FAILED"))
        lines += [
            f"  [{'ok' if c.ok else 'FAIL'}] {c.name} ({c.rule or '-'}): {c.detail}"
            for c in result.invariants
        ]
    if result.verified_versions:
        lines.append(f"state verified at version(s) {result.verified_versions}")
    lines += [f"note: {n}" for n in result.notes]
    if result.already_gone:
        lines.append(f"already gone: {', '.join(result.already_gone)}")
    lines.append("time: " + ", ".join(f"{k} {v:.1f}s" for k, v in result.timings.items()))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    table = open_table_from_args(args)
    retention = None if args.retention is None else parse_interval_ms(args.retention, key="--retention")
    sidecar = (
        None
        if args.sidecar_retention is None
        else parse_interval_ms(args.sidecar_retention, key="--sidecar-retention")
    )
    now = None if args.now is None else parse_now(args.now)
    result = cleanup(
        table,
        retention_ms=retention,
        now_ms=now,
        sidecar_retention_ms=sidecar,
        dry_run=args.dry_run,
        verify_all_versions=args.verify_all_versions,
        spark=lambda: spark_from_args(args),
        progress=Progress(enabled=not (args.quiet or args.json)),
        hooks=args.hooks,
    )
    if args.json:
        emit_json(result.to_json())
    else:
        print(human_result(result))
    return 0
