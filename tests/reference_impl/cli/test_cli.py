"""The command line: every command group is found through the entry points, every ``--help`` works
and keeps its examples, ``--version`` reads the package's version, and the old ``--manifest`` flag
still works (no Spark: parsing only)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from reference_impl import __version__
from reference_impl.cli.main import build_parser, main
from spec.vocabulary import TopLevelFormat

COMMANDS = ("snapshot", "checkpoint", "cleanup", "validate", "env", "conformance", "demo", "fixtures", "spec")
#: Commands whose help carries examples (their epilog).
EXAMPLES = {
    "checkpoint": "delta-ckpt checkpoint /data/t",
    "cleanup": "delta-ckpt cleanup /data/t --dry-run",
    "validate": "delta-ckpt validate /data/t",
    "conformance run": "delta-ckpt conformance run --impl reference",
}


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0, argv
    return capsys.readouterr().out


def _command_choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The root parser's commands, by name."""
    choices = next(a for a in parser._actions if a.dest == "command").choices
    assert isinstance(choices, dict), choices
    return choices


def test_every_command_group_is_registered() -> None:
    """The root parser has the implementation's commands first, then the suite's and the generator's."""
    parser = build_parser()
    choices = _command_choices(parser)
    assert list(choices) == list(COMMANDS[:5]) + sorted(COMMANDS[5:])


@pytest.mark.parametrize("command", ["", *COMMANDS, "conformance run", "fixtures generate", "spec coverage"])
def test_help_works(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``delta-ckpt [COMMAND] --help`` exits 0 and prints a usage line (and its examples, where it has them)."""
    out = _help(capsys, *command.split())
    assert out.startswith("usage: delta-ckpt"), out[:200]
    if command in EXAMPLES:
        assert "examples:" in out and EXAMPLES[command] in out, out


@pytest.mark.parametrize(
    ("argv", "loaded"),
    [
        (["snapshot", "/t", "--json"], ["snapshot"]),
        (["--master", "local[1]", "--conf", "a=b", "checkpoint", "/t"], ["checkpoint"]),
        (["env", "--json"], ["env"]),
        (["no-such-command"], [*COMMANDS[:5], *sorted(COMMANDS[5:])]),
        (["--conf"], [*COMMANDS[:5], *sorted(COMMANDS[5:])]),
    ],
)
def test_a_command_line_loads_only_the_groups_of_its_command(argv: list[str], loaded: list[str]) -> None:
    """A command line naming a command loads only that command's entry points (``env`` with the suite's
    ``env-jars`` part); any other loads every group, so that argparse reports it in full."""
    parser = build_parser(argv)
    choices = _command_choices(parser)
    assert list(choices) == loaded, f"{argv}: {list(choices)}"
    if argv[0] == "env":
        assert "--resolve-jars" in choices["env"].format_help(), "env lost the suite's jars section"


def test_env_has_the_jars_section(capsys: pytest.CaptureFixture[str]) -> None:
    """The suite adds ``--resolve-jars`` to the implementation's ``env`` command."""
    assert "--resolve-jars" in _help(capsys, "env")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """``delta-ckpt --version`` prints the package version (one version: pyproject.toml)."""
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"delta-ckpt {__version__}"
    assert __version__ == metadata.version("delta-checkpoint-conformance")


def test_manifest_is_an_alias_of_top_level_format() -> None:
    """``--manifest`` (the old name) and ``--top-level-format`` set the same option."""
    parser = build_parser()
    for flag in ("--manifest", "--top-level-format"):
        args = parser.parse_args(["checkpoint", "/t", flag, "parquet"])
        assert args.top_level_format is TopLevelFormat.PARQUET


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a file every write to fails)")
@pytest.mark.parametrize("target", ["pipe", "/dev/full"])
def test_a_process_whose_json_output_is_lost_does_not_exit_0(target: str) -> None:
    """``delta-ckpt env --json`` as its own process ends through ``exit_now`` (``os._exit``, 252a5e6).

    Its JSON is block-buffered (no ``PYTHONUNBUFFERED``) and flushed only there: to a pipe it arrives
    whole with status 0; to ``/dev/full`` the flush fails, and a lost output must not be status 0.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    argv = [sys.executable, "-m", "reference_impl.cli.main", "env", "--json"]
    with open(os.devnull if target == "pipe" else target, "wb") as sink:
        out = subprocess.PIPE if target == "pipe" else sink
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, env=env, timeout=600, check=False)
    if target == "pipe":
        assert proc.returncode == 0, f"{argv}: exit {proc.returncode}; stderr {proc.stderr[-1500:]!r}"
        assert isinstance(json.loads(proc.stdout), dict), f"{argv}: stdout {proc.stdout[-500:]!r}"
    else:
        assert proc.returncode != 0, f"{argv} > {target}: exit 0 though its JSON was lost"


#: ``delta-ckpt env`` as its own process (``main()``, ending in ``exit_now``) whose work raises ``RAISE``.
RAISING_ENV = """
import sys
import reference_impl.cli.env as env
import reference_impl.cli.main as cli

class LibraryAbort(BaseException):
    pass

def describe():
    raise {raise_}

env.describe = describe
sys.argv = ["delta-ckpt", "env"]
cli.main()
"""


@pytest.mark.parametrize(
    ("raise_", "status", "last_line"),
    [
        (
            "LibraryAbort('gone')",
            2,
            "INTERNAL_ERROR: unexpected LibraryAbort: gone (this is a bug; please report it)",
        ),
        ("SystemExit(3)", 3, None),
        ("SystemExit('stopped by the command')", 1, "stopped by the command"),
    ],
    ids=["base-exception", "exit-code", "exit-message"],
)
def test_a_process_ending_in_a_base_exception_says_so(
    raise_: str, status: int, last_line: str | None
) -> None:
    """A command process whose work raises a ``BaseException`` that is not ``KeyboardInterrupt`` exited 130
    with nothing on stderr (``main``'s fallback status); now: an ``INTERNAL_ERROR`` line and status 2, and a
    ``SystemExit`` keeps the status (and message) the interpreter would give it."""
    argv = [sys.executable, "-c", RAISING_ENV.format(raise_=raise_)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == status, (
        f"raise {raise_}: exit {proc.returncode}, expected {status}: {proc.stderr!r}"
    )
    assert (lines[-1] if lines else None) == last_line, f"raise {raise_}: stderr {proc.stderr!r}"
