"""Fault injection for the crash-point and task-retry tests: hooks that crash, raise, or fail a Spark task.

Spec: ``spec/checkpoints.md`` §17 Writer rules and §18 Metadata cleanup — a writer or cleaner
that dies at any point leaves a table every reader reads as before. The production code only
reports its publication points to :class:`~reference_impl.hooks.Hooks`; a :class:`FaultPlan` is
such hooks. Directives (:func:`parse_fault_plan`, comma-separated):

| directive | effect |
|---|---|
| ``crash:<point>`` | the process exits at once with status 86 (no cleanup runs), at ``<point>`` |
| ``raise:<point>`` | :class:`InjectedFault` is raised at ``<point>`` (cleanup runs) |
| ``pause:<point>`` | at ``<point>``, ``PAUSED <point>`` is printed on stderr and the process waits for a line on stdin (then goes on; at end of input it exits with status 86) — the test kills it there with SIGKILL, or lets it go on (:mod:`tests.support.cli_runs`) |
| ``fail-task:<partition>:<attempts>`` | the Spark task writing ``<partition>`` fails on its first ``<attempts>`` attempts |

``<point>`` is a :class:`~reference_impl.hooks.PublicationPoint` value, with ``:<k>`` for the
counted ones: ``staged``, ``sidecar:<k>``, ``sidecars``, ``top-level``, ``cleanup:planned``,
``cleanup:compat``, ``cleanup:deleted:<k>``, ``cleanup:log-deleted``, ``cleanup:done``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reference_impl.hooks import PublicationPoint

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

CRASH_EXIT_STATUS = 86
PAUSED = "PAUSED "


class InjectedFault(RuntimeError):
    """Raised at a ``raise:<point>`` directive, and by a failing task."""


@dataclass(frozen=True)
class FaultPlan:
    """Hooks that crash or raise at the named points and fail the named Spark tasks."""

    crash_at: frozenset[str] = frozenset()
    raise_at: frozenset[str] = frozenset()
    pause_at: frozenset[str] = frozenset()
    failing_tasks: tuple[tuple[int, int], ...] = field(default=())  # (partition, failing attempts)

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        label = str(point) if count is None else f"{point}:{count}"
        if label in self.crash_at:
            os._exit(CRASH_EXIT_STATUS)
        if label in self.raise_at:
            raise InjectedFault(f"injected fault at {label}")
        if label in self.pause_at:
            print(f"{PAUSED}{label}", file=sys.stderr, flush=True)
            if not sys.stdin.readline():
                os._exit(CRASH_EXIT_STATUS)

    def prepare(self, df: DataFrame) -> DataFrame:
        return df.where(task_fault_filter(self)) if self.failing_tasks else df


def parse_fault_plan(text: str) -> FaultPlan:
    crash, raise_, pause, tasks = set(), set(), set(), []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        kind, _, rest = item.partition(":")
        if kind == "crash" and rest:
            crash.add(rest)
        elif kind == "raise" and rest:
            raise_.add(rest)
        elif kind == "pause" and rest:
            pause.add(rest)
        elif kind == "fail-task":
            partition, _, attempts = rest.partition(":")
            tasks.append((int(partition), int(attempts or "1")))
        else:
            raise ValueError(f"unknown fault directive {item!r}")
    return FaultPlan(frozenset(crash), frozenset(raise_), frozenset(pause), tuple(tasks))


def task_fault_filter(plan: FaultPlan) -> Column:
    """A Spark filter column that fails the listed tasks on their first attempts (else passes all rows).

    A Python UDF, so the failure happens inside the write task (after the shuffle), where Spark's
    task-retry and output-commit protocol apply.
    """
    from pyspark.sql import functions as F

    failing = dict(plan.failing_tasks)

    def keep() -> bool:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is not None and ctx.attemptNumber() < failing.get(ctx.partitionId(), 0):
            raise InjectedFault(f"injected failure of task {ctx.partitionId()} attempt {ctx.attemptNumber()}")
        return True

    # useArrow=False: an Arrow-optimised UDF needs pandas (not a dependency); Spark 4 enables it by default.
    column: Column = F.udf(keep, "boolean", useArrow=False).asNondeterministic()()
    return column
