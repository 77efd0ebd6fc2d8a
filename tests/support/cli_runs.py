"""``delta-ckpt checkpoint`` as a separate process: run it, or pause it at a publication point and kill it there.

Spec: ``spec/checkpoints.md`` §17.2 Publication order, §17.3 Atomicity. The cluster tests and the
crash tests on real stores (``tests/reference_impl/cli/test_cluster.py``,
``tests/reference_impl/write/test_store_crash.py``) run the same command — a V2 UUID-named
checkpoint with four actions a sidecar, ``--json`` — through :func:`checkpoint_argv`:

* :func:`run_checkpoint` runs it to the end;
* :func:`paused_then_killed` starts it with a ``pause:<point>`` fault directive for each of several
  points (:mod:`tests.support.faults`); at each pause (reported on stderr) it calls the test's
  check, lets the command go on to the next point, and at the last one kills its whole process
  group (the Python driver and Spark's JVM) with ``SIGKILL``: nothing of the writer runs after that
  point, no ``finally`` block, no JVM shutdown hook. While the command waits at a point, nothing of
  it runs either: the store holds exactly what a kill there would leave.

The process runs from the repository root (a paused one in its own session, i.e. process group),
with ``local[2]`` unless the arguments name a master (``--master``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tests.support import REPO_ROOT
from tests.support.faults import PAUSED
from tests.support.servers.processes import first_line

TIMEOUT_S = 900.0


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


def paused_then_killed(argv: Sequence[str], points: Sequence[str], at_each: Callable[[str], None]) -> None:
    """Run ``argv`` (made with ``fault="pause:P1,pause:P2,…"`` for ``points``) through each pause, then ``SIGKILL`` its group.

    At each point, in order, ``at_each(point)`` runs while the command waits there; then the command
    goes on (a line on its stdin), except after the last point, where its process group is killed.
    Fails with the command's exit status if it ends, or pauses elsewhere, first.
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
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        with contextlib.suppress(OSError):
            proc.stdin.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, f"{command}…: exit {proc.returncode}, not killed by SIGKILL"
