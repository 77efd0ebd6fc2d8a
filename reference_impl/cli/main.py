"""``delta-ckpt``: the command line of delta-checkpoint-conformance.

Every subcommand lives in its own module and registers itself here (:data:`_COMMANDS`); they share
the global Spark options (``--master``, ``--conf``), ``--json`` output and one error convention:
a :class:`~reference_impl.errors.CheckpointError` prints one line — ``CODE: message [file: …]
[rule: …]`` — to stderr (and a JSON object to stdout with ``--json``) and exits with status 2;
success exits 0; a conformance run with failures exits 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from reference_impl import __version__
from reference_impl.errors import CheckpointError, InternalError

#: The subcommand modules. Each defines ``register(subparsers) -> None``; the parser it adds
#: sets ``func`` to a callable taking the parsed namespace and returning an exit status.
_COMMANDS: tuple[str, ...] = (
    "reference_impl.cli.snapshot",
    "reference_impl.cli.checkpoint",
    "reference_impl.cli.cleanup",
    "reference_impl.cli.fixtures_cmd",
    "reference_impl.cli.spec_cmd",
    "reference_impl.cli.conformance_cmd",
    "reference_impl.cli.demo_cmd",
    "reference_impl.cli.env",
)

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="delta-ckpt",
        description="Reference Delta Lake checkpoint writer, reader and cleaner, and the conformance suite.",
        epilog="Exit status: 0 success, 1 conformance failures, 2 error (one line naming the file and the rule).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--master", help="Spark master URL (default: $DELTA_CKPT_SPARK_MASTER or local[2])", default=None
    )
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Spark configuration, repeatable (also $DELTA_CKPT_SPARK_CONF)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in _COMMANDS:
        importlib.import_module(module_name).register(sub)
    return parser


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document on stdout instead of text"
    )


def emit_json(document: Any) -> None:
    json.dump(document, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.func
    try:
        return handler(args)
    except CheckpointError as exc:
        return _fail(args, exc)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout went away (e.g. `| head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # anything else is our bug: say so, keep the traceback for the report
        import traceback

        traceback.print_exc(file=sys.stderr)
        return _fail(
            args, InternalError(f"unexpected {type(exc).__name__}: {exc} (this is a bug; please report it)")
        )


def _fail(args: argparse.Namespace, exc: CheckpointError) -> int:
    print(str(exc), file=sys.stderr)
    if getattr(args, "json", False):
        emit_json({"ok": False, "error": exc.to_json()})
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
