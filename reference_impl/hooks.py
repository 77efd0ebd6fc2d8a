"""Hooks: the neutral seam where tests observe (or disturb) the writer and the cleaner.

Spec: ``spec/checkpoints.md`` §17.2 Publication order, §17.3 Atomicity and §18.1 — a writer or
cleaner that dies at any point leaves a table every reader reads as before. The crash and
task-retry tests prove that by installing hooks that stop the process or fail a Spark task
(``tests/support/faults.py``); production code calls the no-op :data:`NO_HOOKS`.

Publication points, in order:

| point | reached when |
|---|---|
| ``staged`` | every part is written to staging, or every sidecar is written by its task at its final name, and read back and verified; nothing else done |
| ``sidecar`` (count k) | the k-th sidecar is finished by the driver (its time set, its name set written) |
| ``sidecars`` | every sidecar is written and re-checked, no top-level file yet |
| ``top-level`` | the top-level file (or every part) is published, ``_last_checkpoint`` not yet written |
| ``cleanup:planned`` | the cleanup plan is made and every invariant holds; nothing written |
| ``cleanup:compat`` | the compatibility checkpoint (if any) is published and verified; nothing deleted |
| ``cleanup:deleted`` (count k) | the k-th file of the plan is deleted (1-based, in deletion order) |
| ``cleanup:log-deleted`` | every log file of the plan is deleted, no sidecar yet |
| ``cleanup:done`` | everything of the plan is deleted |
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class PublicationPoint(enum.StrEnum):
    """A point of the writer's publication order or of the cleaner's deletion order (module docs)."""

    STAGED = "staged"
    SIDECAR_PUBLISHED = "sidecar"
    SIDECARS_PUBLISHED = "sidecars"
    TOP_LEVEL_PUBLISHED = "top-level"
    CLEANUP_PLANNED = "cleanup:planned"
    COMPAT_WRITTEN = "cleanup:compat"
    FILE_DELETED = "cleanup:deleted"
    LOG_FILES_DELETED = "cleanup:log-deleted"
    CLEANUP_DONE = "cleanup:done"


class Hooks(Protocol):
    """What the writer and the cleaner tell (and let change) at their points."""

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        """Called at each point; ``count`` numbers repeated points (the k-th sidecar, the k-th deletion)."""
        ...

    def prepare(self, df: DataFrame) -> DataFrame:
        """Called with each partitioned DataFrame of parts or sidecars right before Spark stages it."""
        ...


class NoHooks:
    """The hooks of production runs: observe nothing, change nothing."""

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        return None

    def prepare(self, df: DataFrame) -> DataFrame:
        return df


NO_HOOKS: Hooks = NoHooks()
