"""``reference_impl.log.table_properties``: delta-spark's calendar intervals and property defaults.

Pure Python (no Spark).
"""

from __future__ import annotations

import pytest

from reference_impl.errors import InvalidOption
from reference_impl.log.table_properties import MS_PER_DAY, TableProperties, parse_interval_ms

HOUR_MS = 3_600_000


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("interval 1 week", 7 * MS_PER_DAY),
        ("interval 1 weeks", 7 * MS_PER_DAY),
        ("7 days", 7 * MS_PER_DAY),
        ("interval 30 days", 30 * MS_PER_DAY),
        ("1 hours", HOUR_MS),
        ("interval 1 hour", HOUR_MS),
        ("INTERVAL 2 HOURS", 2 * HOUR_MS),
        ("interval 1 day 12 hours", MS_PER_DAY + 12 * HOUR_MS),
        ("interval 90 minutes", 90 * 60_000),
        ("interval 3 seconds", 3_000),
        ("interval 250 milliseconds", 250),
        ("interval 5000 microseconds", 5),
        ("  interval   2   days  ", 2 * MS_PER_DAY),
    ],
)
def test_interval_parsing(text: str, ms: int) -> None:
    """Calendar intervals with or without the ``interval`` prefix, singular or plural units."""
    assert parse_interval_ms(text) == ms, text


@pytest.mark.parametrize("text", ["interval 1 month", "1 months", "interval 1 year", "2 years"])
def test_months_and_years_are_rejected(text: str) -> None:
    """Months and years have no fixed length: ``INVALID_OPTION`` naming the property."""
    with pytest.raises(InvalidOption) as info:
        parse_interval_ms(text, key="delta.deletedFileRetentionDuration")
    assert info.value.code == "INVALID_OPTION"
    assert (
        "delta.deletedFileRetentionDuration" in info.value.message and "no fixed length" in info.value.message
    )


@pytest.mark.parametrize(
    "text", ["", "interval", "one week", "1 fortnight", "7", "interval 1 week and 2 days"]
)
def test_unparsable_intervals(text: str) -> None:
    """Anything that is not ``<number> <unit>`` pairs is ``INVALID_OPTION``."""
    with pytest.raises(InvalidOption):
        parse_interval_ms(text)


def test_defaults_are_delta_sparks() -> None:
    """An empty configuration gives delta-spark 4.4's defaults."""
    props = TableProperties(None)
    assert props.checkpoint_policy == "classic"
    assert props.checkpoint_interval == 10
    assert props.write_stats_as_json is True
    assert props.write_stats_as_struct is True
    assert props.deleted_file_retention_ms == 7 * MS_PER_DAY
    assert props.set_transaction_retention_ms is None
    assert props.log_retention_ms == 30 * MS_PER_DAY
    assert props.expired_log_cleanup_enabled is True


def test_properties_are_read() -> None:
    """Set properties override the defaults (case-insensitive policy, trimmed values)."""
    props = TableProperties(
        {
            "delta.checkpointPolicy": " V2 ",
            "delta.checkpointInterval": "3",
            "delta.deletedFileRetentionDuration": "interval 1 hours",
            "delta.setTransactionRetentionDuration": "interval 2 days",
            "delta.checkpoint.writeStatsAsStruct": "FALSE",
        }
    )
    assert props.checkpoint_policy == "v2"
    assert props.checkpoint_interval == 3
    assert props.deleted_file_retention_ms == HOUR_MS
    assert props.set_transaction_retention_ms == 2 * MS_PER_DAY
    assert props.write_stats_as_struct is False


@pytest.mark.parametrize(
    ("config", "attribute"),
    [
        ({"delta.checkpointPolicy": "v3"}, "checkpoint_policy"),
        ({"delta.checkpointInterval": "0"}, "checkpoint_interval"),
        ({"delta.checkpointInterval": "ten"}, "checkpoint_interval"),
        ({"delta.checkpoint.writeStatsAsJson": "yes"}, "write_stats_as_json"),
        ({"delta.deletedFileRetentionDuration": "interval 1 month"}, "deleted_file_retention_ms"),
    ],
)
def test_invalid_property_values(config: dict[str, str], attribute: str) -> None:
    """Illegal values are ``INVALID_OPTION`` naming the property."""
    with pytest.raises(InvalidOption) as info:
        getattr(TableProperties(config), attribute)
    assert next(iter(config)) in info.value.message, info.value.message
