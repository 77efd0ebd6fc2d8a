"""Fixtures shared by the reference implementation's test packages.

``cleanup_tables``: the cleanup tests' base table (:class:`CleanupTables`, built lazily by delta-spark,
``tests/reference_impl/cleanup/conftest.py``), one per test process, used by the cleanup tests and by the
HDFS and S3 tests that compare cleanup on those stores with cleanup on local disk.
"""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from tests.reference_impl.cleanup.conftest import CleanupTables


@pytest.fixture(scope="session")
def cleanup_tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> CleanupTables:
    return CleanupTables(spark, tmp_path_factory.mktemp("cleanup-tables"))
