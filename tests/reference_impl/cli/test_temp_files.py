"""A ``delta-ckpt`` process leaves no temporary file behind, whatever becomes of its Spark JVM.

The command ends with ``os._exit`` and leaves a local session's driver JVM to exit by itself
(:func:`reference_impl.spark.session.exit_now`, issue #12); that JVM deleted its temporary
directories in ``/tmp`` (``spark-*``, ``blockmgr-*`` with a checkpoint's shuffle files,
``artifacts-*``, unpacked native libraries) only in its shutdown hooks, and a JVM killed first left
them for good. Now every temporary file of the process and of its JVM is in one directory that the
process removes before it exits (:func:`reference_impl.spark.session.own_temp_root`).

Each command runs as a user runs it (a subprocess) with ``$TMPDIR`` a new empty directory, and with
the JVM's own default temporary directory (``/tmp``) moved to another empty directory
(``JDK_JAVA_OPTIONS=-Djava.io.tmpdir=…``: a user's setting, which the command keeps as the place of
its JVM's root, a directory of its own in it). Right when the process has exited, before its JVM's shutdown
hooks could have cleaned up, both directories are empty: a checkpoint (a Spark job with a shuffle),
and an error exit (status 2) of a snapshot that failed once its Spark job read the checkpoint.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

FIXTURES = REPO_ROOT / "fixtures"
#: What the Java launcher prints when it takes JDK_JAVA_OPTIONS: the stand-in default was in effect.
PICKED_UP = "Picked up JDK_JAVA_OPTIONS"


def _left(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


@pytest.mark.parametrize(
    ("command", "table", "status"),
    [
        (
            ("checkpoint", "{table}", "--json"),
            FIXTURES / "valid/after_metadata_cleanup/table",
            0,
        ),
        (("snapshot", "{table}"), FIXTURES / "invalid/invalid_checkpoint_two_metadata/table", 2),
    ],
    ids=["checkpoint", "snapshot-error-exit"],
)
def test_a_command_leaves_no_temporary_file(
    command: tuple[str, ...], table: Path, status: int, tmp_path: Path
) -> None:
    """``$TMPDIR`` and the JVM's default temporary directory are empty when ``delta-ckpt COMMAND`` has exited."""
    copy = tmp_path / "table"
    shutil.copytree(table, copy)
    tmpdir, java_default = tmp_path / "tmpdir", tmp_path / "java-default"
    tmpdir.mkdir()
    java_default.mkdir()
    env = {
        **os.environ,
        "TMPDIR": str(tmpdir),
        "JDK_JAVA_OPTIONS": f"-Djava.io.tmpdir={java_default}",
        "DELTA_CKPT_SPARK_MASTER": "local[2]",
    }
    argv = [sys.executable, "-m", "reference_impl.cli", *(word.format(table=copy) for word in command)]
    proc = subprocess.run(
        argv, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    left = {"$TMPDIR": _left(tmpdir), "the JVM's default": _left(java_default)}
    assert proc.returncode == status, (
        f"{argv[3:]}: exit {proc.returncode}, expected {status}: {proc.stderr[-2000:]}"
    )
    assert PICKED_UP in proc.stderr, f"{argv[3:]}: no JVM took JDK_JAVA_OPTIONS: {proc.stderr[-2000:]}"
    assert left == {"$TMPDIR": [], "the JVM's default": []}, f"{argv[3:]} left temporary files: {left}"


#: The progress line of the writer's Spark write (``Progress``, ``write <files> (N Spark task(s))``): the
#: command is inside Spark calls from here on.
WRITE_PHASE = re.compile(r"\[delta-ckpt\] write .* Spark task")


def test_ctrl_c_during_a_spark_job_says_interrupted_and_publishes_nothing(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) while the checkpoint's Spark write job runs: ``interrupted``, status 130, no
    traceback, no checkpoint file and no temporary file left.

    pyspark's own handler cancelled the jobs on the interrupted py4j call's connection (``RuntimeError:
    reentrant call``, ``Py4JError``) and py4j logged each interrupted call with its traceback. The write's
    tasks are held (fault directive ``hold-task``, :mod:`tests.support.faults`): the signal comes once a
    task has reported it is running, so the command is inside the job whatever the machine's load (an
    empty staging directory may stay in ``_delta_log``: the cancelled write ends in the JVM while the
    writer removes it; cleanup collects staging, CKPT-CLEAN-025).
    """
    copy, tmpdir, hold = tmp_path / "table", tmp_path / "tmpdir", tmp_path / "hold"
    shutil.copytree(FIXTURES / "valid/after_metadata_cleanup/table", copy)
    tmpdir.mkdir()
    hold.mkdir()
    before = sorted(p.name for p in (copy / "_delta_log").iterdir())
    env = {**os.environ, "TMPDIR": str(tmpdir), "DELTA_CKPT_SPARK_MASTER": "local[2]"}
    argv = [sys.executable, "-m", "tests.support.fault_cli", f"hold-task:{hold}", "checkpoint", str(copy)]
    proc = subprocess.Popen(
        argv, env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None and proc.stdout is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if WRITE_PHASE.match(line):
            deadline = time.monotonic() + 300
            while not (hold / "held").exists() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            break
    after = proc.stderr.read().splitlines()
    status = proc.wait(timeout=600)
    proc.stdout.close()
    proc.stderr.close()
    log = sorted(
        p.name for p in (copy / "_delta_log").iterdir() if not p.name.startswith(".delta-ckpt-staging-")
    )
    assert seen and WRITE_PHASE.match(seen[-1]), f"{argv[3:]}: no write phase: {''.join(seen)[-2000:]}"
    assert (hold / "held").exists(), f"{argv[3:]}: no write task ran before Ctrl-C: {after}"
    assert status == 130, f"{argv[3:]}: exit {status} after Ctrl-C: {after}"
    others = [line for line in after if not line.startswith("[delta-ckpt] ")]
    assert others == ["interrupted"], f"{argv[3:]}: stderr after Ctrl-C: {after}"
    assert log == before, f"{argv[3:]}: _delta_log changed: {sorted(set(log) ^ set(before))}"
    assert _left(tmpdir) == [], f"{argv[3:]}: left temporary files: {_left(tmpdir)}"
