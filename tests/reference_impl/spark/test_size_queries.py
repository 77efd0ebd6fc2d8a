"""The SQL settings of a small log's queries (issue #12, ``reference_impl.spark.session.size_queries``):
set for a replay of at most ``SMALL_LOG_BYTES``, Spark's defaults for a larger one, and never over a
setting the session started with. Not a spec rule: results are the same either way (Spark's
interpreted expressions are its own fallback path); the readers' and writers' tests cover them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from reference_impl.spark import session
from reference_impl.spark.session import SMALL_LOG_BYTES, SMALL_LOG_CONF, size_queries


@pytest.fixture
def sized(spark: SparkSession) -> Iterator[SparkSession]:
    """The session; Spark's defaults again afterwards (as a large log leaves them)."""
    yield spark
    size_queries(spark, SMALL_LOG_BYTES + 1)


def test_a_small_log_gets_the_small_settings_and_a_large_one_the_defaults(sized: SparkSession) -> None:
    started_with = sized.sparkContext.getConf()
    mine = {key: value for key, value in SMALL_LOG_CONF.items() if not started_with.contains(key)}
    assert mine, f"the test session started with every key of {SMALL_LOG_CONF}"
    size_queries(sized, SMALL_LOG_BYTES + 1)  # the worker's session may hold an earlier small read's settings
    defaults = {key: sized.conf.get(key) for key in mine}
    assert defaults != mine, f"Spark's defaults {defaults} are the small settings"
    size_queries(sized, SMALL_LOG_BYTES)
    assert {key: sized.conf.get(key) for key in mine} == mine, "a small log's settings not set"
    size_queries(sized, SMALL_LOG_BYTES + 1)
    assert {key: sized.conf.get(key) for key in mine} == defaults, "a large log did not get Spark's defaults"


def test_a_setting_the_session_started_with_is_kept(
    sized: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--conf`` / ``$DELTA_CKPT_SPARK_CONF`` win: a key of the session's start-up conf is never changed."""
    key = "spark.sql.session.timeZone"
    assert sized.sparkContext.getConf().contains(key), f"the test session did not start with {key}"
    before = sized.conf.get(key)
    monkeypatch.setattr(session, "SMALL_LOG_CONF", {key: "Asia/Tokyo"})
    size_queries(sized, 0)
    assert sized.conf.get(key) == before, f"{key} changed to {sized.conf.get(key)}"
    size_queries(sized, SMALL_LOG_BYTES + 1)
    assert sized.conf.get(key) == before, f"{key} unset to {sized.conf.get(key)}"
