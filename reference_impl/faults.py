"""Fault injection for the crash-point and task-retry tests (test hooks; inert unless asked for).

Spec: ``spec/checkpoints.md`` § Writer rules — a writer that dies at any point leaves a table every
reader reads as before (``CKPT-WRITE-*``).

A fault plan comes from :class:`FaultPlan` (in-process tests) or from the environment variable
``DELTA_CKPT_FAULT`` (subprocess tests that need a *real* crash), a comma-separated list of:

| directive | effect |
|---|---|
| ``crash:<point>`` | the driver process exits at once with status 86 (no cleanup runs), at ``<point>`` |
| ``raise:<point>`` | the driver raises :class:`InjectedFault` at ``<point>`` (cleanup runs) |
| ``fail-task:<partition>:<attempts>`` | the Spark task writing ``<partition>`` fails on its first ``<attempts>`` attempts |

Points, in publication order: ``staged`` (all files written to staging, nothing published),
``sidecars:<k>`` (after the k-th sidecar is published), ``sidecars`` (all sidecars published),
``top-level`` (top-level file published, ``_last_checkpoint`` not yet written).

Cleaner points (:mod:`reference_impl.cleanup.cleaner`), in order: ``cleanup:planned`` (plan made and every
invariant checked, nothing written), ``cleanup:compat`` (compatibility checkpoint published and
verified, nothing deleted), ``cleanup:deleted:<k>`` (after the k-th file of the plan is deleted,
1-based, in deletion order), ``cleanup:log-deleted`` (every log file deleted, no sidecar yet),
``cleanup:done`` (everything deleted).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from reference_impl.errors import InvalidOption

ENV_FAULT = "DELTA_CKPT_FAULT"
CRASH_EXIT_STATUS = 86


class InjectedFault(RuntimeError):
    """Raised at a ``raise:<point>`` directive."""


@dataclass(frozen=True)
class FaultPlan:
    crash_at: frozenset[str] = frozenset()
    raise_at: frozenset[str] = frozenset()
    failing_tasks: tuple[tuple[int, int], ...] = field(default=())  # (partition, failing attempts)

    @property
    def empty(self) -> bool:
        return not (self.crash_at or self.raise_at or self.failing_tasks)

    def reached(self, point: str) -> None:
        """Called by the writer at each point; crashes or raises when the plan says so."""
        if point in self.crash_at:
            os._exit(CRASH_EXIT_STATUS)
        if point in self.raise_at:
            raise InjectedFault(f"injected fault at {point}")


def parse_fault_plan(text: str) -> FaultPlan:
    crash, raise_, tasks = set(), set(), []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        kind, _, rest = item.partition(":")
        if kind == "crash" and rest:
            crash.add(rest)
        elif kind == "raise" and rest:
            raise_.add(rest)
        elif kind == "fail-task":
            partition, _, attempts = rest.partition(":")
            try:
                tasks.append((int(partition), int(attempts or "1")))
            except ValueError as exc:
                raise InvalidOption(f"{ENV_FAULT}: bad fail-task directive {item!r}") from exc
        else:
            raise InvalidOption(f"{ENV_FAULT}: unknown directive {item!r}")
    return FaultPlan(frozenset(crash), frozenset(raise_), tuple(tasks))


def plan_from_env() -> FaultPlan:
    return parse_fault_plan(os.environ.get(ENV_FAULT, ""))


def task_fault_filter(plan: FaultPlan) -> object:
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
    return F.udf(keep, "boolean", useArrow=False).asNondeterministic()()
