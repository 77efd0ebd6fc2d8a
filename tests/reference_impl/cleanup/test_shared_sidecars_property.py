"""Checkpoints that share sidecars (incremental V2 checkpoints): the cleaner never deletes a referenced one.

Spec: ``spec/checkpoints.md`` §18.3 Sidecar garbage collection (``CKPT-CLEAN-013``, ``-014``,
``-015``, ``-017``); ``docs/incremental-v2-checkpoints.md`` (a V2 checkpoint may list sidecars an
earlier checkpoint wrote).

Hypothesis draws logs of commits one day apart where some versions have a UUID-named V2 checkpoint;
each checkpoint lists a random subset of the sidecars earlier checkpoints wrote (reuse) plus new
ones, and some sidecars are orphans of every age. The cleaner's planning runs as
:func:`reference_impl.cleanup.cleaner.cleanup` runs it — :func:`plan_log` on the listing,
:func:`collect_references` over the checkpoint files that remain, :func:`plan_sidecars` with the
default sidecar cutoff — without Spark (no state replay: nothing here has file actions). The model
knows which checkpoint lists which sidecar; the deleted sidecars must be exactly those that no
remaining checkpoint lists and that were modified before the sidecar cutoff.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.tables.builder import metadata, schema, schema_field, v2_protocol
from reference_impl.cleanup.plan import (
    commit_timestamps,
    log_cutoff,
    plan_log,
    plan_sidecars,
    sidecar_cutoff,
    sidecar_floor,
)
from reference_impl.cleanup.references import collect_references
from reference_impl.log.listing import list_log
from reference_impl.log.naming import SIDECAR_DIR, commit_name, sidecar_name, uuid_checkpoint_name
from reference_impl.log.table_properties import MS_PER_DAY
from reference_impl.storage import Location
from reference_impl.storage.local import LocalStorage
from spec.vocabulary import TopLevelFormat

HOUR = 3_600_000
T0 = 1_700_000_000_000 // MS_PER_DAY * MS_PER_DAY  # a midnight UTC
STORAGE = LocalStorage()


@dataclass(frozen=True)
class History:
    """``versions`` commits; ``checkpoints[v]`` = (indices of earlier sidecars reused, new sidecars)."""

    versions: int
    checkpoints: dict[int, tuple[frozenset[int], int]]
    orphans: tuple[int, ...]  # age in days of each orphan sidecar (by "now")
    extra_days: int  # now = the last commit's day + extra_days
    retention_days: int


@st.composite
def histories(draw: st.DrawFn) -> History:
    versions = draw(st.integers(2, 12))
    chosen = sorted(draw(st.sets(st.integers(0, versions - 1), min_size=1, max_size=versions)))
    checkpoints: dict[int, tuple[frozenset[int], int]] = {}
    written = 0  # sidecars written so far (indices 0..written-1)
    for version in chosen:
        reused = draw(st.sets(st.integers(0, written - 1), max_size=written)) if written else set()
        new = draw(st.integers(0 if reused else 1, 2))
        checkpoints[version] = (frozenset(reused), new)
        written += new
    orphans = tuple(draw(st.lists(st.integers(0, versions + 10), max_size=3)))
    return History(
        versions, checkpoints, orphans, draw(st.integers(0, 10)), draw(st.integers(1, versions + 5))
    )


def _touch(path: Path, ms: int, data: bytes = b"x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


def _day(version: int) -> int:
    return T0 + version * MS_PER_DAY + 6 * HOUR


def build(log_dir: Path, history: History) -> tuple[dict[str, set[str]], dict[str, int]]:
    """Lay the history out; returns (checkpoint file -> sidecars it lists, sidecar -> mtime)."""
    head = [v2_protocol(), metadata(schema(schema_field("id", "long")))]
    for version in range(history.versions):
        actions = head if version == 0 else [{"commitInfo": {"timestamp": _day(version)}}]
        _touch(
            log_dir / commit_name(version),
            _day(version),
            "".join(json.dumps(a) + "\n" for a in actions).encode(),
        )
    sidecars: list[str] = []
    mtimes: dict[str, int] = {}
    lists: dict[str, set[str]] = {}
    counter = iter(range(1, 1_000))
    for version, (reused, new) in sorted(history.checkpoints.items()):
        fresh = [sidecar_name(version, i + 1, new, uuid.UUID(int=next(counter))) for i in range(new)]
        for name in fresh:
            _touch(log_dir / SIDECAR_DIR / name, _day(version) + 1000)
            mtimes[name] = _day(version) + 1000
        listed = [sidecars[i] for i in sorted(reused)] + fresh
        sidecars += fresh
        top = uuid_checkpoint_name(version, uuid.UUID(int=next(counter)), TopLevelFormat.JSON)
        actions = [{"checkpointMetadata": {"version": version}}, *head]
        actions += [{"sidecar": {"path": n, "sizeInBytes": 1, "modificationTime": mtimes[n]}} for n in listed]
        _touch(log_dir / top, _day(version) + 2000, "".join(json.dumps(a) + "\n" for a in actions).encode())
        lists[top] = set(listed)
    now = _day(history.versions - 1) + history.extra_days * MS_PER_DAY
    for index, age in enumerate(history.orphans):
        name = sidecar_name(0, 1, 1, uuid.UUID(int=10_000 + index))
        mtimes[name] = now - age * MS_PER_DAY
        _touch(log_dir / SIDECAR_DIR / name, mtimes[name])
    return lists, mtimes


@pytest.mark.requirement("CKPT-CLEAN-013", "CKPT-CLEAN-017")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories())
def test_cleaner_keeps_every_sidecar_a_remaining_checkpoint_lists(tmp_path: Path, history: History) -> None:
    """Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint remaining
    after the cleanup references …"

    Spec: CKPT-CLEAN-017
    "A cleaner SHOULD delete every file in `_delta_log/_sidecars/` that no remaining checkpoint
    references and whose modification time is before the sidecar cutoff."
    """
    table = tmp_path / "t"
    shutil.rmtree(table, ignore_errors=True)
    log_dir = table / "_delta_log"
    lists, mtimes = build(log_dir, history)
    now = _day(history.versions - 1) + history.extra_days * MS_PER_DAY
    location = Location.parse(log_dir)
    listing = list_log(STORAGE, location)
    files = STORAGE.list_dir(location)
    cutoff = log_cutoff(now, history.retention_days * MS_PER_DAY)
    times = commit_timestamps(listing.commits, stop_after_ms=cutoff)
    hint = max(history.checkpoints)
    plan = plan_log(listing, files, [SIDECAR_DIR], cutoff_ms=cutoff, commit_times=times, hint_version=hint)
    deleted_log = {d.name for d in plan.deletions}
    refs = collect_references(STORAGE, location, [f for f in files if f.name not in deleted_log])
    floor = sidecar_floor(now)
    side_cutoff = sidecar_cutoff(now, floor, None, cutoff)
    sidecar_plan = plan_sidecars(
        STORAGE.list_dir(location / SIDECAR_DIR),
        refs.by_sidecar,
        cutoff_ms=side_cutoff.cutoff_ms,
        floor_ms=floor,
        cutoff_source=side_cutoff.source,
    )
    deleted = {d.name.split("/", 1)[1] for d in sidecar_plan.deletions}
    remaining = {name: listed for name, listed in lists.items() if name not in deleted_log}
    still_listed = set().union(*remaining.values()) if remaining else set()
    expected = {n for n, t in mtimes.items() if n not in still_listed and t < side_cutoff.cutoff_ms}
    label = f"{history} (log cutoff {cutoff}, sidecar cutoff {side_cutoff.cutoff_ms}, deleted log files {sorted(deleted_log)})"
    assert not deleted & still_listed, (
        f"{label}: deleted sidecars a remaining checkpoint lists: {sorted(deleted & still_listed)}"
    )
    assert deleted == expected, f"{label}: deleted {sorted(deleted)}, expected {sorted(expected)}"
