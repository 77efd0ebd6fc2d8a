"""Helpers shared by the subcommands: the Spark session from the global flags, common arguments, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

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


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document on stdout instead of text"
    )


def emit_json(document: Any) -> None:
    json.dump(document, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")
