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

:meth:`HdfsServer.holding_writes` stops the DataNode in the middle of receiving a block, through
Hadoop's own DataNode test hook (``DataNodeFaultInjector``, installed by the launcher; the hook and
the lines of Hadoop it runs at are described in ``MiniHdfs.java``): a writer killed while its file
is half written (``tests/reference_impl/write/test_store_crash.py``, spec §19.4).
:meth:`HdfsServer.stop_datanodes` shuts the DataNode down while the NameNode runs on: every block
read fails from then on (a reader's Spark job meeting a store that lost its data servers,
``tests/reference_impl/read/test_store_failures.py``; a server of the test's own, not the session's).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from conformance.java_build import build_cached, java_tool
from conformance.oracles.delta_jars import resolve_jars
from tests.support.servers.processes import first_line, spawn, stop_group

SOURCE = Path(__file__).resolve().parent / "java" / "MiniHdfs.java"
MAIN_CLASS = "MiniHdfs"
_HADOOP_API = re.compile(r"hadoop-client-api-(?P<version>\d[^/]*)\.jar$")


class HdfsUnavailable(RuntimeError):
    """The MiniDFSCluster launcher cannot be built (no JDK, no Maven Central, a compile error)."""


@dataclass
class HeldWrites:
    """Block writes the DataNode holds: ``(path, bytes on the DataNode's disk)`` of each; ``held`` set at the first."""

    held: threading.Event = field(default_factory=threading.Event)
    blocks: list[tuple[str, int]] = field(default_factory=list)


class _Launcher:
    """The launcher's standard input (its commands) and output (its log, and the ``HELD`` lines of holds)."""

    def __init__(self, commands: IO[bytes], output: IO[bytes], log: IO[bytes]) -> None:
        self._commands, self._output, self._log = commands, output, log
        self._lock = threading.Lock()
        self.holds: HeldWrites | None = None
        #: Set when the launcher reports its DataNodes stopped (``STOP_DATANODES``).
        self.datanodes_stopped = threading.Event()
        self.reader = threading.Thread(target=self._read, name="mini-hdfs-output", daemon=True)

    def _read(self) -> None:
        """Copy the launcher's output (log4j's console output too) to the log, so that it never blocks on a pipe."""
        with contextlib.suppress(OSError, ValueError):
            for line in self._output:
                self._log.write(line)
                if line.startswith(b"DATANODES STOPPED"):
                    self.datanodes_stopped.set()
                if line.startswith(b"HELD "):
                    path, _, size = line.decode("utf-8").removeprefix("HELD ").strip().rpartition(" ")
                    with self._lock:
                        if self.holds is not None:
                            self.holds.blocks.append((path, int(size)))
                            self.holds.held.set()

    def send(self, command: str, holds: HeldWrites | None) -> None:
        with self._lock:
            self.holds = holds
            self._commands.write(f"{command}\n".encode())
            self._commands.flush()


@dataclass(frozen=True)
class HdfsServer:
    """A running MiniDFSCluster: its NameNode URI (``hdfs://127.0.0.1:<port>``)."""

    namenode: str
    launcher: _Launcher | None = field(default=None, compare=False, repr=False)

    def uri(self, path: str) -> str:
        return f"{self.namenode}/{path.strip('/')}"

    @contextlib.contextmanager
    def holding_writes(self, paths: str, *, after_bytes: int = 1) -> Iterator[HeldWrites]:
        """Hold every block write to a file whose HDFS path matches the regular expression ``paths``, until the end.

        A write is held on the DataNode once ``after_bytes`` of its block are on the DataNode's disk
        (checked after each packet the DataNode writes; a packet is at most 64 KiB): the writer's
        stream waits for an acknowledgement that does not come. At the end every held write goes on.
        """
        assert self.launcher is not None, f"{self.namenode}: not started by mini_hdfs"
        holds = HeldWrites()
        self.launcher.send(f"HOLD {after_bytes} {paths}", holds)
        try:
            yield holds
        finally:
            self.launcher.send("RELEASE", None)

    def stop_datanodes(self, timeout_s: float = 120.0) -> None:
        """Shut the DataNode down, the NameNode running on (module docs); return once it is down."""
        assert self.launcher is not None, f"{self.namenode}: not started by mini_hdfs"
        self.launcher.send("STOP_DATANODES", None)
        assert self.launcher.datanodes_stopped.wait(timeout_s), f"{self.namenode}: DataNodes not stopped"


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
def mini_hdfs(tmp: Path, *, timeout_s: float = 300.0) -> Iterator[HdfsServer]:
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
        proc = spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=tmp)
        assert proc.stdout is not None and proc.stdin is not None
        control = _Launcher(proc.stdin, proc.stdout, log)
        try:
            line = first_line(proc.stdout, "READY ", time.monotonic() + timeout_s)
            control.reader.start()
            yield HdfsServer(line.removeprefix("READY ").strip(), control)
        finally:
            stop_group(proc, close_stdin_first=True, grace_s=20.0)
            if control.reader.is_alive():
                control.reader.join(timeout=5.0)
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
