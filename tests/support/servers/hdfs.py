"""A real HDFS for the tests: Hadoop's MiniDFSCluster (one NameNode, one DataNode) on 127.0.0.1.

The launcher (``tests/support/servers/java/MiniHdfs.java``) is compiled with ``javac`` against
``org.apache.hadoop:hadoop-client-minicluster`` of the Hadoop version pyspark ships (resolved from
Maven Central into the project cache by :func:`conformance.oracles.delta_jars.resolve_jars`) and
pyspark's own ``jars/*`` (Hadoop's client API and runtime). ``scripts/bootstrap.sh`` builds it at
setup (``python -m tests.support.servers.hdfs``); :func:`mini_hdfs` builds it on first use if setup
did not. The build is cached under ``$DELTA_CKPT_CACHE/hdfs-launcher/<key>/`` (source, classpath
and ``javac`` hashed).

Ready means: the launcher printed ``READY hdfs://127.0.0.1:<port>``, which it does after
``MiniDFSCluster.waitActive()``. Stopping closes the launcher's standard input (it shuts the
cluster down), then signals its process group (:mod:`.processes`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformance.java_build import build_cached, java_tool
from conformance.oracles.delta_jars import resolve_jars
from tests.support.servers.processes import first_line, stop_group

SOURCE = Path(__file__).resolve().parent / "java" / "MiniHdfs.java"
MAIN_CLASS = "MiniHdfs"
_HADOOP_API = re.compile(r"hadoop-client-api-(?P<version>\d[^/]*)\.jar$")


class HdfsUnavailable(RuntimeError):
    """The MiniDFSCluster launcher cannot be built (no JDK, no Maven Central, a compile error)."""


@dataclass(frozen=True)
class HdfsServer:
    """A running MiniDFSCluster: its NameNode URI (``hdfs://127.0.0.1:<port>``)."""

    namenode: str

    def uri(self, path: str) -> str:
        return f"{self.namenode}/{path.strip('/')}"


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def hadoop_version() -> str:
    """The Hadoop version pyspark ships (from its ``hadoop-client-api`` jar)."""
    for jar in _pyspark_jars().glob("hadoop-client-api-*.jar"):
        match = _HADOOP_API.search(jar.name)
        if match:
            return match.group("version")
    raise HdfsUnavailable(f"pyspark ships no hadoop-client-api jar in {_pyspark_jars()}")


def classpath() -> list[str]:
    """``hadoop-client-minicluster`` (and what it adds to pyspark's jars), then pyspark's ``jars/*``."""
    try:
        jars = resolve_jars(("org.apache.hadoop", "hadoop-client-minicluster", hadoop_version()))
    except RuntimeError as exc:
        raise HdfsUnavailable(str(exc)) from exc
    return [*(str(j) for j in jars), str(_pyspark_jars() / "*")]


def _tool(name: str) -> str:
    return java_tool(name, HdfsUnavailable, "the MiniDFSCluster launcher")


def build() -> Path:
    """The directory holding the compiled launcher, compiled now unless cached for this source and classpath."""
    return build_cached(
        SOURCE,
        classpath(),
        kind="hdfs-launcher",
        product=f"{MAIN_CLASS}.class",
        what="the MiniDFSCluster launcher",
        unavailable=HdfsUnavailable,
    ).parent


@contextlib.contextmanager
def mini_hdfs(tmp: Path, *, timeout_s: float = 120.0) -> Iterator[HdfsServer]:
    """Start a MiniDFSCluster with its data in ``tmp``, yield its :class:`HdfsServer`, stop it."""
    launcher = build()
    argv = [
        _tool("java"),
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        "-Xmx768m",
        "-Djava.net.preferIPv4Stack=true",
        "-cp",
        os.pathsep.join([str(launcher), *classpath()]),
        MAIN_CLASS,
        str(tmp / "dfs"),
    ]
    with (tmp / "hdfs.log").open("wb") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
            cwd=tmp,
        )
        assert proc.stdout is not None
        # Keeps draining stdout (log4j's console output) so the launcher never blocks on a full pipe.
        drain = threading.Thread(target=shutil.copyfileobj, args=(proc.stdout, log), daemon=True)
        try:
            line = first_line(proc.stdout, "READY ", time.monotonic() + timeout_s)
            drain.start()
            yield HdfsServer(line.removeprefix("READY ").strip())
        finally:
            stop_group(proc, close_stdin_first=True, grace_s=20.0)
            if drain.is_alive():
                drain.join(timeout=5.0)
            proc.stdout.close()


def main() -> int:
    """Resolve the minicluster jar and build the launcher (``scripts/bootstrap.sh``); status 1 when it cannot."""
    try:
        print(f"[setup] MiniDFSCluster launcher: {build()}", file=sys.stderr)
    except (HdfsUnavailable, OSError) as exc:
        print(f"[setup] MiniDFSCluster launcher unavailable: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
