"""The reference implementation's SparkSession: Spark's built-in JSON and Parquet sources only.

The same code runs on a laptop and on a cluster; :func:`get_spark` honours:

* master: ``--master`` CLI flag, else ``DELTA_CKPT_SPARK_MASTER``, else ``local[2]``;
* extra conf: ``--conf k=v`` CLI flags (repeatable), over ``DELTA_CKPT_SPARK_CONF`` holding a JSON
  object of strings or ``k=v`` pairs separated by newlines or ``;``
  (:func:`spec.spark_conf.conf_from_env`). Extra conf wins over every default below.

Defaults (:data:`~spec.spark_conf.BASE_CONF`, and :data:`~spec.spark_conf.LOCAL_CONF` in local mode;
one copy in :mod:`spec.spark_conf`, which the oracle's session starts with too): session time zone UTC, quiet
logs (ERROR), no UI, no session extensions from the classpath (MLlib's functions: ~1 s of start-up
CPU, issue #12), few shuffle partitions so small tables are fast, and in local mode the JVM
flags of :data:`~spec.spark_conf.SHORT_JOB_JAVA_OPTIONS` for the driver and for spark-submit's launcher JVM (a
``--conf spark.driver.extraJavaOptions=…`` replaces them for long jobs). With those default flags
and a plain ``local``/``local[N]`` master, the driver also maps the class archive of
:mod:`reference_impl.storage.class_archive` when the cache holds one for this Java and pyspark
(built once by ``scripts/build_class_archive.py``; issue #12: it halves the JVM's start-up CPU):
Spark's classes come parsed and verified, Janino's too from unsigned copies of its jars first on the
driver's classpath; results are the same, as only class loading changes. Not with a
``spark.driver.extraClassPath`` of the user's (the archive's classpath would not match).
Not for ``local-cluster[…]`` or a cluster master (executors are JVMs of their own), nor when
``SPARK_CONF_DIR`` holds more than a ``log4j2.properties``. The session has **no delta-spark jars**
(``spark.jars`` is empty unless ``--conf`` sets it). A JVM holds one
SparkContext, so a process gets one session: when one is already running (the test suite may have
started one with more jars on its classpath), :func:`get_spark` returns it — the reference code
uses nothing but Spark's own sources either way.

A command may call :func:`start_spark` once its input checks passed: the driver JVM then starts in a
background thread while the command's Python work goes on (issue #12: ``delta-ckpt snapshot``
imports the reader meanwhile), and :func:`get_spark` takes it.

A command line that ends with :func:`exit_now` first makes one temporary root for the whole process
(:func:`own_temp_root`): the driver JVM's ``java.io.tmpdir`` (so Spark's local directories too, unless
``spark.local.dir``/``SPARK_LOCAL_DIRS`` name others, and the native libraries lz4-java, snappy-java
and zstd-jni unpack), Python's ``tempfile`` and the ``TMPDIR`` of every child process; with a
``local-cluster[…]`` master the executors' ``java.io.tmpdir`` too; :func:`exit_now` removes it. A
``java.io.tmpdir`` the user set (``-D`` in ``$JAVA_TOOL_OPTIONS``, ``$JDK_JAVA_OPTIONS`` or the driver's
``spark.driver.extraJavaOptions``) is kept as the place: the JVMs' root is then a directory of its own
in it, appended after the user's flags, and removed the same way. A root names its process (a pid
file); a new root removes the roots next to it whose process is gone (killed before it could).
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from reference_impl.errors import InvalidOption
from reference_impl.storage import Location, SessionSource, Storage, class_archive
from reference_impl.storage.connectors import require_spark_connector
from spec.spark_conf import (
    BASE_CONF,
    DEFAULT_MASTER,
    ENV_MASTER,
    LOCAL_CONF,
    SMALL_QUERIES_CONF,
    ConfError,
    conf_from_env,
    parse_conf_pairs,
    session_environment,
)

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

#: Masters whose driver is the only JVM (not ``local-cluster[...]``): these may use the class archive.
LOCAL_MASTER = re.compile(r"local(\[[^\]]*\])?")


@dataclass(frozen=True)
class SparkSettings:
    """Where Spark runs and which extra configuration it gets."""

    master: str = DEFAULT_MASTER
    conf: Mapping[str, str] = field(default_factory=dict)
    app_name: str = "delta-checkpoint-conformance"

    @property
    def is_local(self) -> bool:
        return self.master.startswith("local")


def settings_from_env(master: str | None = None, conf: Iterable[str] = ()) -> SparkSettings:
    """Combine CLI values (which win) with the environment variables and defaults; a malformed entry is
    an :class:`InvalidOption` naming where it came from."""
    try:
        merged = conf_from_env()
        merged.update(parse_conf_pairs(conf, source="--conf"))
    except ConfError as exc:
        raise InvalidOption(str(exc)) from exc
    return SparkSettings(master=master or os.environ.get(ENV_MASTER) or DEFAULT_MASTER, conf=merged)


def get_spark(settings: SparkSettings | None = None) -> SparkSession:
    """The running session if there is one, else a new one with the defaults and ``settings`` (the
    reference's own session: the only one :func:`size_queries` sizes).

    Its driver JVM is the one :func:`start_spark` began launching for the same ``settings``, else
    one launched now; a process that ran a session before reuses that JVM (as pyspark does).
    """
    from pyspark.core.context import SparkContext
    from pyspark.sql import SparkSession

    global _own_context
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    creates = SparkContext._active_spark_context is None  # a context without a session: the caller's
    settings = settings or settings_from_env()
    launch = _take_launch(settings)
    if launch is None and not _has_jvm():
        launch = _Launch.begin(settings)
    conf = launch.conf if launch is not None else _launch_conf(settings)
    if launch is not None:
        from pyspark import SparkConf

        try:
            gateway = launch.gateway()
        except BaseException:  # a Ctrl-C while the JVM starts: let it exit once it is up
            launch.abandon()
            raise
        SparkContext(conf=SparkConf().setAll(list(conf.items())), gateway=gateway)
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if creates:
        _own_context = spark.sparkContext
        if _temp_root is not None:  # a command line's session (own_temp_root)
            _interrupt_quietly()
    return spark


def _interrupt_quietly() -> None:
    """Ctrl-C during a Spark call of a command line: Spark's jobs cancelled, a ``KeyboardInterrupt`` in the
    main thread, and no py4j traceback (the command prints ``interrupted``).

    pyspark's own SIGINT handler cancelled the jobs from inside the interrupted py4j call, on that call's
    connection (py4j pins one per thread): ``RuntimeError: reentrant call`` and
    ``Py4JError: An error occurred while calling oNN.sc``; and py4j reports every call a
    ``KeyboardInterrupt`` ends with ``logging.exception`` on the root logger. Here the jobs are
    cancelled from a thread of their own (its own connection), and that one py4j record is dropped.

    The interrupted call's connection is closed before the ``KeyboardInterrupt`` is raised
    (:func:`_drop_thread_connection`): py4j 0.10.9.9 would otherwise send the JVM a cancel command
    for it, and the JVM's ``ClientServer.shutdownSocket`` closes every connection whose port matches
    *or whose local port is the gateway's* — that is, all of them, whenever the interrupted call
    returns in the JVM. The calls that clean up after the interrupt (the job group's
    :func:`~reference_impl.spark.jobs.settle`, removing the staging directory) then failed at random
    with ``Py4JNetworkError: Answer from Java side is empty`` (seen once in CI, under load).
    Call it in the main thread, once the SparkContext is up.
    """
    from pyspark.core.context import SparkContext

    def cancel(context: SparkContext) -> None:
        context.setLogLevel("OFF")  # the cancelled jobs' ERRORs (an aborted write's stack trace)
        context.cancelAllJobs()
        tracker = context.statusTracker()
        deadline = time.monotonic() + CANCEL_WAIT_S
        while tracker.getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.05)

    def on_sigint(signum: int, frame: object) -> NoReturn:
        context = SparkContext._active_spark_context
        if context is not None:  # cancelled, and ended, before the writer removes its staging directory
            worker = threading.Thread(target=cancel, args=(context,), name="spark-cancel", daemon=True)
            worker.start()
            worker.join(timeout=CANCEL_WAIT_S + 5)
            _drop_thread_connection(context)
        raise KeyboardInterrupt

    with suppress(ValueError):  # not the main thread: Python delivers no SIGINT there
        signal.signal(signal.SIGINT, on_sigint)
    logging.getLogger().addFilter(lambda record: not record.getMessage().startswith(PY4J_INTERRUPTED))
    logging.getLogger("py4j").propagate = False  # its connections closing as the command ends


def _drop_thread_connection(context: SparkContext) -> None:
    """Close the calling thread's py4j connection to the JVM; its next call opens a new one.

    A connection py4j finds closed when a ``KeyboardInterrupt`` ends its call gets no cancel command
    (see :func:`_interrupt_quietly`); the JVM's side of it ends on its own once its call returns
    and finds the socket shut.
    """
    client: Any = getattr(context._gateway, "_gateway_client", None)  # py4j's ClientServer: a JavaClient
    thread_connection = getattr(client, "get_thread_connection", None)  # pinned-thread mode only
    connection = thread_connection() if thread_connection is not None else None
    if connection is not None:
        connection.close()


#: What py4j logs (with the traceback) on the root logger when a KeyboardInterrupt ends a call.
PY4J_INTERRUPTED = "KeyboardInterrupt while sending command"
#: How long a Ctrl-C waits at most for the cancelled Spark jobs to end.
CANCEL_WAIT_S = 10.0


def start_spark(settings: SparkSettings) -> None:
    """Begin launching the driver JVM of a new session with ``settings`` in a background thread.

    Issue #12: a short command's Python work after its input checks (imports, reading the log) then
    overlaps the JVM's start-up; the next :func:`get_spark` with the same ``settings`` takes the JVM.
    Call it only once the command's input is known good (bad input: one clear error and no JVM).
    Nothing happens when this process has a JVM already or a launch is under way. A launch that
    nothing takes is shut down by :func:`stop_session_started_inside`.
    """
    global _launching
    if _launching is None and not _has_jvm():
        _launching = _Launch.begin(settings)


def _has_jvm() -> bool:
    """Whether pyspark has a JVM in this process (a session ran or runs: pyspark reuses its gateway)."""
    if "pyspark" not in sys.modules:
        return False
    from pyspark.core.context import SparkContext

    return SparkContext._gateway is not None


def _launch_conf(settings: SparkSettings) -> dict[str, str]:
    """What the session's builder gets: the master, the application name and :func:`session_conf`."""
    return {"spark.master": settings.master, "spark.app.name": settings.app_name, **session_conf(settings)}


@dataclass(frozen=True)
class _Launch:
    """pyspark's gateway (the driver JVM) being launched for ``settings``, with the conf it was given."""

    settings: SparkSettings
    conf: Mapping[str, str]
    launched: Future[Any]

    @classmethod
    def begin(cls, settings: SparkSettings) -> _Launch:
        """Start launching in a thread of its own, also when the caller waits for it at once: a Ctrl-C
        in the caller's thread then never interrupts pyspark's launch half-way, which leaves a JVM
        that never exits (its connection file's directory removed before it could write it);
        :func:`get_spark` abandons the launch instead (the JVM, once up, exits)."""
        # pyspark's modules are imported here, in the caller's thread: two threads importing
        # pyspark at once see its partly initialised modules (ImportError).
        import pyspark.java_gateway  # noqa: F401

        launch = cls(settings, _launch_conf(settings), Future())
        threading.Thread(target=launch._run, name="spark-launch", daemon=True).start()
        return launch

    def _run(self) -> None:
        from pyspark import SparkConf
        from pyspark.java_gateway import launch_gateway

        try:
            popen = _jvm_output()
            try:
                conf = SparkConf(loadDefaults=False).setAll(list(self.conf.items()))
                self.launched.set_result(launch_gateway(conf, popen_kwargs=dict(popen)))  # type: ignore[no-untyped-call]
            finally:
                for fd in set(popen.values()):  # the JVM holds its own copy
                    os.close(fd)
        except BaseException as exc:  # raised again by gateway(), in the thread that takes the launch
            self.launched.set_exception(exc)

    def gateway(self) -> Any:
        """The gateway (py4j) once the JVM is up; the launch's error if it failed."""
        return self.launched.result()

    def abandon(self) -> None:
        """Let the JVM (once up, without a SparkContext) exit: it does when its stdin closes."""
        try:
            gateway = self.gateway()
        except Exception:  # the launch failed: there is no JVM
            return
        if gateway.proc is None:  # a JVM this process did not start (PYSPARK_GATEWAY_PORT): only let go
            gateway.close()
            return
        gateway.shutdown()
        gateway.proc.stdin.close()
        gateway.proc.wait()


#: The launch :func:`start_spark` began that no :func:`get_spark` has taken yet.
_launching: _Launch | None = None


def _take_launch(settings: SparkSettings) -> _Launch | None:
    """The pending launch if it is for ``settings`` (else it is abandoned); either way no longer pending."""
    global _launching
    launch, _launching = _launching, None
    if launch is not None and launch.settings != settings:
        launch.abandon()
        return None
    return launch


def abandon_launch() -> None:
    """Abandon the pending launch, if any (the command ended without taking it)."""
    global _launching
    launch, _launching = _launching, None
    if launch is not None:
        launch.abandon()


#: The reference's own session only (not the oracle's, :mod:`spec.spark_conf`): pyspark's DataFrame
#: debugging off. With it on (pyspark's default), every Column and DataFrame call of pyspark's
#: (``pyspark.errors.utils._with_origin``) made four more py4j round trips (the active session, the
#: debugging depth from the conf, the call site set and cleared in the JVM) and captured the Python
#: call site: of the 8,149 py4j round trips of one ``delta-ckpt checkpoint`` of the 10-commit table, 520
#: wrapped calls (issue #12). It only feeds the DataFrame query context of Spark's error messages; a
#: ``--conf`` turns it back on.
REFERENCE_CONF: Mapping[str, str] = {"spark.python.sql.dataFrameDebugging.enabled": "false"}


def session_conf(settings: SparkSettings) -> dict[str, str]:
    """The Spark conf of a new session with ``settings``, and its environment set for the JVM to come
    (:func:`spec.spark_conf.session_environment`, the oracle's too); no JVM is started here."""
    conf = {**BASE_CONF, **(LOCAL_CONF if settings.is_local else {}), **REFERENCE_CONF, **settings.conf}
    conf_dir = session_environment(conf)
    default_driver = LOCAL_CONF["spark.driver.extraJavaOptions"] == conf.get("spark.driver.extraJavaOptions")
    if default_driver and "spark.driver.extraClassPath" not in conf:
        archived = _class_archive_options(settings, conf_dir)
        if archived is not None:
            conf["spark.driver.extraJavaOptions"] += f" {archived}"
            classpath = class_archive.archive_classpath()  # Janino's classes, archived from unsigned copies
            if classpath is not None:
                conf["spark.driver.extraClassPath"] = classpath
    jvm_root = _jvm_temp_root(conf.get("spark.driver.extraJavaOptions", ""))
    if jvm_root is not None:  # appended: a later -D wins
        flag = shlex.quote(f"-Djava.io.tmpdir={jvm_root}")
        executors = settings.master.startswith("local-cluster")  # JVMs of this host, ending with the driver
        for key in ("spark.driver.extraJavaOptions", *(["spark.executor.extraJavaOptions"] * executors)):
            conf[key] = f"{conf.get(key, '')} {flag}".lstrip()
    return conf


def _jvm_temp_root(driver_flags: str) -> Path | None:
    """The ``java.io.tmpdir`` of this process's JVMs (the driver's, a local cluster's executors'): the
    process's root (:func:`own_temp_root`), or a root of its own in the directory the user named as
    ``java.io.tmpdir`` (the last ``-D`` of ``$JAVA_TOOL_OPTIONS``, ``$JDK_JAVA_OPTIONS`` and the
    driver's flags, in the JVM's order); ``None`` without a process root, or when that directory
    cannot hold one (the user's setting then stands alone)."""
    if _temp_root is None:
        return None
    named = None
    for flags in (
        os.environ.get("JAVA_TOOL_OPTIONS", ""),
        os.environ.get("JDK_JAVA_OPTIONS", ""),
        driver_flags,
    ):
        for word in _words(flags):
            if word.startswith("-Djava.io.tmpdir="):
                named = Path(word.partition("=")[2])
    if named is None or named.resolve() == _temp_root.parent.resolve():
        return _temp_root
    root = next((r for r in _temp_roots if r.parent.resolve() == named.resolve()), None)
    if root is None:
        try:
            root = _new_root(named)
        except OSError:
            return None
    return root


def _words(flags: str) -> list[str]:
    """JVM flags split as the launcher's shell would (whitespace, when the quoting is broken)."""
    try:
        return shlex.split(flags)
    except ValueError:
        return flags.split()


def _class_archive_options(settings: SparkSettings, conf_dir: Path) -> str | None:
    """The driver flags of the class archive (:mod:`~reference_impl.storage.class_archive`), or ``None``.

    Only for a plain local master and a ``conf_dir`` (:func:`~spec.spark_conf.session_environment`) that holds nothing
    but ``log4j2.properties``: that file then goes to log4j by a system property and
    ``SPARK_CONF_DIR`` becomes the archive's empty directory (the JVM maps the archive only with an
    empty directory first on the classpath). The caller asks only with the default driver flags.
    """
    if not LOCAL_MASTER.fullmatch(settings.master) or not class_archive.log4j_only(conf_dir):
        return None
    flags = class_archive.archive_java_options(conf_dir)
    if flags is not None:
        os.environ["SPARK_CONF_DIR"] = str(class_archive.empty_conf_dir())
    return flags


#: What the driver JVM prints at start-up that is not ours to show: Spark's launcher always adds the
#: vector incubator module, and Java announces it on stderr (no flag turns that off).
JVM_NOTICES: tuple[str, ...] = ("WARNING: Using incubator modules:",)


#: Set by :func:`stop_quietly` for the JVM whose output the forwarding thread of :func:`_jvm_output` passes on
#: (one event per launched JVM, so a later session's output is not silenced by an earlier stop).
_jvm_stopping: threading.Event | None = None


def _jvm_output() -> dict[str, int]:
    """``Popen`` arguments giving the JVM a stdout and a stderr piped through a thread that drops
    :data:`JVM_NOTICES` and passes every other line to this process's stderr (none when stderr is
    not a real file). The JVM's stdout goes there too: nothing of the JVM's reaches a command's
    stdout (``--json``), and a caller reading our stdout to its end does not wait for the JVM to
    exit (:func:`exit_now`). The caller closes the pipe's write end once the JVM has started.

    Once :func:`stop_quietly` stops the session, the thread still reads the pipe (the JVM never blocks
    on it) but passes nothing on: what a JVM prints while it shuts down is not the command's to show
    (issue #13; a ``local-cluster`` master's workers at times print a ``RejectedExecutionException``
    straight to stderr, past the log level, when a callback meets their thread pool shutting down)."""
    global _jvm_stopping
    try:
        err_fd = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):  # stderr is not a real file (captured): leave it alone
        return {}
    read_fd, write_fd = os.pipe()
    target_fd = os.dup(err_fd)
    stopping = _jvm_stopping = threading.Event()

    def forward() -> None:
        with os.fdopen(read_fd, "rb") as source, os.fdopen(target_fd, "wb", buffering=0) as target:
            for line in source:
                if not stopping.is_set() and not line.decode("utf-8", "replace").startswith(JVM_NOTICES):
                    target.write(line)

    threading.Thread(target=forward, name="jvm-stderr", daemon=True).start()
    return {"stdout": write_fd, "stderr": write_fd}


def stop_quietly(spark: SparkSession) -> None:
    """Stop ``spark`` without the log lines of its shutdown (executors told to exit, workers killing
    them, connections closing are ERRORs to Spark's schedulers on a cluster) nor what its JVM prints to
    stderr from then on (:func:`_jvm_output`); a local cluster's work
    directory of the application goes with it (:func:`_local_cluster_work_dir`)."""
    work = _local_cluster_work_dir(spark)
    spark.sparkContext.setLogLevel("OFF")
    if _jvm_stopping is not None:  # the JVM's own prints of its shutdown (:func:`_jvm_output`)
        _jvm_stopping.set()
    spark.stop()
    if work is not None and not _in_use(work):
        shutil.rmtree(work, ignore_errors=True)


def _in_use(directory: Path) -> bool:
    """Whether a live process works inside ``directory`` (its current directory is there, per
    ``/proc/PID/cwd``) — true where that cannot be seen. Two local clusters started in the same second
    name their applications alike (``app-<yyyyMMddHHmmss>-0000``) and share the directory: the other's
    executors still run in it after this session's stopped."""
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    inside = str(directory.resolve())
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd == inside or cwd.startswith(inside + os.sep):
            return True
    return False


def _local_cluster_work_dir(spark: SparkSession) -> Path | None:
    """Where the workers of a ``local-cluster[…]`` master keep this application's executors (their logs,
    the jars shipped to them): ``$SPARK_HOME/work/<application id>``, inside pyspark's installation (a
    venv grew by 286 MB of them). Spark gives a local cluster's workers no other work directory
    (``LocalSparkCluster`` passes none outside Spark's test mode; ``SPARK_WORKER_DIR`` is read by a
    standalone worker's command line only), so it is removed once the session stopped; a process
    killed first leaves it. ``None`` for any other master."""
    context = spark.sparkContext
    if not (context.master or "").startswith("local-cluster"):
        return None
    home = context._jvm.java.lang.System.getenv("SPARK_HOME")  # type: ignore[union-attr]  # the workers'
    app_id = context.applicationId
    if not home or not re.fullmatch(r"app-[0-9]+-[0-9]+", app_id or ""):
        return None
    return Path(home) / "work" / app_id


@contextmanager
def stop_session_started_inside(*, leave_local: bool = False) -> Iterator[None]:
    """Stop, quietly, a Spark session the block started (one that was running before is left running),
    and a launch the block began (:func:`start_spark`) that no session took.

    With ``leave_local``, a session of a plain local master (:data:`LOCAL_MASTER`) is not stopped:
    the caller ends the process right after with :func:`exit_now`. A cluster's session is always
    stopped here, so its executors exit before this process does.
    """
    running_before = "pyspark" in sys.modules and _active_session() is not None
    try:
        yield
    finally:
        abandon_launch()
        session = _active_session() if "pyspark" in sys.modules else None
        left = (
            leave_local and session is not None and LOCAL_MASTER.fullmatch(session.sparkContext.master or "")
        )
        if not running_before and session is not None and not left:
            stop_quietly(session)


#: This process's temporary root (:func:`own_temp_root`).
_temp_root: Path | None = None
#: Every temporary root this process made (its own, and its JVMs' in a user's ``java.io.tmpdir``), which
#: :func:`exit_now` removes.
_temp_roots: list[Path] = []
#: A temporary root's name starts with this; its :data:`ROOT_OWNER` file names the process that made it.
ROOT_PREFIX = "delta-ckpt-"
#: ``<pid> <host name> <PID namespace>`` of the process that made the root (:func:`_remove_stale_roots`).
ROOT_OWNER = "delta-ckpt.pid"


def _new_root(parent: Path | None) -> Path:
    """A new temporary root in ``parent`` (``None``: :mod:`tempfile`'s directory) naming this process;
    the roots of processes that are gone are removed from ``parent`` first."""
    root = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX, dir=parent))
    (root / ROOT_OWNER).write_text(" ".join([str(os.getpid()), *_pid_space()]) + "\n")
    _temp_roots.append(root)
    _remove_stale_roots(root.parent)
    return root


def _remove_stale_roots(parent: Path) -> None:
    """Remove every root in ``parent`` whose :data:`ROOT_OWNER` names a process of this host and PID
    namespace that is gone.

    A process killed before :func:`exit_now` (``SIGKILL``, a timeout killing its process group) left its
    root with its JVMs' files (Spark's directories, shuffle files, native libraries). Never a root of a
    live process (signal 0 reaches it, or it is another user's), of another host or PID namespace (a
    shared ``/tmp`` seen from another machine, or from a container of the same host name — e.g. with
    the host's network — whose pids this process cannot see), without a readable owner file in this
    form (being made, or not a root), nor a link. A pid reused since then by a live process keeps the
    root until that one ends.
    """
    here = _pid_space()
    for owner in parent.glob(f"{ROOT_PREFIX}*/{ROOT_OWNER}"):
        try:
            pid_text, *space = owner.read_text().split()
            pid = int(pid_text)
        except (OSError, ValueError):
            continue
        if pid > 0 and space == here and not owner.parent.is_symlink() and not _alive(pid):
            shutil.rmtree(owner.parent, ignore_errors=True)


def _pid_space() -> list[str]:
    """Where this process's pid names it: the host name and the PID namespace (``/proc/self/ns/pid``,
    ``-`` where there is none to read), both of which a root's owner must share to be judged gone."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = "-"
    return [socket.gethostname(), namespace]


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def own_temp_root() -> Path:
    """Make a new directory in this process's temporary directory (``$TMPDIR``, else ``/tmp``) the root
    of every temporary file of the process and of the processes it starts; :func:`exit_now` removes it.

    For a command line that ends with :func:`exit_now`. Its driver JVM outlives the process and
    deletes its temporary directories (``spark-*``, ``blockmgr-*`` with a job's shuffle files,
    ``artifacts-*``, the native libraries it unpacked) in its shutdown hooks only once it sees its
    stdin close; a JVM killed before then (its process group killed, a timeout) left them in
    ``/tmp`` for good. Here they are all in one directory that this process removes itself: the
    driver JVM's ``java.io.tmpdir`` (:func:`session_conf`; in a ``java.io.tmpdir`` the user named, a
    root of its own), which is Spark's local directory unless ``spark.local.dir`` or
    ``SPARK_LOCAL_DIRS`` name one (pyspark's own directory is made in it), Python's
    :mod:`tempfile` directory and the ``TMPDIR`` of every child process. Call it before the JVM starts.
    A user's ``java.io.tmpdir`` is kept as the JVMs' place (:func:`_jvm_temp_root`), and the roots of
    processes killed before they could remove theirs go (:func:`_remove_stale_roots`).
    """
    global _temp_root
    if _temp_root is None:
        _temp_root = _new_root(None)
        tempfile.tempdir = os.environ["TMPDIR"] = str(_temp_root)
    return _temp_root


def exit_now(status: int) -> NoReturn:
    """End this process with ``status`` at once: stdout and stderr flushed, its temporary root removed
    (:func:`own_temp_root`, and its JVMs' own), no interpreter teardown; a Ctrl-C from here on is ignored.

    For a command line whose every file is written, published and closed (issue #12: stopping a
    local session and tearing down the interpreter took ~0.5-1 s of a short command). A local
    session left running (``stop_session_started_inside(leave_local=True)``) needs no stop from us:
    the driver JVM sees its stdin close when this process ends and exits by itself, running
    Spark's shutdown hooks (``SparkContext.stop``); its temporary files are gone already with the
    root. Its stdout and stderr are not this process's (:func:`_jvm_output`), so a caller reading
    ours is not kept waiting.

    Output that cannot be flushed (a reader gone, a full disk) is not a success: a ``status`` of 0
    becomes 141 for a broken pipe (as :func:`reference_impl.cli.main.main` reports one) and 120
    otherwise, as the interpreter's own exit would say; ``--json`` output is then incomplete.
    """
    with suppress(ValueError):  # not the main thread: no Ctrl-C to ignore there
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as exc:  # nothing more can reach stdout
        if status == 0:
            status = 141 if isinstance(exc, BrokenPipeError) else 120
    with suppress(OSError, ValueError):  # stderr: nowhere left to report a failure
        sys.stderr.flush()
    for root in _temp_roots:  # the JVM's shutdown hooks find nothing left
        shutil.rmtree(root, ignore_errors=True)
    os._exit(status)


def _active_session() -> SparkSession | None:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


#: The replay of at most this many bytes of commits and checkpoint files is a small log (:func:`size_queries`).
SMALL_LOG_BYTES = 8 << 20
#: SQL settings of the queries over a small log (issue #12): :data:`spec.spark_conf.SMALL_QUERIES_CONF` (no
#: adaptive execution, Spark's interpreted expressions instead of generated code; one copy, which the
#: conformance run's sessions start with too); for a few thousand rows the compilation costs more than it
#: saves. Larger logs keep Spark's defaults.
SMALL_LOG_CONF: Mapping[str, str] = SMALL_QUERIES_CONF


#: The SparkContext of the session :func:`get_spark` created, if it did: the one :func:`size_queries` sizes.
_own_context: Any = None


def size_queries(spark: SparkSession, log_bytes: int) -> None:
    """Set the session's :data:`SMALL_LOG_CONF` for the queries of a replay of ``log_bytes`` bytes when that
    is at most :data:`SMALL_LOG_BYTES`, else Spark's defaults — only when it is the session
    :func:`get_spark` created (the command line's, or the Python API's when the caller gave none); a
    setting the session started with (``--conf``, ``$DELTA_CKPT_SPARK_CONF``) is left as it is.

    A session the caller gave (``spark=`` of the Python API, a test's or the oracle's session) keeps
    its SQL settings exactly: the settings are the session's, not the read's, and would outlive the
    call (adaptive execution and generated code off for the caller's own queries after a small read;
    a value the caller set unset after a large one).
    """
    if _own_context is None or spark.sparkContext is not _own_context:
        return
    started_with = spark.sparkContext.getConf()
    for key, value in SMALL_LOG_CONF.items():
        if started_with.contains(key):
            continue
        if log_bytes <= SMALL_LOG_BYTES:
            spark.conf.set(key, value)
        else:
            spark.conf.unset(key)


def use_storage(spark: SparkSession, storage: Storage, location: Location) -> None:
    """Give Spark the Hadoop configuration it needs to reach ``storage`` (e.g. S3A from the storage options),
    and check that Spark has a file system for ``location`` at all (a ``STORAGE_ERROR`` before any job).

    Set in the session's SQL configuration, which Spark copies into the Hadoop configuration of every
    job (so executors get it) and of the driver's file-system calls.
    """
    for key, value in storage.spark_conf().items():
        spark.conf.set(key, value)
    require_spark_connector(spark, location)


def session_source(spark: SparkSession | SessionSource | None) -> SessionSource:
    """``spark`` as a session source: a session, a source (called on first use), or :func:`get_spark` when none."""
    if spark is None:
        return get_spark
    if callable(spark):
        return spark
    session = spark
    return lambda: session
