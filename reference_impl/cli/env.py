"""``delta-ckpt env [--json]``: versions of what this environment runs.

Other command groups add facts (and flags) to this command: a callable appended to the ``env``
parser's ``env_sections`` default receives the parsed arguments and returns ``(facts, exit
status)``; its facts follow this command's, and the worst status wins. The conformance suite adds
delta-spark's jars that way (``env --resolve-jars``).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
from collections.abc import Callable
from importlib import metadata
from typing import Any

from reference_impl.cli.common import add_json_flag, emit_json

#: A contribution to ``env``: parsed arguments -> (facts, exit status).
EnvSection = Callable[[argparse.Namespace], tuple[dict[str, Any], int]]


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "env",
        help="show versions of Python, Spark, Java, delta-spark jars and deltalake",
        description="Describe the environment; with --resolve-jars, download delta-spark's jars once.",
    )
    add_json_flag(parser)
    sections: list[EnvSection] = []
    parser.set_defaults(func=run, env_sections=sections)


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _java_version() -> str | None:
    java = shutil.which("java")
    if java is None:
        return None
    proc = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    first = (proc.stderr or proc.stdout).strip().splitlines()
    return first[0] if first else None


def describe() -> dict[str, Any]:
    """Versions of Python, Java and the distributions the project runs with."""
    return {
        "python": platform.python_version(),
        "java": _java_version(),
        "pyspark": _dist_version("pyspark"),
        "pyarrow": _dist_version("pyarrow"),
        "delta-spark (python)": _dist_version("delta-spark"),
        "deltalake": _dist_version("deltalake"),
    }


def run(args: argparse.Namespace) -> int:
    info = describe()
    status = 0
    for section in args.env_sections:
        facts, code = section(args)
        info.update(facts)
        status = max(status, code)
    if args.json:
        emit_json(info)
    else:
        for key, value in info.items():
            if value is not None:
                print(f"{key:22} {value}")
    return status
