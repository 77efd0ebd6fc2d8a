"""Ctrl-C during a py4j call leaves the process's other py4j connections working.

py4j 0.10.9.9 answers a ``KeyboardInterrupt`` that ends a call by sending the JVM a cancel command
for that call's connection, and the JVM's ``ClientServer.shutdownSocket`` then closes every
connection whose local port is the gateway's (all of them) once the interrupted call returns: the
calls that clean up after a Ctrl-C failed at random (``Answer from Java side is empty``, CI, under
load). A command line's session closes the interrupted connection itself first
(:func:`reference_impl.spark.session._interrupt_quietly`), so no cancel command is sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support import REPO_ROOT

#: A command line's session (own temp root): Ctrl-C while the main thread waits in the JVM for a lock
#: another thread holds (sent once the JVM reports a thread queued on it: no timing), then calls of
#: its own until a second after the waiting call could return; prints what py4j logged and how the calls went.
PROGRAM = """
import json, logging, os, signal, threading, time
from reference_impl.spark import session

session.own_temp_root()
context = session.get_spark().sparkContext
messages = []
handler = logging.Handler()
handler.emit = lambda record: messages.append(record.getMessage())
logging.getLogger("py4j").setLevel(logging.INFO)
logging.getLogger("py4j").addHandler(handler)
lock = context._jvm.java.util.concurrent.locks.ReentrantLock()
held, release = threading.Event(), threading.Event()

def hold():  # py4j pins a JVM thread to this thread: lock and unlock run on the same one
    lock.lock()
    held.set()
    release.wait()
    lock.unlock()

def interrupt_once_queued():
    deadline = time.monotonic() + 300
    while not lock.hasQueuedThreads() and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)

holder = threading.Thread(target=hold)
holder.start()
held.wait(300)
threading.Thread(target=interrupt_once_queued).start()
try:
    lock.lock()
    interrupted = False
except KeyboardInterrupt:
    interrupted = True
release.set()
holder.join(300)
released = time.monotonic()
calls, error = 0, None
try:
    while time.monotonic() - released < 1:
        context._jvm.java.lang.System.nanoTime()
        calls += 1
except Exception as exc:
    error = f"{type(exc).__name__}: {exc}"
cancels = [m for m in messages if "shutdown request" in m]
print(json.dumps({"interrupted": interrupted, "calls": calls, "error": error, "cancels": cancels}))
session.exit_now(0)
"""


def test_ctrl_c_in_a_py4j_call_sends_no_cancel_command_and_later_calls_work() -> None:
    """The interrupted call raises ``KeyboardInterrupt``; py4j sends no cancel command; calls made
    after the interrupted call could return in the JVM all succeed."""
    env = {**os.environ, "DELTA_CKPT_SPARK_MASTER": "local[1]"}
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600
    )
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    seen = json.loads(lines[-1])
    assert seen["interrupted"], f"the waiting call was not interrupted by SIGINT: {seen}"
    assert seen["cancels"] == [], f"py4j sent the JVM cancel commands: {seen['cancels']}"
    assert seen["error"] is None and seen["calls"] > 0, f"calls after the interrupt: {seen}"
