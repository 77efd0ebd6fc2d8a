"""STATE check: each checkpoint gives the state its commits give, wherever those commits still exist.

Spec: ``spec/checkpoints.md`` §6 Checkpoint content (``CKPT-CONTENT-001``: a checkpoint of version
``n`` describes exactly the state of commits ``0..n``; ``CKPT-CONTENT-005``: statistics excepted)
and §13 Compatibility checkpoints (``CKPT-COMPAT-002``: where cleanup removed the commits, a
classic-named copy must still describe the state of the UUID-named checkpoint of its version).

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
from spec.vocabulary import LogFileKind


def check_state(view: TableView) -> Iterator[Finding]:
    """Every readable complete checkpoint against the commits ``0..n`` when they all exist
    (``CKPT-CONTENT-001``), else a compatibility checkpoint against the UUID-named one of its
    version (``CKPT-COMPAT-002``)."""
    if view.session is None:
        return
    spark = view.session()
    now_ms = int(time.time() * 1000)
    for instance in view.checkpoints:
        if view.unreadable(instance):
            continue
        reference = _reference(view, spark, instance, now_ms)
        if reference is None:
            continue
        rule, against, expected = reference
        view.states_compared += 1
        where = log_path(instance.name)
        try:
            from_checkpoint = _state(view, spark, instance.version, instance, now_ms)
        except CheckpointError as exc:
            yield Finding(
                "STATE",
                rule,
                where,
                f"{exc.code}: {exc.message}"[:300],
                "the reference reader cannot build a state from this checkpoint",
                exc.code if isinstance(exc.code, ErrorCode) else None,
            )
            continue
        difference = _difference(from_checkpoint, expected)
        if difference:
            yield Finding(
                "STATE", rule, where, difference, f"the checkpoint must describe the same state as {against}"
            )


def _reference(
    view: TableView, spark: Any, instance: CheckpointInstance, now_ms: int
) -> tuple[str, str, TableState] | None:
    """What ``instance`` must equal: ``(rule, what, state)``, or ``None`` when nothing remains to compare with."""
    version = instance.version
    try:
        if all(v in view.listing.commits for v in range(version + 1)):
            return "CKPT-CONTENT-001", f"commits 0..{version}", _state(view, spark, version, None, now_ms)
        peers = [
            c
            for c in view.listing.checkpoints
            if c.version == version and c.kind is LogFileKind.CHECKPOINT_UUID and c != instance
        ]
        if instance.kind is not LogFileKind.CHECKPOINT_UUID and peers and not view.unreadable(peers[-1]):
            state = _state(view, spark, version, peers[-1], now_ms)
            return "CKPT-COMPAT-002", f"the UUID-named checkpoint {peers[-1].name}", state
    except CheckpointError:
        return None  # what it would be compared with does not read: other checks report why
    return None


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
