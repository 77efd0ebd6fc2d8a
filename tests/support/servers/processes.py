"""Child processes of the test servers: free loopback ports, a refused one, readiness, and stopping a whole process group.

Every server starts through :func:`spawn`: in a session of its own (``start_new_session=True``), so
stopping it signals its process group and nothing it forked (JVM children, executors) is left behind;
and through ``die_with_parent.py``, so that the kernel kills it when the test process ends without
stopping it (a killed or timed-out run runs no finaliser). Nothing here ever signals a process by name.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

LOOPBACK = "127.0.0.1"
#: The launcher every server starts through (see :func:`spawn`).
DIE_WITH_PARENT = Path(__file__).resolve().with_name("die_with_parent.py")


@functools.cache
def _refusing_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind((LOOPBACK, 0))
    return sock


def refused_port() -> int:
    """A loopback port on which every connection is refused while this process runs (an unreachable server).

    This process holds it bound and never listens on it, so no other process can take it; a port that was
    merely free a moment ago could be taken by another test process's server before the test connects."""
    return int(_refusing_socket().getsockname()[1])


def free_ports(names: Iterable[str]) -> dict[str, int]:
    """One free port per name, all different (the sockets are held until every port is chosen)."""
    socks, out = [], {}
    try:
        for name in names:
            sock = socket.socket()
            sock.bind((LOOPBACK, 0))
            socks.append(sock)
            out[name] = int(sock.getsockname()[1])
    finally:
        for sock in socks:
            sock.close()
    return out


def spawn(argv: list[str], **popen: Any) -> subprocess.Popen[bytes]:
    """Start a server (``argv``, with :class:`subprocess.Popen`'s ``popen`` arguments) in a session of its own,
    SIGKILLed by the kernel when the calling thread ends (``die_with_parent.py``: Linux's ``PR_SET_PDEATHSIG``;
    the fixtures start their servers on the test process's main thread). The launcher execs the server, so
    the returned process is the server itself and the leader of its process group (:func:`stop_group`)."""
    return subprocess.Popen(
        [sys.executable, str(DIE_WITH_PARENT), str(os.getpid()), *argv], start_new_session=True, **popen
    )


def wait_until(
    ready: Callable[[], bool], deadline: float, proc: subprocess.Popen[bytes] | None, what: str
) -> None:
    """Call ``ready()`` until it returns true; fail when ``proc`` exits or ``deadline`` passes. An error of
    the probe's own code (an import, a name, a call that cannot be made) is raised at once: waiting cannot
    cure it, and it would otherwise surface minutes later as a server that "was not ready in time"."""
    last: BaseException | None = None
    while time.monotonic() < deadline:
        if proc is not None and (status := _exit_status(proc)) is not None:
            raise RuntimeError(f"{what} exited with status {status} before it was ready")
        try:
            if ready():
                return
        except (ImportError, NameError, TypeError):
            raise
        except Exception as exc:  # not ready yet
            last = exc
        time.sleep(0.1)
    raise TimeoutError(f"{what} was not ready in time ({last})")


def first_line(stream: IO[bytes], prefix: str, deadline: float) -> str:
    """The first line of ``stream`` that starts with ``prefix`` (a server's ready signal)."""
    found: list[str] = []

    def read() -> None:
        for raw in stream:
            line = raw.decode("utf-8", "replace").strip()
            if line.startswith(prefix):
                found.append(line)
                return
        found.append("")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    if not found or not found[0]:
        raise RuntimeError(f"no line starting with {prefix!r} before the deadline or end of output")
    return found[0]


def _exit_status(proc: subprocess.Popen[bytes]) -> int | None:
    """The exit status of ``proc`` once it has ended (a negative signal number when a signal ended it),
    else None — without reaping it: until :func:`stop_group` reaps it, its zombie keeps its pid, which
    is its group's id, from being given to another process."""
    if proc.returncode is not None:
        return proc.returncode
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped by someone else: ended, status unknown here
        return proc.wait()
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def _ends_within(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Whether ``proc`` ends within ``timeout_s`` (not reaped: :func:`_exit_status`)."""
    deadline = time.monotonic() + timeout_s
    while _exit_status(proc) is None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def stop_group(
    proc: subprocess.Popen[bytes], *, close_stdin_first: bool = False, grace_s: float = 10.0
) -> None:
    """Stop a server and its process group: close its stdin (and wait) if it stops on EOF, then
    SIGTERM the group and wait, then SIGKILL whatever is left of the group — and only then reap the
    leader. Until it is reaped, the leader (alive or a zombie) holds its pid, the group's id, so
    ``killpg`` cannot reach another group the kernel gave the same number after the leader was gone."""
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    if not (close_stdin_first and _ends_within(proc, grace_s)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        _ends_within(proc, grace_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # children the leader left behind
    proc.wait()
