"""``delta-ckpt env [--resolve-jars] [--json]``: what this environment has (versions, jars, readers)."""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
from importlib import metadata
from typing import Any

from conformance.oracles.delta_jars import cache_dir, cached_delta_jars, delta_coordinate, resolve_delta_jars
from reference_impl.cli.main import add_json_flag, emit_json
from reference_impl.errors import DeltaJarsUnavailable


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "env", help="show versions of Python, Spark, Java, delta-spark jars and deltalake",
        description="Describe the environment; with --resolve-jars, download delta-spark's jars once.",
    )  # fmt: skip
    parser.add_argument("--resolve-jars", action="store_true",
                        help="resolve delta-spark's jars from Maven Central into the cache (exit 2 on failure)")  # fmt: skip
    add_json_flag(parser)
    parser.set_defaults(func=run)


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


def describe(resolve: bool) -> dict[str, Any]:
    jars = cached_delta_jars()
    error = None
    if resolve and jars is None:
        try:
            jars = resolve_delta_jars()
        except DeltaJarsUnavailable as exc:
            error = str(exc)
    return {
        "python": platform.python_version(),
        "java": _java_version(),
        "pyspark": _dist_version("pyspark"),
        "pyarrow": _dist_version("pyarrow"),
        "delta-spark (python)": _dist_version("delta-spark"),
        "deltalake": _dist_version("deltalake"),
        "delta-spark jar": ":".join(delta_coordinate()),
        "jars cached": jars is not None,
        "cache": str(cache_dir()),
        "jars error": error,
    }


def run(args: argparse.Namespace) -> int:
    info = describe(args.resolve_jars)
    if args.json:
        emit_json(info)
    else:
        for key, value in info.items():
            if value is not None:
                print(f"{key:22} {value}")
    return 2 if args.resolve_jars and info["jars error"] else 0
