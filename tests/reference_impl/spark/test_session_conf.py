"""The reference session's conf (issue #12): pyspark's DataFrame debugging off, and where a command
process's JVMs keep their temporary files (:func:`reference_impl.spark.session.own_temp_root`): the roots,
a user's ``java.io.tmpdir``, and the roots of killed processes.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from reference_impl.spark import session
from reference_impl.spark.session import ROOT_OWNER, SparkSettings, own_temp_root, session_conf


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A process state with no temporary root, ``tmp_path / "tmp"`` as its temporary directory, no user
    ``java.io.tmpdir``; everything :func:`own_temp_root` and :func:`session_conf` set is undone after."""
    parent = tmp_path / "tmp"
    parent.mkdir()
    monkeypatch.setattr(session, "_temp_root", None)
    monkeypatch.setattr(session, "_temp_roots", [])
    monkeypatch.setattr(tempfile, "tempdir", str(parent))
    monkeypatch.setenv("TMPDIR", str(parent))
    for name in ("SPARK_CONF_DIR", "SPARK_LAUNCHER_OPTS", "SPARK_LOCAL_IP", "PYSPARK_PYTHON"):
        monkeypatch.setenv(name, os.environ.get(name, ""))  # recorded, so undone even if it was unset
        if not os.environ[name]:
            monkeypatch.delenv(name)
    for name in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS"):
        monkeypatch.delenv(name, raising=False)
    return parent


def _tmpdir_flags(flags: str) -> list[str]:
    return [word for word in shlex.split(flags) if word.startswith("-Djava.io.tmpdir=")]


def test_the_jvms_temporary_directory_is_the_root(fresh: Path) -> None:
    """The driver's ``java.io.tmpdir`` is the process's root; a local cluster's executors' too."""
    root = own_temp_root()
    assert root.parent == fresh, f"root {root} not in $TMPDIR {fresh}"
    local = session_conf(SparkSettings(master="local[2]"))
    cluster = session_conf(SparkSettings(master="local-cluster[2,1,1024]"))
    found = {
        "local driver": _tmpdir_flags(local["spark.driver.extraJavaOptions"]),
        "local executor": _tmpdir_flags(local.get("spark.executor.extraJavaOptions", "")),
        "cluster executor": _tmpdir_flags(cluster["spark.executor.extraJavaOptions"]),
    }
    flag = f"-Djava.io.tmpdir={root}"
    assert found == {"local driver": [flag], "local executor": [], "cluster executor": [flag]}, found


@pytest.mark.parametrize("where", ["JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS", "--conf"])
def test_a_users_java_tmpdir_holds_the_jvms_root(
    where: str, fresh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``java.io.tmpdir`` the user set is where the JVM's files go: a root of its own in it, named after
    the user's flag (which stays as it was) so that it wins; before, the process's root replaced it."""
    users = tmp_path / "users-tmp"
    users.mkdir()
    user_flags = f"-Xss4m -Djava.io.tmpdir={users}"
    conf = {}
    if where == "--conf":
        conf = {"spark.driver.extraJavaOptions": user_flags}
    else:
        monkeypatch.setenv(where, user_flags)
    root = own_temp_root()
    flags = session_conf(SparkSettings(master="local[2]", conf=conf))["spark.driver.extraJavaOptions"]
    jvm_roots = [Path(flag.partition("=")[2]) for flag in _tmpdir_flags(flags)]
    assert flags.startswith(user_flags if where == "--conf" else ""), f"{where}: driver flags {flags!r}"
    assert os.environ.get(where, user_flags) == user_flags, f"{where} changed: {os.environ.get(where)!r}"
    assert len(jvm_roots) == 1 + (where == "--conf"), f"{where}: driver flags {flags!r}"
    assert jvm_roots[-1].parent == users and jvm_roots[-1] != root, (
        f"{where}: JVM root {jvm_roots[-1]}, user's {users}"
    )
    assert (jvm_roots[-1] / ROOT_OWNER).is_file(), f"{where}: {jvm_roots[-1]} names no process"


def test_a_new_root_removes_only_the_roots_of_dead_processes(fresh: Path) -> None:
    """Roots whose process was killed before it removed them go; a live process's root, another host's or
    PID namespace's (its pid means another process), one with no owner file (not ours, or being made), an
    owner without a PID namespace and an unreadable owner stay."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead = int(done.stdout)  # reaped: no process has this pid until the pid counter wraps
    host, namespace = socket.gethostname(), os.readlink("/proc/self/ns/pid")
    owners = {
        "delta-ckpt-dead": f"{dead} {host} {namespace}\n",
        "delta-ckpt-live": f"{os.getpid()} {host} {namespace}\n",
        "delta-ckpt-elsewhere": f"{dead} not-{host} {namespace}\n",
        "delta-ckpt-other-namespace": f"{dead} {host} pid:[1]\n",
        "delta-ckpt-no-namespace": f"{dead} {host}\n",
        "delta-ckpt-garbled": "12 34 56\n",
        "delta-ckpt-cds-unowned": None,
    }
    for name, owner in owners.items():
        (fresh / name / "spark-x").mkdir(parents=True)
        (fresh / name / "spark-x" / "liblz4-java-1.so").write_bytes(b"\0")
        if owner is not None:
            (fresh / name / ROOT_OWNER).write_text(owner)
    root = own_temp_root()
    left = sorted(path.name for path in fresh.iterdir() if path != root)
    assert left == sorted(set(owners) - {"delta-ckpt-dead"}), f"roots left in {fresh}: {left}"
    assert (root / ROOT_OWNER).read_text().split() == [str(os.getpid()), host, namespace], (
        f"{root} names {(root / ROOT_OWNER).read_text()!r}"
    )


DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"


@pytest.mark.parametrize(
    ("extra", "expected"), [({}, "false"), ({DEBUGGING: "true"}, "true")], ids=["default", "--conf"]
)
def test_the_reference_session_skips_pysparks_call_site_capture(
    extra: dict[str, str], expected: str, fresh: Path
) -> None:
    """The reference's session starts with pyspark's DataFrame debugging off (issue #12: four py4j round trips
    and a Python stack capture per pyspark Column call, 8,149 -> 2,961 round trips in one checkpoint of the
    10-commit table); a ``--conf`` of the user's turns it back on."""
    conf = session_conf(SparkSettings(master="local[2]", conf=extra))
    assert conf.get(DEBUGGING) == expected, f"--conf {extra}: {DEBUGGING}={conf.get(DEBUGGING)!r}"


def test_a_local_cluster_work_directory_in_use_by_another_process_is_kept(tmp_path: Path) -> None:
    """Two local clusters started in the same second give their applications the same id and share
    ``$SPARK_HOME/work/<app id>``: the first to stop must not remove the directory the other's
    executors still run in (review of 19ef70a). A process working in it (or below it) keeps it; once
    that process is gone, the directory may go."""
    work = tmp_path / "work" / "app-20261126161500-0000"
    executor = work / "0"
    executor.mkdir(parents=True)
    other = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], cwd=executor, stdin=subprocess.PIPE
    )
    try:
        assert session._in_use(work), f"{work}: pid {other.pid} works in {executor}, yet not seen"
        assert not session._in_use(tmp_path / "work" / "app-20261126161500-0001")
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(timeout=300)
    assert not session._in_use(work), f"{work}: seen in use after its process {other.pid} ended"


_FORWARDER = """
import os, sys, threading, time
from reference_impl.spark import session

fds = session._jvm_output()  # what a launched JVM gets as its stdout and stderr
os.write(fds["stderr"], b"a line while the session works\\n")
deadline = time.monotonic() + 30
while b"works" not in open(sys.argv[1], "rb").read() and time.monotonic() < deadline:
    time.sleep(0.01)
session._jvm_stopping.set()  # what stop_quietly sets before spark.stop()
os.write(fds["stderr"], b"java.util.concurrent.RejectedExecutionException: at shutdown\\n")
os.close(fds["stderr"])
for thread in threading.enumerate():
    if thread.name == "jvm-stderr":
        thread.join(30)
"""


def test_what_the_jvm_prints_once_the_session_is_stopping_is_not_shown(tmp_path: Path) -> None:
    """The JVM's stderr reaches ours through a forwarding thread until the session is being stopped;
    from then on (a local cluster's workers at times print a stack trace of their shutdown straight to
    stderr, past the log level) the thread still drains the pipe but shows nothing. Issue #13: a
    command on a cluster prints only its result."""
    err = tmp_path / "stderr"
    with err.open("wb") as sink:
        subprocess.run([sys.executable, "-c", _FORWARDER, str(err)], stderr=sink, check=True, timeout=120)
    shown = err.read_text(encoding="utf-8")
    assert "a line while the session works" in shown, f"{err}: {shown!r}"
    assert "RejectedExecutionException" not in shown, f"{err}: shown after the stop began: {shown!r}"
