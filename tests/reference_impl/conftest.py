"""Fixtures shared by the reference implementation's test packages.

``cleanup_tables``: the cleanup tests' base table (:class:`CleanupTables`, built lazily by delta-spark,
``tests/reference_impl/cleanup/conftest.py``), one per test process, used by the cleanup tests and by the
HDFS and S3 tests that compare cleanup on those stores with cleanup on local disk.

``sized``: the test process's session as if ``get_spark`` had created it, so that
:func:`~reference_impl.spark.session.size_queries` sizes it (it leaves a session the caller gave alone);
Spark's defaults again afterwards, as a large log leaves them — the next test of the process finds the
session as it was.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from reference_impl.spark import session
from reference_impl.spark.session import SMALL_LOG_BYTES, size_queries
from tests.reference_impl.cleanup.conftest import CleanupTables


@pytest.fixture(scope="session")
def cleanup_tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> CleanupTables:
    return CleanupTables(spark, tmp_path_factory.mktemp("cleanup-tables"))


@pytest.fixture
def sized(spark: SparkSession, monkeypatch: pytest.MonkeyPatch) -> Iterator[SparkSession]:
    """The session as if ``get_spark`` had created it (the only one sized); Spark's defaults again afterwards."""
    monkeypatch.setattr(session, "_own_context", spark.sparkContext)
    yield spark
    size_queries(spark, SMALL_LOG_BYTES + 1)
