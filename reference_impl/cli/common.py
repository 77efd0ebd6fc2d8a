"""Helpers shared by the subcommands: the Spark session from the global flags, common arguments, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reference_impl.log.table import Table, open_table
from reference_impl.spark.session import get_spark, settings_from_env, start_spark
from reference_impl.storage.options import parse_option_pairs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Opens a table from its location, storage options and session source (and may add the rule it breaks).
TableOpener = Callable[..., Table]


def spark_from_args(args: argparse.Namespace) -> SparkSession:
    """The reference session (Spark built-ins only), honouring ``--master`` / ``--conf``."""
    return get_spark(settings_from_env(args.master, args.conf))


def start_spark_from_args(args: argparse.Namespace) -> None:
    """Begin launching the session of :func:`spark_from_args` in the background (its input checked first:
    the command's JVM start-up then overlaps the Python work before its first Spark use, issue #12)."""
    start_spark(settings_from_env(args.master, args.conf))


def add_table_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "table",
        metavar="TABLE",
        help="table location: a local path, or a file:, s3://, hdfs:// or other Hadoop file system URI "
        "(s3a://, abfss://, gs://, …; an unknown scheme is a STORAGE_ERROR)",
    )
    parser.add_argument(
        "--storage-option",
        dest="storage_options",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="option of the table's store, named as in deltalake (e.g. AWS_REGION=eu-west-1), repeatable",
    )


def open_table_from_args(args: argparse.Namespace, opener: TableOpener = open_table) -> Table:
    """The table of ``args.table`` with its ``--storage-option``\\ s, opened by ``opener``.

    A store reached through Spark's JVM (a Hadoop file system) starts Spark with ``--master``/``--conf``.
    """
    return opener(args.table, parse_option_pairs(args.storage_options), session=lambda: spark_from_args(args))


def add_version_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--version", type=int, default=None, metavar="N", help=f"{what} (default: the latest)"
    )


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document on stdout instead of text"
    )


def emit_json(document: Any) -> None:
    """``document`` as indented JSON on stdout, in one write (``json.dump`` writes it piece by piece:
    0.18-0.21 s for the state of a 10,000-file table, in one 0.05-0.09 s, issue #12; the same text)."""
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=False, default=str) + "\n")
