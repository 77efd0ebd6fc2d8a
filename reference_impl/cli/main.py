"""``delta-ckpt``: the command line of delta-checkpoint-conformance.

The root parser lives here; the subcommands come from the entry-point group
``delta_ckpt.commands`` (``pyproject.toml``): the reference implementation's own (``snapshot``,
``checkpoint``, ``cleanup``, ``validate``, ``env``), the conformance suite's (``conformance``, ``spec``, ``demo``,
and ``env --resolve-jars``) and the fixture generator's (``fixtures``). Each entry point is a
``register(subparsers)`` function; the parser it adds sets ``func`` to a callable taking the parsed
namespace and returning an exit status. So ``reference_impl`` never imports the suite or the
generator: they plug in. An entry point is named after the command it adds, or ``COMMAND-PART``
when it extends ``COMMAND`` (``env-jars``); a command line naming a command loads only those entry
points (issue #12: a short command does not import the other commands' modules), any other
(``--help``, ``--version``, a wrong command) loads them all.

One error convention for every command: an error carrying a :class:`~spec.error_codes.ErrorCode`
(a :class:`~reference_impl.errors.CheckpointError`, or a coded error of another command group)
prints one line — ``CODE: message [file: …] [rule: …]`` — to stderr (and a JSON object to stdout
with ``--json``) and exits with status 2; success exits 0; a conformance run with failures exits 1.
Any other exception (``BaseException`` too) is our bug: its traceback, then one ``INTERNAL_ERROR`` line,
status 2; Ctrl-C prints ``interrupted``, status 130; a command's ``sys.exit`` keeps its status. An exception
of the hooks an in-process caller passes (``main(argv, hooks=…)``, tests only) is the caller's, not the
command's: it leaves :func:`main` as it was raised (e.g. a test's ``pytest.fail`` in a hook), unreported.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any, TypeVar

from reference_impl import __version__
from reference_impl.cli.common import emit_json
from reference_impl.errors import CheckpointError, InternalError
from reference_impl.hooks import NO_HOOKS, Hooks, PublicationPoint
from reference_impl.spark.session import exit_now, own_temp_root, stop_session_started_inside
from spec.error_codes import ErrorCode

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_T = TypeVar("_T")

ENTRY_POINT_GROUP = "delta_ckpt.commands"
#: The implementation's own commands, listed first and in this order; other groups follow by name.
OWN_COMMANDS: tuple[str, ...] = ("snapshot", "checkpoint", "cleanup", "validate", "env")

Handler = Callable[[argparse.Namespace], int]


def _command_groups(command: str | None = None) -> list[metadata.EntryPoint]:
    """The command groups, own first; with ``command``, only its own (``command``, ``command-…``) if any."""

    def key(ep: metadata.EntryPoint) -> tuple[int, str]:
        own = ep.name in OWN_COMMANDS and ep.value.startswith("reference_impl.")
        return (OWN_COMMANDS.index(ep.name), "") if own else (len(OWN_COMMANDS), ep.name)

    groups = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=key)
    named = [ep for ep in groups if command is not None and ep.name.partition("-")[0] == command]
    return named or groups


def _add_global_options(parser: argparse.ArgumentParser) -> None:
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


def _command_word(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word after the global options), if any (the full parser
    reports a bad command line)."""
    words = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    _add_global_options(words)
    words.add_argument("command", nargs="?")
    try:
        known, _ = words.parse_known_args(argv)
    except argparse.ArgumentError:
        return None
    command: str | None = known.command
    return command


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The root parser with every command, or (given ``argv``) with the command ``argv`` names."""
    parser = argparse.ArgumentParser(
        prog="delta-ckpt",
        description="Reference Delta Lake checkpoint writer, reader and cleaner, and the conformance suite.",
        epilog="Exit status: 0 success, 1 conformance failures, 2 error (one line naming the file and the rule).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _add_global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for entry_point in _command_groups(None if argv is None else _command_word(argv)):
        entry_point.load()(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, hooks: Hooks = NO_HOOKS) -> int:
    """Run ``delta-ckpt`` with ``argv``; ``hooks`` reach the writer and the cleaner (tests only).

    Without ``argv`` (the process's own command line) an implementation command (:data:`OWN_COMMANDS`)
    ends the process itself once its output is written, on success, error or Ctrl-C
    (:func:`~reference_impl.spark.session.exit_now`: a local master's session is not stopped, no
    interpreter teardown; issue #12), and every temporary file of the process and of its Spark JVM
    goes with it (:func:`~reference_impl.spark.session.own_temp_root`).
    """
    as_process = argv is None
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    args.hooks = hooks if as_process or hooks is NO_HOOKS else _CallersHooks(hooks)
    if not (as_process and args.command in OWN_COMMANDS):
        return _run(args, leave_local=False)
    own_temp_root()
    status = 130  # a Ctrl-C while _run reports an error
    try:
        status = _run(args, leave_local=True)
    except SystemExit as exc:  # a handler's sys.exit: exit_now skips the interpreter's own report
        status = _exit_status(exc)
    finally:
        exit_now(status)


def _run(args: argparse.Namespace, *, leave_local: bool) -> int:
    """The command's exit status; its errors reported as the module docstring says."""
    handler: Handler = args.func
    try:
        # A cluster's executors exit before this process does; a local session may be left to exit_now.
        with stop_session_started_inside(leave_local=leave_local):
            return handler(args)
    except CheckpointError as exc:
        return _fail(args, str(exc), exc.to_json())
    except _HookRaised as raised:  # the caller's own exception (module docs)
        raise raised.error from None
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout went away (e.g. `| head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except SystemExit:  # the handler's own exit status (main reports it as the interpreter would)
        raise
    except BaseException as exc:  # an Exception, or e.g. a BaseException of a library: one line, status 2
        code = getattr(exc, "code", None)
        if isinstance(code, ErrorCode):  # a coded error of another command group (e.g. the oracle's jars)
            return _fail(
                args, f"{code}: {exc}", {"code": code, "message": str(exc), "path": None, "rule": None}
            )
        import traceback  # anything else is our bug: say so, keep the traceback for the report

        traceback.print_exc(file=sys.stderr)
        error = InternalError(f"unexpected {type(exc).__name__}: {exc} (this is a bug; please report it)")
        return _fail(args, str(error), error.to_json())


class _HookRaised(BaseException):
    """Carries an exception of a caller's hook past the command's error handling to :func:`_run`."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


class _CallersHooks:
    """An in-process caller's hooks: whatever they raise leaves :func:`main` as it was raised (module docs)."""

    def __init__(self, hooks: Hooks) -> None:
        self._hooks = hooks

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        _as_callers(lambda: self._hooks.reached(point, count))

    def prepare(self, df: DataFrame) -> DataFrame:
        return _as_callers(lambda: self._hooks.prepare(df))


def _as_callers(call: Callable[[], _T]) -> _T:
    """``call()``; whatever it raises, carried past the command's error handling (:class:`_HookRaised`)."""
    try:
        return call()
    except BaseException as exc:
        raise _HookRaised(exc) from exc


def _exit_status(exc: SystemExit) -> int:
    """The status the interpreter gives ``sys.exit(code)``: ``None`` 0, an int itself, else 1 with
    ``code`` printed to stderr."""
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


def _fail(args: argparse.Namespace, line: str, document: dict[str, Any]) -> int:
    print(line, file=sys.stderr)
    if getattr(args, "json", False):
        emit_json({"ok": False, "error": document})
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
