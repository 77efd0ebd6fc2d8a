"""pytest plugin of delta-checkpoint-conformance (registered through the ``pytest11`` entry point)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "requirement(*ids): the spec requirement IDs (CKPT-<AREA>-<NNN>) this test proves"
    )
    config.addinivalue_line("markers", "spark: needs a SparkSession (starts a JVM)")
    config.addinivalue_line("markers", "delta_spark: needs delta-spark's jars (the oracle)")
    config.addinivalue_line("markers", "deltalake: needs the deltalake (delta-rs) Python package")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
