"""Helpers shared by the subcommands: Spark session from the global flags, table argument."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from reference_impl.spark.session import get_spark, settings_from_env

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def spark_from_args(args: argparse.Namespace) -> SparkSession:
    """The reference session (Spark built-ins only), honouring ``--master`` / ``--conf``."""
    return get_spark(settings_from_env(args.master, args.conf))


def add_table_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", metavar="TABLE", help="table location: a local path or file: URI")


def add_version_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--version", type=int, default=None, metavar="N", help=f"{what} (default: the latest)"
    )
