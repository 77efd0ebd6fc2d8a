"""Test-suite wiring: one SparkSession per process, oracle availability, temp tables.

* ``spark``: the process's only session. It carries delta-spark's jars when they can be resolved
  (the reference code never uses them; ``tests/reference_impl/read/test_no_delta_jars.py`` proves it in a
  subprocess with a plain session).
* ``delta_spark``: the same session, but the test needs delta-spark itself — skipped with a loud
  reason when the jars are unavailable, and **failed** under ``CI=true``
  (:func:`conformance.plugin.unavailable`, the suite's rule).
* ``deltalake``: the ``deltalake`` module, with the same skip/fail rule.

Property tests (hypothesis) run under the ``deterministic`` settings profile loaded here, before any test
module is imported: derandomized and without an example database, so every run (CI's too) draws the same
examples whatever the machine, the order or the earlier runs (``tests/test_determinism.py`` checks it).
``--hypothesis-profile thorough`` (opt-in, never in CI) draws at random and more examples.

Test files run in two processes (``run-tests.sh``: pytest-xdist, ``--dist loadfile
--no-loadscope-reorder``, so that xdist hands out the files in collection order). Collection
puts the heaviest files first — those with a test marked ``slow``, then those that need
delta-spark — so that the two processes finish at about the same time. The files whose tests share a
session fixture that is costly to start (:data:`SHARED_FIXTURE_FILES`) are one unit of work, so that one
process starts it once. Each test's worker and start time are JUnit properties, from which ``.ci/run``
prints the run's schedule (``benchmarks/worker_schedule.py``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

from conformance.oracles.delta_jars import DeltaJarsUnavailable
from conformance.plugin import unavailable

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from tests.support.servers.hdfs import HdfsServer
    from tests.support.servers.seaweed import S3Server

# Tests run Spark locally with one retry per task, so task-retry behaviour can be tested in-process.
os.environ.setdefault("DELTA_CKPT_SPARK_MASTER", "local[2,2]")
# Test tables are tiny: compiling whole-stage code costs more than it saves (with C1-only JIT, which
# the sessions' local defaults now set: 104 s -> 64 s on tests/golden). Subprocesses inherit this too.
os.environ.setdefault("DELTA_CKPT_SPARK_CONF", "spark.sql.codegen.wholeStage=false")
_DELTA_ERROR: list[str] = []

settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile("deterministic")
# Opt-in (``--hypothesis-profile thorough``, README "Tests"): random draws, more of them, for a thorough run of
# one property file; the Spark-backed ones (test_incremental_cleanup_property.py) take this many too.
settings.register_profile("thorough", derandomize=False, database=None, max_examples=25)


#: Session fixtures each test process starts once, at a cost (a MiniDFSCluster start, a SeaweedFS start,
#: the writer tests' tables built by delta-spark).
SHARED_FIXTURES = frozenset({"hdfs_server", "s3_server", "shapes"})
#: The test files that use :data:`SHARED_FIXTURES`: one unit of work of ``--dist loadfile``, so that one
#: process runs them all and starts each fixture once. A stop-26 run handed them out file by file:
#: HDFS, SeaweedFS and the shapes were started (built) in both processes. ``tests/test_benchmark_schedule.py``
#: checks the list against the fixtures the tests name; test_store_crash asks for its servers by
#: ``request.getfixturevalue``.
SHARED_FIXTURE_FILES = frozenset(
    {
        "tests/reference_impl/read/test_store_failures.py",
        "tests/reference_impl/storage/test_object_store.py",
        "tests/reference_impl/validate/test_on_s3.py",
        "tests/reference_impl/write/test_cluster_stores.py",
        "tests/reference_impl/write/test_crash_points.py",
        "tests/reference_impl/write/test_cross_read.py",
        "tests/reference_impl/write/test_hdfs.py",
        "tests/reference_impl/write/test_s3.py",
        "tests/reference_impl/write/test_store_crash.py",
        "tests/reference_impl/write/test_vs_delta_spark_checkpoint.py",
    }
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (``run-tests.sh``), with :data:`SHARED_FIXTURE_FILES` as one unit of work (its tests
    in collection order, the unit where its first file comes)."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedFixtureScheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "shared-fixtures" if path in SHARED_FIXTURE_FILES else path

    return SharedFixtureScheduling(config, log)


def _weight(item: pytest.Item) -> int:
    markers = {m.name for m in item.iter_markers()}
    return 0 if "slow" in markers else 1 if "delta_spark" in markers else 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Heaviest test files first (see the module docs); the order within a file is kept."""
    weight: dict[str, int] = {}
    for item in items:
        weight[item.path.name] = min(weight.get(item.path.name, 2), _weight(item))
    items.sort(key=lambda item: weight[item.path.name])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Each test's worker and start time, as JUnit properties: ``.ci/run`` prints the run's schedule from them.

    The start is in seconds, truncated to the millisecond (never rounded up past the real start).
    """
    millis = time.time_ns() // 1_000_000
    item.user_properties += [
        ("worker", os.environ.get("PYTEST_XDIST_WORKER", "-")),
        ("started", f"{millis // 1000}.{millis % 1000:03d}"),
    ]


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from conformance.oracles.session import get_delta_spark
    from reference_impl.spark.session import get_spark

    try:
        session = get_delta_spark()
    except DeltaJarsUnavailable as exc:
        _DELTA_ERROR.append(str(exc))
        session = get_spark()
    yield session


@pytest.fixture
def delta_spark(spark: SparkSession) -> SparkSession:
    if _DELTA_ERROR:
        unavailable("delta-spark", _DELTA_ERROR[0])
    return spark


@pytest.fixture(scope="session")
def deltalake() -> ModuleType:
    try:
        import deltalake as module
    except ImportError as exc:
        unavailable("deltalake", str(exc))
        raise
    return module


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """One SeaweedFS S3 server per test process (``tests/support/servers/seaweed.py``); a failure under CI=true."""
    from tests.support.servers.seaweed import seaweed_s3

    try:
        server = seaweed_s3(tmp_path_factory.mktemp("s3"))
        started = server.__enter__()
    except (OSError, RuntimeError, TimeoutError) as exc:
        unavailable("the SeaweedFS S3 server", f"{type(exc).__name__}: {exc}")
        raise
    try:
        yield started
    finally:
        server.__exit__(None, None, None)


@pytest.fixture(scope="session")
def hdfs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HdfsServer]:
    """One MiniDFSCluster per test process (``tests/support/servers/hdfs.py``); a failure under CI=true."""
    from tests.support.servers.hdfs import HdfsUnavailable, mini_hdfs

    try:
        server = mini_hdfs(tmp_path_factory.mktemp("hdfs"))
        started = server.__enter__()
    except (OSError, RuntimeError, TimeoutError, HdfsUnavailable) as exc:
        unavailable("the HDFS MiniDFSCluster", f"{type(exc).__name__}: {exc}")
        raise
    try:
        yield started
    finally:
        server.__exit__(None, None, None)
