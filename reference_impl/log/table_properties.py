"""Table properties that change checkpoint content or cleanup, with delta-spark 4.4's defaults.

Spec: ``spec/checkpoints.md`` §5.1 The ``delta.checkpointPolicy`` table property, §8 Statistics,
§18 Metadata cleanup; delta-spark ``DeltaConfig.scala``. This module is the only reader of
``delta.*`` configuration keys in the reference implementation.

| property | default | used for |
|---|---|---|
| ``delta.checkpointPolicy`` | ``classic`` | V2 iff ``v2`` (and the feature is supported) |
| ``delta.checkpointInterval`` | 10 | when to checkpoint |
| ``delta.checkpoint.writeStatsAsJson`` | true | ``add.stats`` column |
| ``delta.checkpoint.writeStatsAsStruct`` | true (delta-spark; PROTOCOL says false — a divergence) | ``stats_parsed``, ``partitionValues_parsed`` |
| ``delta.deletedFileRetentionDuration`` | 1 week | which tombstones a checkpoint keeps |
| ``delta.setTransactionRetentionDuration`` | none (keep forever) | which ``txn`` a checkpoint keeps |
| ``delta.logRetentionDuration`` | 30 days | metadata cleanup cutoff |
| ``delta.enableExpiredLogCleanup`` | true | metadata cleanup on/off |
| ``delta.requireCheckpointProtectionBeforeVersion`` | 0 | history a cleaner removes whole or not at all (``checkpointProtection``) |
| ``delta.dataSkippingNumIndexedCols`` | 32 | ``stats_parsed`` schema |
| ``delta.dataSkippingStatsColumns`` | none | ``stats_parsed`` schema |
| ``delta.columnMapping.mode`` | ``none`` | physical column names in ``stats_parsed`` and ``partitionValues_parsed`` |
| ``delta.parquet.compression.codec`` | none | the checkpoint's Parquet codec |
| ``delta.enableInCommitTimestamps``, ``delta.inCommitTimestampEnablementVersion`` | false, 0 | commit timestamps for cleanup |

Column metadata key: :data:`PHYSICAL_NAME_KEY` (``delta.columnMapping.physicalName``).

Intervals are parsed like delta-spark's ``parseCalendarInterval``: an optional ``interval`` prefix,
then ``<number> <unit>`` pairs (weeks, days, hours, minutes, seconds, milliseconds, microseconds).
Months and years are rejected (they have no fixed length).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from reference_impl.errors import InvalidOption
from spec.vocabulary import CheckpointPolicy

#: The column-metadata key of a column's physical name under column mapping.
PHYSICAL_NAME_KEY = "delta.columnMapping.physicalName"

_UNIT_MICROS = {
    "microsecond": 1,
    "millisecond": 1_000,
    "second": 1_000_000,
    "minute": 60_000_000,
    "hour": 3_600_000_000,
    "day": 86_400_000_000,
    "week": 7 * 86_400_000_000,
}
_PAIR_RE = re.compile(r"(-?\d+(?:\.\d+)?)\s*([a-z]+)")

MS_PER_DAY = 86_400_000


def parse_interval_ms(text: str, *, key: str = "interval") -> int:
    """Milliseconds of a delta-spark calendar interval string (e.g. ``interval 1 week``)."""
    s = text.strip().lower()
    if s.startswith("interval"):
        s = s[len("interval") :].strip()
    if not s:
        raise InvalidOption(f"{key}: empty interval {text!r}")
    pos, micros = 0, 0
    for match in _PAIR_RE.finditer(s):
        if s[pos : match.start()].strip():
            raise InvalidOption(f"{key}: cannot parse interval {text!r}")
        number, unit = match.group(1), match.group(2).rstrip("s")
        if unit in ("month", "year"):
            raise InvalidOption(f"{key}: {text!r} uses {unit}s, which have no fixed length")
        if unit not in _UNIT_MICROS:
            raise InvalidOption(f"{key}: unknown interval unit {match.group(2)!r} in {text!r}")
        micros += int(float(number) * _UNIT_MICROS[unit])
        pos = match.end()
    if pos == 0 or s[pos:].strip():
        raise InvalidOption(f"{key}: cannot parse interval {text!r}")
    return micros // 1000


def _bool(config: Mapping[str, str], key: str, default: bool) -> bool:
    raw = config.get(key)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise InvalidOption(f"{key} must be true or false, got {raw!r}")
    return value == "true"


def _int(config: Mapping[str, str], key: str, default: int) -> int:
    raw = config.get(key)
    if raw is None:
        return default
    try:
        return int(raw.strip())
    except ValueError as exc:
        raise InvalidOption(f"{key} must be an integer, got {raw!r}") from exc


class TableProperties:
    """Typed access to ``metaData.configuration``."""

    def __init__(self, configuration: Mapping[str, str] | None) -> None:
        self.config: dict[str, str] = dict(configuration or {})

    @property
    def checkpoint_policy(self) -> CheckpointPolicy:
        """The policy as delta-spark reads it (trimmed, case-insensitive)."""
        value = self.config.get("delta.checkpointPolicy", "classic").strip().lower()
        if value not in tuple(CheckpointPolicy):
            raise InvalidOption(f"delta.checkpointPolicy must be classic or v2, got {value!r}")
        return CheckpointPolicy(value)

    def writer_checkpoint_policy(self, table: str) -> CheckpointPolicy:
        """The policy as a writer must read it: exactly ``classic`` or ``v2`` (CKPT-FEAT-009)."""
        value = self.config.get("delta.checkpointPolicy", "classic")
        if value not in tuple(CheckpointPolicy):
            raise InvalidOption(
                f"delta.checkpointPolicy is {value!r}; it must be classic or v2",
                path=table,
                rule="CKPT-FEAT-009",
            )
        return CheckpointPolicy(value)

    @property
    def checkpoint_interval(self) -> int:
        value = _int(self.config, "delta.checkpointInterval", 10)
        if value <= 0:
            raise InvalidOption(f"delta.checkpointInterval must be > 0, got {value}")
        return value

    @property
    def write_stats_as_json(self) -> bool:
        return _bool(self.config, "delta.checkpoint.writeStatsAsJson", True)

    @property
    def write_stats_as_struct(self) -> bool:
        return _bool(self.config, "delta.checkpoint.writeStatsAsStruct", True)

    @property
    def deleted_file_retention_ms(self) -> int:
        return parse_interval_ms(
            self.config.get("delta.deletedFileRetentionDuration", "interval 1 week"),
            key="delta.deletedFileRetentionDuration",
        )

    @property
    def set_transaction_retention_ms(self) -> int | None:
        raw = self.config.get("delta.setTransactionRetentionDuration")
        return None if raw is None else parse_interval_ms(raw, key="delta.setTransactionRetentionDuration")

    @property
    def log_retention_source(self) -> str:
        """Where :attr:`log_retention_ms` comes from, for reports."""
        raw = self.config.get("delta.logRetentionDuration")
        return f"delta.logRetentionDuration = {raw!r}" if raw else "default (30 days)"

    @property
    def log_retention_ms(self) -> int:
        return parse_interval_ms(
            self.config.get("delta.logRetentionDuration", "interval 30 days"),
            key="delta.logRetentionDuration",
        )

    @property
    def expired_log_cleanup_enabled(self) -> bool:
        return _bool(self.config, "delta.enableExpiredLogCleanup", True)

    @property
    def checkpoint_protection_version(self) -> int:
        """*P* of the ``checkpointProtection`` feature (spec §18.2); meaningful only when the protocol lists it."""
        return _int(self.config, "delta.requireCheckpointProtectionBeforeVersion", 0)

    @property
    def num_indexed_cols(self) -> int:
        return _int(self.config, "delta.dataSkippingNumIndexedCols", 32)

    @property
    def stats_columns(self) -> list[str] | None:
        raw = self.config.get("delta.dataSkippingStatsColumns")
        if raw is None:
            return None
        return [c.strip() for c in raw.split(",") if c.strip()]

    @property
    def column_mapping_mode(self) -> str:
        return self.config.get("delta.columnMapping.mode", "none").strip().lower()

    @property
    def parquet_compression(self) -> str | None:
        raw = self.config.get("delta.parquet.compression.codec")
        return raw.strip().lower() if raw else None

    @property
    def in_commit_timestamps_from(self) -> int | None:
        """The first version with in-commit timestamps, or ``None`` when they are not enabled."""
        if str(self.config.get("delta.enableInCommitTimestamps", "false")).lower() != "true":
            return None
        return int(self.config.get("delta.inCommitTimestampEnablementVersion", "0"))
