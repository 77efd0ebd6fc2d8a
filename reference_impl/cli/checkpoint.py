"""``delta-ckpt checkpoint TABLE …``: write a checkpoint with the reference writer."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from reference_impl.cli.common import (
    add_json_flag,
    add_table_argument,
    add_version_argument,
    emit_json,
    open_table_from_args,
    spark_from_args,
    start_spark_from_args,
)
from reference_impl.progress import Progress
from reference_impl.write.options import REQUESTABLE_NAMINGS, CheckpointOptions
from reference_impl.write.preconditions import checked_request, require_checkpointable_table
from spec.vocabulary import CheckpointNaming, CheckpointSpec, StatsMode, TopLevelFormat

if TYPE_CHECKING:
    from reference_impl.write.result import CheckpointResult

_EPILOG = """defaults follow the table, as delta-spark does:
  V2 (UUID-named, JSON top-level file, sidecars of about 50,000 file actions as estimated from the
  log's size) when delta.checkpointPolicy=v2 and the v2Checkpoint feature is supported; otherwise one
  classic V1 file.
  stats: delta.checkpoint.writeStatsAsJson / writeStatsAsStruct (both true when unset).
examples:
  delta-ckpt checkpoint /data/t                        # what delta-spark would write
  delta-ckpt checkpoint /data/t --spec v2 --top-level-format parquet --actions-per-sidecar 100000
  delta-ckpt checkpoint /data/t --spec v1 --parts 4    # multi-part (not on v2Checkpoint tables)
  delta-ckpt checkpoint /data/t --version 12 --json    # machine-readable result"""


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "checkpoint",
        help="write a checkpoint (V1 classic or multi-part, V2 with sidecars) and _last_checkpoint",
        description="Write a checkpoint of a table version with the reference PySpark writer.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_table_argument(parser)
    add_version_argument(parser, "version to checkpoint")
    parser.add_argument(
        "--spec",
        type=CheckpointSpec,
        choices=tuple(CheckpointSpec),
        help="checkpoint spec (default: from delta.checkpointPolicy)",
    )
    parser.add_argument(
        "--naming",
        type=CheckpointNaming,
        choices=REQUESTABLE_NAMINGS,
        help="file naming (default: uuid for V2, classic for V1)",
    )
    parser.add_argument(
        "--top-level-format",
        "--manifest",
        dest="top_level_format",
        type=TopLevelFormat,
        choices=tuple(TopLevelFormat),
        default=TopLevelFormat.JSON,
        help="format of a UUID-named top-level file (default: json; --manifest is the old name)",
    )
    parser.add_argument(
        "--actions-per-sidecar",
        type=int,
        metavar="N",
        help="V2: file actions per sidecar (default: by actions, bytes and cores, at most 50000 each)",
    )
    parser.add_argument(
        "--incremental",
        action="store_true",
        help="V2: list the base checkpoint's sidecars again when no commit since touched their files; write "
        "only the changes (and the rewritten sidecars) in new ones",
    )
    parser.add_argument(
        "--no-sidecars",
        action="store_true",
        help="V2: put every file action in the top-level file instead of sidecars",
    )
    parser.add_argument(
        "--parts", type=int, metavar="N", help="V1: write a multi-part checkpoint of N >= 2 parts"
    )
    parser.add_argument(
        "--stats",
        type=StatsMode,
        choices=tuple(StatsMode),
        help="statistics as JSON (stats), as structs (stats_parsed), or both (default: table properties)",
    )
    parser.add_argument(
        "--compression",
        metavar="CODEC",
        help="Parquet codec (default: delta.parquet.compression.codec, else zstd)",
    )
    parser.add_argument(
        "--now", type=int, metavar="MS", help="clock for tombstone/txn expiry, ms since epoch"
    )
    parser.add_argument("--no-last-checkpoint", action="store_true", help="do not update _last_checkpoint")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def human_result(result: CheckpointResult) -> str:
    lines = [
        f"wrote a {result.spec.upper()} {result.naming}-named checkpoint of version {result.version} "
        f"({result.num_actions} actions, {result.size_in_bytes} bytes):",
    ]
    for f in result.files:
        kept = " (existing file kept)" if f.kept_existing else ""
        other = f.rows - f.adds - f.removes
        lines.append(
            f"  {f.role:9} {f.name}  {f.size_in_bytes} B, {f.adds} add, {f.removes} remove, {other} other{kept}"
        )
    if result.last_checkpoint is not None:
        lines.append(f"_last_checkpoint updated (checksum {result.last_checkpoint.get('checksum')})")
    else:
        lines.append(f"_last_checkpoint not updated: {result.last_checkpoint_skipped}")
    timings = ", ".join(f"{k} {v:.1f}s" for k, v in result.timings.items())
    lines.append(f"time: {timings}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    # Bad input fails fast, before Spark starts (local and S3 tables; a read-only location too). Then
    # the driver JVM launches in the background while the writer's modules (pyspark.sql) load (issue #12).
    options = CheckpointOptions(
        spec=args.spec,
        naming=args.naming,
        top_level_format=args.top_level_format,
        actions_per_sidecar=args.actions_per_sidecar,
        sidecars=not args.no_sidecars,
        incremental=args.incremental,
        parts=args.parts,
        stats=args.stats,
        compression=args.compression,
        now_ms=args.now,
        write_last_checkpoint=not args.no_last_checkpoint,
        hooks=args.hooks,
        progress=Progress(enabled=not (args.quiet or args.json)),
    )
    request = checked_request(open_table_from_args(args, require_checkpointable_table), args.version)
    start_spark_from_args(args)
    from reference_impl.write.writer import write_checkpoint

    # The request's checks ran above: the writer does not run them again.
    result = write_checkpoint(request, options=options, spark=lambda: spark_from_args(args))
    if args.json:
        emit_json(result.to_json())
    else:
        print(human_result(result))
    return 0
