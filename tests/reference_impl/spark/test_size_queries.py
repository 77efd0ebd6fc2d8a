"""The SQL settings of a small log's queries (issue #12, ``reference_impl.spark.session.size_queries``):
set for a replay of at most ``SMALL_LOG_BYTES``, Spark's defaults for a larger one, never over a
setting the session started with, and only in the session ``get_spark`` created — a session the
caller gave keeps its settings exactly. Not a spec rule: results are the same either way (Spark's
interpreted expressions are its own fallback path); the readers' and writers' tests cover them.
"""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from reference_impl.read.snapshot import read_snapshot
from reference_impl.spark import session
from reference_impl.spark.session import SMALL_LOG_BYTES, SMALL_LOG_CONF, size_queries
from tests.support import REPO_ROOT

TABLE = REPO_ROOT / "fixtures/valid/after_metadata_cleanup/table"


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


def _put(spark: SparkSession, settings: dict[str, str | None]) -> None:
    """Set each key to its value, or unset it (``None``)."""
    for key, value in settings.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def test_a_session_the_caller_gave_keeps_its_settings(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read with the caller's session (not one ``get_spark`` created) leaves every key of ``SMALL_LOG_CONF``
    as the caller had it, after a small log's read and after a large log's sizing: a value the caller
    set keeps it, an unset key stays unset."""
    monkeypatch.setattr(session, "_own_context", None, raising=False)  # the reference created no session
    started_with = spark.sparkContext.getConf()
    keys = [key for key in SMALL_LOG_CONF if not started_with.contains(key)]
    assert len(keys) >= 2, f"the test session started with the keys of {SMALL_LOG_CONF}"
    original = {key: spark.conf.get(key, None) for key in keys}
    callers = {keys[0]: "true", **dict.fromkeys(keys[1:])}  # one set by the caller, the others unset
    try:
        _put(spark, callers)
        read_snapshot(spark, str(TABLE)).table_state()  # a small log
        after_read = {key: spark.conf.get(key, None) for key in keys}
        size_queries(spark, SMALL_LOG_BYTES + 1)  # what a large log's read does
        after_large = {key: spark.conf.get(key, None) for key in keys}
    finally:
        _put(spark, original)
    assert after_read == callers, f"a read of {TABLE} changed the caller's settings {callers} to {after_read}"
    assert after_large == callers, f"a large log changed the caller's settings {callers} to {after_large}"
