"""``delta-ckpt demo [--out DIR]``: write a small table with delta-spark, then read it back with ours.

The table has a V2 checkpoint (JSON top-level file and several sidecars, written by delta-spark), a
few commits after it, a deletion and a transaction id. The reference reader then reconstructs it
and prints the ``snapshot`` summary, and the demo says whether delta-spark's own snapshot agrees.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from reference_impl.cli.main import add_json_flag, emit_json
from reference_impl.cli.snapshot import human_summary
from reference_impl.progress import Progress
from reference_impl.read.snapshot import read_snapshot
from reference_impl.spark.session import get_delta_spark, settings_from_env


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo", help="build a small V2-checkpointed table with delta-spark and read it with the reference reader",
        description=__doc__,
    )  # fmt: skip
    parser.add_argument(
        "--out", type=Path, default=None, help="where to write the table (default: a temp dir)"
    )
    add_json_flag(parser)
    parser.set_defaults(func=run)


def build_demo_table(spark: Any, path: Path) -> None:
    """Five commits; delta-spark writes a V2 checkpoint (JSON top-level file + sidecars) at version 3."""
    spark.conf.set("spark.databricks.delta.checkpoint.partSize", "3")
    location = str(path)
    spark.sql(
        f"CREATE TABLE delta.`{location}` (id BIGINT, part STRING) USING delta PARTITIONED BY (part) "
        "TBLPROPERTIES ('delta.checkpointInterval'='3', 'delta.checkpointPolicy'='v2')"
    )
    for i in range(3):
        (spark.range(i * 4, i * 4 + 4, 1, 2).selectExpr("id", "cast(id % 2 as string) part")
         .write.format("delta").mode("append").option("txnAppId", "demo").option("txnVersion", i).save(location))  # fmt: skip
    spark.sql(f"DELETE FROM delta.`{location}` WHERE id = 1")
    spark.conf.unset("spark.databricks.delta.checkpoint.partSize")


def run(args: argparse.Namespace) -> int:
    progress = Progress(enabled=not args.json)
    with progress.phase("starting Spark with delta-spark"):
        spark = get_delta_spark(settings_from_env(args.master, args.conf))
    out = args.out or Path(tempfile.mkdtemp(prefix="delta-ckpt-demo-")) / "table"
    with progress.phase(f"writing the demo table with delta-spark at {out}"):
        build_demo_table(spark, out)
    with progress.phase("reading it back with the reference reader"):
        snap = read_snapshot(spark, out)
        summary = snap.summary()
        ours = snap.table_state()
    with progress.phase("asking delta-spark for its own snapshot"):
        from conformance.adapters.delta_spark import delta_spark_state

        theirs = delta_spark_state(spark, str(out))
    agree = ours.comparable() == theirs.comparable()
    if args.json:
        emit_json({"table": str(out), "summary": summary, "agreesWithDeltaSpark": agree})
    else:
        print(human_summary(summary))
        print(f"delta-spark agrees: {'yes' if agree else 'NO'}")
    return 0 if agree else 1
