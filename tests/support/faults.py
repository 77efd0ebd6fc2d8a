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
| ``hold-task:<dir>`` | the write tasks create ``<dir>/held`` (the first does) and wait :data:`HOLD_S` at each row: the command is inside its Spark write job for as long as the test needs (e.g. to send Ctrl-C there) |
| ``lose-shuffle`` | the first write task to meet a row deletes the map output of the shuffle it reads and fails, once (local master only): its retry meets a fetch failure, and Spark runs the shuffle-map stage again |

``<point>`` is a :class:`~reference_impl.hooks.PublicationPoint` value, with ``:<k>`` for the
counted ones: ``staged``, ``sidecar:<k>``, ``sidecars``, ``top-level``, ``cleanup:planned``,
``cleanup:compat``, ``cleanup:deleted:<k>``, ``cleanup:log-deleted``, ``cleanup:done``.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reference_impl.hooks import PublicationPoint

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

CRASH_EXIT_STATUS = 86
PAUSED = "PAUSED "
#: How long a ``hold-task`` task waits before it goes on (the test signals or kills the command first).
HOLD_S = 300.0


class InjectedFault(RuntimeError):
    """Raised at a ``raise:<point>`` directive, and by a failing task."""


@dataclass(frozen=True)
class FaultPlan:
    """Hooks that crash or raise at the named points and fail the named Spark tasks."""

    crash_at: frozenset[str] = frozenset()
    raise_at: frozenset[str] = frozenset()
    pause_at: frozenset[str] = frozenset()
    failing_tasks: tuple[tuple[int, int], ...] = field(default=())  # (partition, failing attempts)
    lose_shuffle: bool = False
    hold_dir: str | None = None

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
        if not (self.failing_tasks or self.lose_shuffle or self.hold_dir):
            return df
        return df.where(task_fault_filter(self, shuffle_dirs(df) if self.lose_shuffle else ()))


def parse_fault_plan(text: str) -> FaultPlan:
    crash, raise_, pause, tasks, lose, hold = set(), set(), set(), [], False, None
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
        elif kind == "lose-shuffle" and not rest:
            lose = True
        elif kind == "hold-task" and rest:
            hold = rest
        else:
            raise ValueError(f"unknown fault directive {item!r}")
    return FaultPlan(frozenset(crash), frozenset(raise_), frozenset(pause), tuple(tasks), lose, hold)


def shuffle_dirs(df: DataFrame) -> tuple[str, ...]:
    """The local directories where the (local-master) Spark session of ``df`` keeps shuffle files."""
    env = df.sparkSession.sparkContext._jvm.org.apache.spark.SparkEnv.get()  # type: ignore[union-attr]
    return tuple(str(d) for d in env.blockManager().diskBlockManager().localDirs())


def lose_newest_shuffle(dirs: tuple[str, ...]) -> int:
    """Delete the index files of the newest shuffle's map outputs in ``dirs``; returns its shuffle id.

    Called in a task that reads that shuffle: a later read of it meets a fetch failure, and Spark's
    scheduler runs the shuffle-map stage that wrote it again.
    """
    found: list[tuple[int, str]] = []
    for directory in dirs:
        for root, _, names in os.walk(directory):
            found += [(int(m.group(1)), os.path.join(root, n)) for n in names if (m := _INDEX.match(n))]
    newest = max(shuffle for shuffle, _ in found)
    for shuffle, path in found:
        if shuffle == newest:
            os.remove(path)
    return newest


_INDEX = re.compile(r"^shuffle_(\d+)_(\d+)_0\.index$")


def task_fault_filter(plan: FaultPlan, dirs: tuple[str, ...] = ()) -> Column:
    """A Spark filter column that fails the listed tasks on their first attempts (else passes all rows);
    with ``dirs`` (:func:`shuffle_dirs`), the first task to meet a row — one, claimed by creating a
    marker file — loses the shuffle output it reads (:func:`lose_newest_shuffle`) and fails; with
    ``plan.hold_dir``, each row waits :data:`HOLD_S` once ``<hold_dir>/held`` exists (created by the first).

    A Python UDF, so the failure happens inside the write task (after the shuffle), where Spark's
    task-retry and output-commit protocol apply.
    """
    from pyspark.sql import functions as F

    failing = dict(plan.failing_tasks)
    marker = os.path.join(dirs[0], f"delta-ckpt-lose-shuffle-{uuid.uuid4()}") if dirs else None
    held = os.path.join(plan.hold_dir, "held") if plan.hold_dir else None

    def keep() -> bool:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is not None and ctx.attemptNumber() < failing.get(ctx.partitionId(), 0):
            raise InjectedFault(f"injected failure of task {ctx.partitionId()} attempt {ctx.attemptNumber()}")
        if marker is not None and _claim(marker):
            raise InjectedFault(f"injected loss of the map output of shuffle {lose_newest_shuffle(dirs)}")
        if held is not None:
            import time

            _claim(held)
            time.sleep(HOLD_S)
        return True

    # useArrow=False: an Arrow-optimised UDF needs pandas (not a dependency); Spark 4 enables it by default.
    column: Column = F.udf(keep, "boolean", useArrow=False).asNondeterministic()()
    return column


def _claim(marker: str) -> bool:
    """True for the one caller that creates ``marker``."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True
