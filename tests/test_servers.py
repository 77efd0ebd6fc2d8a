"""The test servers die with the test process that started them, however it ends, and stopping one stops its
whole process group.

A test run that is killed (SIGKILL, a CI timeout) runs no fixture finaliser: the SeaweedFS and
MiniDFSCluster servers (``tests/support/servers``) are started through ``die_with_parent.py``
(:func:`tests.support.servers.processes.spawn`), which has the kernel SIGKILL them when their parent ends.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.servers.processes import DIE_WITH_PARENT, spawn, stop_group, wait_until
from tests.support.servers.seaweed import grpc_sockets

#: A stand-in for a test process: starts SeaweedFS as the ``s3_server`` fixture does, says when it is
#: ready, then waits to be killed.
STAND_IN = """
import sys
from pathlib import Path
from tests.support.servers.seaweed import seaweed_s3

with seaweed_s3(Path(sys.argv[1])):
    print("ready", flush=True)
    sys.stdin.read()
"""
#: How long the test waits for an event (a loaded machine: generous, never slept through).
PATIENCE_S = 300.0


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_a_killed_test_process_takes_its_server_with_it(tmp_path: Path) -> None:
    """SIGKILL the process that started SeaweedFS (no finaliser runs): the kernel kills the server."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    stand_in = subprocess.Popen(
        [sys.executable, "-c", STAND_IN, str(tmp_path / "s3")],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert stand_in.stdout is not None
        ready, _, _ = select.select([stand_in.stdout], [], [], PATIENCE_S)
        line = stand_in.stdout.readline() if ready else b""
        assert line == b"ready\n", f"SeaweedFS not started in {PATIENCE_S:.0f} s: {line!r}"
        (server,) = _children(stand_in.pid)
        server_fd = os.pidfd_open(server)
        argv = [a.decode() for a in Path(f"/proc/{server}/cmdline").read_bytes().split(b"\0")]
    finally:
        stand_in.kill()
        _, stderr = stand_in.communicate(timeout=PATIENCE_S)
    try:
        ended, _, _ = select.select([server_fd], [], [], PATIENCE_S)
        alive = Path(f"/proc/{server}/cmdline").read_bytes().split(b"\0")[:3] if not ended else []
        if not ended:  # the test fails: stop exactly the server it started (its pidfd), leave none running
            signal.pidfd_send_signal(server_fd, signal.SIGKILL)
    finally:
        os.close(server_fd)
        for socket in grpc_sockets(argv):  # the finaliser that removes them did not run
            socket.unlink(missing_ok=True)
    assert stand_in.returncode == -signal.SIGKILL, f"stand-in exit {stand_in.returncode}: {stderr[-1500:]!r}"
    assert ended, f"server {server} ({alive}) still runs {PATIENCE_S:.0f} s after its test process was killed"


def test_a_server_whose_parent_is_already_gone_does_not_start() -> None:
    """The launcher refuses to start a server once the process that asked for it has ended."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    done = subprocess.run(
        [sys.executable, str(DIE_WITH_PARENT), gone.stdout.decode().strip(), "echo", "started"],
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, ""), (
        f"{DIE_WITH_PARENT}: exit {done.returncode}, {done.stdout!r}"
    )
    assert "ended before echo started" in done.stderr, done.stderr


def test_a_readiness_probe_that_cannot_run_fails_at_once_not_at_the_deadline() -> None:
    """A probe whose own code is broken (here an import that fails) is not a server still starting: the
    error is raised on the first call, not turned into "not ready in time" when the deadline passes."""
    calls = 0

    def broken_probe() -> bool:
        nonlocal calls
        calls += 1
        from obstore.store import NoSuchStore  # type: ignore[attr-defined]  # noqa: F401

        return True

    started = time.monotonic()
    with pytest.raises(ImportError, match="NoSuchStore"):
        wait_until(broken_probe, time.monotonic() + 60, None, "a server")
    assert calls == 1, f"the probe ran {calls} times"
    assert time.monotonic() - started < 5


def test_a_probe_that_fails_to_connect_is_retried_until_the_deadline() -> None:
    """A refused connection means "not ready yet": the probe is called again until the deadline, and the
    timeout names the last error."""
    calls = 0

    def refused() -> bool:
        nonlocal calls
        calls += 1
        raise ConnectionRefusedError("connection refused")

    with pytest.raises(TimeoutError, match="connection refused"):
        wait_until(refused, time.monotonic() + 0.5, None, "a server")
    assert calls >= 2, f"the probe ran {calls} times"


#: A server with a child it forked: the child ignores SIGTERM and prints its pid; the server ends on
#: SIGTERM or at the end of its stdin.
GROUP_LEADER = """
import subprocess, sys
child = subprocess.Popen(
    [sys.executable, "-c",
     "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(os.getpid(), flush=True); "
     "time.sleep(600)"],
    stdin=subprocess.DEVNULL,
)
sys.stdin.read()
"""


def _unreaped(pid: int) -> bool:
    """Whether ``pid``, a child of this process, is not reaped yet (running, or a zombie): its pid, and so
    the id of the group it leads, cannot have been given to another process."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


@pytest.mark.parametrize("close_stdin_first", [False, True], ids=["sigterm", "stdin-eof"])
def test_stopping_a_server_stops_its_child_that_ignores_sigterm(
    close_stdin_first: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``stop_group``: the server ends (on SIGTERM, or on the end of its stdin) and the child it left behind,
    which ignores SIGTERM, is SIGKILLed as a member of the server's group, which the server's pid names
    until ``stop_group`` reaps it; the server is reaped (its status known). Every signal to the group is
    sent while the server is not reaped (``os.killpg`` is wrapped to record that, then called): after the
    reap, the group's id could name another group once the pid counter wraps."""
    proc = spawn([sys.executable, "-c", GROUP_LEADER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    signalled: list[tuple[str, bool]] = []  # (signal, the server not reaped yet), per killpg of its group
    killpg = os.killpg

    def recording_killpg(pgid: int, sig: int) -> None:
        if pgid == proc.pid:
            signalled.append((signal.Signals(sig).name, _unreaped(pgid)))
        killpg(pgid, sig)

    monkeypatch.setattr(os, "killpg", recording_killpg)
    child_fd = None
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], PATIENCE_S)
        line = proc.stdout.readline() if ready else b""
        assert line.strip().isdigit(), f"the server's child printed no pid in {PATIENCE_S:.0f} s: {line!r}"
        child = int(line)
        child_fd = os.pidfd_open(child)
        assert os.getpgid(child) == proc.pid, f"child {child} is in group {os.getpgid(child)}, not {proc.pid}"
        stop_group(proc, close_stdin_first=close_stdin_first, grace_s=PATIENCE_S)
        ended, _, _ = select.select([child_fd], [], [], PATIENCE_S)
        if not ended:  # the test fails: stop exactly the child it started (its pidfd), leave none running
            signal.pidfd_send_signal(child_fd, signal.SIGKILL)
        assert ended, f"child {child} of server {proc.pid} still runs {PATIENCE_S:.0f} s after stop_group"
        assert ("SIGKILL", True) in signalled and all(unreaped for _, unreaped in signalled), (
            f"server {proc.pid}: killpg of its group (signal, server not reaped yet): {signalled}"
        )
        expected = 0 if close_stdin_first else -signal.SIGTERM
        assert proc.returncode == expected, (
            f"server {proc.pid}: exit status {proc.returncode}, not {expected}"
        )
    finally:
        if child_fd is not None:
            os.close(child_fd)
        if proc.returncode is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
