"""Delta Kernel Java as a bundled implementation: a small Java program speaking the subprocess protocol.

The program (``conformance/examples/kernel_java/Harness.java``) is compiled with ``javac`` against
jars the project already has — Delta Kernel (``delta-kernel-api``/``-defaults``, the version the
delta-spark pin brings, resolved by :mod:`conformance.oracles.delta_jars`) and pyspark's Hadoop,
Parquet and Jackson — so the build downloads nothing. The built jar is cached under
``$DELTA_CKPT_CACHE/kernel-harness/<key>/`` (:func:`conformance.java_build.build_cached`: the key
hashes the source, the classpath and ``javac``; a change to any of them rebuilds it).
``scripts/bootstrap.sh`` builds it at setup (:func:`main`); :class:`KernelJavaImplementation`
builds it on first use if setup did not.

One JVM per run: the adapter is a :class:`~conformance.adapters.command.CommandImplementation`,
which keeps the program running for every request of the session. The JVM's own warnings go to
stderr (``-Xlog:disable -Xlog:all=warning:stderr``): by default it prints them on stdout, which the
protocol reserves for responses.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

from conformance.adapters.command import DEFAULT_TIMEOUT_S, CommandImplementation
from conformance.java_build import build_cached, java_tool
from conformance.oracles.delta_jars import cached_delta_jars, resolve_delta_jars

NAME = "kernel-java"
SOURCE = Path(__file__).resolve().parents[1] / "examples" / "kernel_java" / "Harness.java"
MAIN_CLASS = "conformance.kernel.Harness"
#: The jars of the delta-spark classpath the harness needs: Kernel and what Kernel adds to pyspark's.
_KERNEL_JAR = re.compile(
    r"delta-kernel-(?:api|defaults)-|delta-storage-|jackson-datatype-jdk8-|roaringbitmap_shims-"
)
_KERNEL_VERSION = re.compile(r"delta-kernel-api-(?P<version>[^/]+)\.jar$")
JVM_FLAGS: tuple[str, ...] = ("-Xlog:disable", "-Xlog:all=warning:stderr", "-XX:TieredStopAtLevel=1")


class KernelHarnessUnavailable(RuntimeError):
    """The Kernel Java harness cannot be built (no JDK, no Kernel jars, a compile error)."""


def _java_tool(name: str) -> str:
    return java_tool(name, KernelHarnessUnavailable, "the Kernel Java harness")


def classpath() -> list[str]:
    """Kernel's jars (from the delta-spark pin) followed by pyspark's ``jars/*``."""
    import pyspark

    jars = cached_delta_jars() or resolve_delta_jars()
    kernel = [str(j) for j in jars if _KERNEL_JAR.search(j.name)]
    if not any("delta-kernel-api-" in j for j in kernel):
        raise KernelHarnessUnavailable("the delta-spark classpath has no delta-kernel-api jar")
    return [*kernel, str(Path(pyspark.__file__).parent / "jars" / "*")]


def kernel_version(cp: list[str]) -> str:
    for entry in cp:
        match = _KERNEL_VERSION.search(entry)
        if match:
            return match.group("version")
    return "unknown"


def build() -> Path:
    """The harness jar, compiled now unless a build for the same source and classpath is cached."""
    cp = classpath()
    return build_cached(
        SOURCE,
        cp,
        kind="kernel-harness",
        product="kernel-harness.jar",
        what="the Kernel Java harness",
        unavailable=KernelHarnessUnavailable,
        resources={"kernel-harness.properties": f"kernel.version={kernel_version(cp)}\n"},
    )


def command(*, extra_args: tuple[str, ...] = ()) -> str:
    """The shell command that starts the harness (building it first if needed)."""
    jar = build()
    cp = os.pathsep.join([str(jar), *classpath()])
    argv = [_java_tool("java"), *JVM_FLAGS, "-cp", cp, MAIN_CLASS, *extra_args]
    return shlex.join(argv)


class KernelJavaImplementation(CommandImplementation):
    """Delta Kernel Java (reader, classic V1 writer, cleaner) through the subprocess protocol."""

    def __init__(self, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        super().__init__(NAME, command(), timeout_s=timeout_s)


def main() -> int:
    """Build the harness (``scripts/bootstrap.sh``); exit status 1 with the reason when it cannot be."""
    try:
        print(f"[setup] Kernel Java harness: {build()}", file=sys.stderr)
    except (KernelHarnessUnavailable, OSError, RuntimeError) as exc:
        print(f"[setup] Kernel Java harness unavailable: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
