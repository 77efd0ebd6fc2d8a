"""STATE check: each checkpoint gives the state its commits give, wherever those commits still exist.

Spec: ``spec/checkpoints.md`` §6 Checkpoint content (``CKPT-CONTENT-001``: a checkpoint of version
``n`` describes exactly the state of commits ``0..n``; ``CKPT-CONTENT-005``: statistics excepted).

Both states come from the reference reader (:func:`~reference_impl.read.snapshot.read_snapshot`)
given a listing that holds only that checkpoint, or no checkpoint at all, with no fallback, and
one clock for tombstone and ``txn`` expiry. Files are compared without ``stats`` (a writer may
store them parsed, or recompute them). This is the one check that needs Spark; without a session
it is skipped and the report says so. Both states are collected to the driver as
:class:`~spec.table_state.TableState` objects (one checkpoint at a time): for a table of millions of
files, run ``--no-state`` or give the driver the memory.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

from reference_impl.errors import CheckpointError
from reference_impl.log.listing import CheckpointInstance
from reference_impl.read.snapshot import read_snapshot
from reference_impl.validate.context import TableView, log_path
from reference_impl.validate.finding import Finding
from spec.error_codes import ErrorCode
from spec.table_state import TableState


def check_state(view: TableView) -> Iterator[Finding]:
    """Every readable complete checkpoint whose commits ``0..n`` all exist: the two states are equal."""
    if view.session is None:
        return
    spark = view.session()
    now_ms = int(time.time() * 1000)
    for instance in view.listing.checkpoints:
        if view.unreadable(instance) or any(
            v not in view.listing.commits for v in range(instance.version + 1)
        ):
            continue
        try:
            from_commits = _state(view, spark, instance.version, None, now_ms)
        except CheckpointError:
            continue  # the commits themselves do not replay: other checks report why
        view.states_compared += 1
        where = log_path(instance.name)
        try:
            from_checkpoint = _state(view, spark, instance.version, instance, now_ms)
        except CheckpointError as exc:
            yield Finding(
                "STATE",
                "CKPT-CONTENT-001",
                where,
                f"{exc.code}: {exc.message}"[:300],
                "the reference reader cannot build a state from this checkpoint",
                exc.code if isinstance(exc.code, ErrorCode) else None,
            )
            continue
        difference = _difference(from_checkpoint, from_commits)
        if difference:
            yield Finding(
                "STATE",
                "CKPT-CONTENT-001",
                where,
                difference,
                f"the checkpoint must describe the state of commits 0..{instance.version} exactly",
            )


def _state(
    view: TableView, spark: Any, version: int, instance: CheckpointInstance | None, now_ms: int
) -> TableState:
    listing = dataclasses.replace(view.listing, checkpoints=(instance,) if instance else ())
    snapshot = read_snapshot(
        spark, view.table, version=version, now_ms=now_ms, listing=listing, max_fallbacks=0
    )
    return snapshot.table_state(include_source=False)


def _comparable(state: TableState) -> dict[str, Any]:
    out = state.comparable()
    out["files"] = [{k: v for k, v in f.items() if k != "stats"} for f in out["files"]]
    return out


def _difference(checkpoint: TableState, commits: TableState) -> str:
    """``""`` when equal; else each differing part with the counts seen (checkpoint vs commits)."""
    a, b = _comparable(checkpoint), _comparable(commits)
    parts = []
    for key in a:
        if a[key] == b.get(key):
            continue
        if isinstance(a[key], list):
            only_a = [x for x in a[key] if x not in b[key]]
            only_b = [x for x in b[key] if x not in a[key]]
            parts.append(f"{key}: {len(only_a)} only in the checkpoint, {len(only_b)} only in the commits")
        else:
            parts.append(f"{key} differs")
    return "; ".join(parts)
