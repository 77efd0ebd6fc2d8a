"""``delta-ckpt checkpoint`` as a separate process: run it, or pause it at a publication point and kill it there.

Spec: ``spec/checkpoints.md`` §17.2 Publication order, §17.3 Atomicity. The cluster tests and the
crash tests on real stores (``tests/reference_impl/cli/test_cluster.py``,
``tests/reference_impl/write/test_store_crash.py``) run the same command — a V2 UUID-named
checkpoint with four actions a sidecar, ``--json`` — through :func:`checkpoint_argv`:

* :func:`run_checkpoint` runs it to the end;
* :func:`paused_then_killed` starts it with a ``pause:<point>`` fault directive for each of several
  points (:mod:`tests.support.faults`); at each pause (reported on stderr) it calls the test's
  check, lets the command go on to the next point, and at the last one kills its whole process
  group (the Python driver and Spark's JVM) with ``SIGKILL``, and the process group of Spark's Python
  workers, which pyspark's worker daemon makes for itself and the workers it forks (a child of the
  JVM, it would otherwise see the JVM gone only at its next poll, and a task's worker in the middle
  of a write could finish it meanwhile: a held HDFS write, released after the kill, closed its file);
  it returns once every process of both groups is gone: nothing of the writer runs after that
  point, no ``finally`` block, no JVM shutdown hook. While the command waits at a point, nothing of
  it runs either: the store holds exactly what a kill there would leave. The last point may be
  :data:`UPLOAD_HELD` instead of a pause: the command is stopped in the middle of an upload by a
  proxy in front of the store (:mod:`tests.support.servers.hold_proxy`), which sets an event when
  it holds the upload; the command is killed there, its upload's connection open mid-body.

The process runs from the repository root (a paused one in its own session, i.e. process group),
with ``local[2]`` unless the arguments name a master (``--master``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO

from tests.support import REPO_ROOT
from tests.support.faults import PAUSED
from tests.support.servers.processes import first_line

TIMEOUT_S = 900.0
#: The point "an upload is held mid-body by the proxy" (reported by an event, not by the command).
UPLOAD_HELD = "upload-held"


def checkpoint_argv(
    table: str,
    *,
    fault: str | None = None,
    global_args: Sequence[str] = (),
    storage_options: Mapping[str, str] | None = None,
) -> list[str]:
    """``delta-ckpt GLOBAL… checkpoint TABLE --spec v2 --naming uuid --actions-per-sidecar 4 --json --storage-option…``.

    With ``fault``, the command line with fault hooks (``python -m tests.support.fault_cli FAULT …``);
    without, the command as a user runs it (``python -m reference_impl.cli``).
    """
    head = ["-m", "tests.support.fault_cli", fault] if fault is not None else ["-m", "reference_impl.cli"]
    argv = [sys.executable, *head, *global_args, "checkpoint", table]
    argv += ["--spec", "v2", "--naming", "uuid", "--actions-per-sidecar", "4", "--json"]
    return argv + [f"--storage-option={k}={v}" for k, v in (storage_options or {}).items()]


def _env() -> dict[str, str]:
    return {**os.environ, "DELTA_CKPT_SPARK_MASTER": "local[2]"}


def run_checkpoint(argv: Sequence[str], *, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (from :func:`checkpoint_argv`) in ``cwd`` to the end; its exit status, stdout and stderr."""
    return subprocess.run(
        argv, env=_env(), cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


def _drain(stream: IO[bytes]) -> None:
    """Read ``stream`` to its end (so that the command never blocks on a full pipe)."""
    with contextlib.suppress(OSError, ValueError):
        for _ in stream:
            pass


def _processes() -> list[tuple[int, int, int, str]]:
    """``(pid, parent pid, process group, state)`` of every process of this PID namespace (``/proc``)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        out.append((int(stat.parent.name), int(fields[1]), int(fields[2]), fields[0]))
    return out


def _groups_below(pid: int) -> set[int]:
    """The process groups of the live descendants of ``pid`` (the leader of its own group) other than its
    own: those of Spark's Python worker daemons under the command's JVM (``pyspark.daemon`` calls
    ``setpgid(0, 0)``, and the workers it forks stay in that group)."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for child, parent, _, _ in table:
        children.setdefault(parent, []).append(child)
    below, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            below.add(child)
            todo.append(child)
    return {group for child, _, group, state in table if child in below and state != "Z"} - {pid}


def _wait_until_gone(groups: Iterable[int], deadline: float) -> None:
    """Return once no live process (a zombie is none) is in ``groups``; fail at ``deadline``."""
    left = set(groups)
    while left:
        left &= {group for _, _, group, state in _processes() if state != "Z"}
        assert not left or time.monotonic() < deadline, f"processes of groups {sorted(left)} outlived SIGKILL"
        time.sleep(0.05)


def paused_then_killed(
    argv: Sequence[str],
    points: Sequence[str],
    at_each: Callable[[str], None],
    *,
    held: threading.Event | None = None,
) -> None:
    """Run ``argv`` (made with ``fault="pause:P1,pause:P2,…"`` for ``points``) through each pause, then ``SIGKILL`` its group.

    At each point, in order, ``at_each(point)`` runs while the command waits there; then the command
    goes on (a line on its stdin), except after the last point, where its process group is killed, and
    then the groups of Spark's Python workers under it (module docs); it returns once all are gone.
    The last point may be :data:`UPLOAD_HELD`, reached when ``held`` is set (the command is not
    paused by a fault directive but stuck in an upload the proxy holds). Fails with the command's
    exit status if it ends, or pauses elsewhere, first.
    """
    proc = subprocess.Popen(
        argv,
        env=_env(),
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stderr is not None and proc.stdin is not None
    command = " ".join(argv[1:5])
    deadline = time.monotonic() + TIMEOUT_S
    try:
        for index, point in enumerate(points):
            if point == UPLOAD_HELD:
                assert held is not None and index == len(points) - 1, (
                    f"{points}: {point} only last, with an event"
                )
                threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()
                while not held.wait(0.5) and proc.poll() is None and time.monotonic() < deadline:
                    pass
                assert held.is_set() and proc.poll() is None, (
                    f"{command}…: exit {proc.poll()}, no upload held"
                )
                at_each(point)
                break
            try:
                line = first_line(proc.stderr, PAUSED, deadline)
            except RuntimeError:
                line = ""
            assert line == f"{PAUSED}{point}", (
                f"{command}…: exit {proc.poll()}, pause line {line!r}, expected {point}"
            )
            at_each(point)
            if index < len(points) - 1:
                proc.stdin.write(b"\n")
                proc.stdin.flush()
    finally:
        # Listed while the command (the leader of its group) lives, so each is a group of its workers.
        workers = _groups_below(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        for group in workers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        proc.wait(timeout=60)
        _wait_until_gone(workers, time.monotonic() + 60)
        with contextlib.suppress(OSError):
            proc.stdin.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, f"{command}…: exit {proc.returncode}, not killed by SIGKILL"
