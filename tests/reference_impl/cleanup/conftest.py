"""Fixtures of the cleanup tests: the shared base table, built once, and one cleaned copy of it.

Building needs delta-spark, so the session-scoped :class:`CleanupTables` builds lazily: tests
request the ``delta_spark`` fixture (which skips loudly, or fails under ``CI=true``) and then call
``cleanup_tables.base()``. Tests never modify the shared tables; they copy them first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.tables.real_writers import NOW
from conformance.tables.real_writers import CleanupBase as Base
from conformance.tables.real_writers import build_cleanup_base as build_base
from conformance.tables.real_writers import copy_cleanup_base as copy_base
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.cleanup.result import CleanupResult
from reference_impl.read.snapshot import read_snapshot
from tests.support.listings import log_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spec.table_state import TableState


@dataclass(frozen=True)
class Cleaned:
    """A copy of the base table after our cleanup at ``NOW`` with the table's 3-day retention."""

    base: Base
    result: CleanupResult
    before: frozenset[str]  # log files (relative to _delta_log, hidden included) before the cleanup
    after: frozenset[str]
    states: dict[int, TableState]  # our reader's states of versions 2, 4 and 6 *before* the cleanup

    @property
    def path(self) -> Path:
        return self.base.path


class CleanupTables:
    def __init__(self, spark: SparkSession, root: Path) -> None:
        self._spark = spark
        self._root = root
        self._base: Base | None = None
        self._cleaned: Cleaned | None = None

    def base(self) -> Base:
        if self._base is None:
            self._base = build_base(self._spark, self._root / "base")
        return self._base

    def copy(self, target: Path) -> Base:
        return copy_base(self.base(), target)

    def cleaned(self) -> Cleaned:
        if self._cleaned is None:
            table = self.copy(self._root / "cleaned")
            states = {
                v: read_snapshot(self._spark, table.path, version=v, now_ms=NOW).table_state()
                for v in (2, 4, 6)
            }
            before = frozenset(log_files(table.path))
            result = cleanup(table.path, now_ms=NOW, verify_all_versions=True, spark=self._spark)
            json.dumps(result.to_json())  # the --json document is serialisable
            self._cleaned = Cleaned(table, result, before, frozenset(log_files(table.path)), states)
        return self._cleaned
