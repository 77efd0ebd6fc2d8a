"""An incremental V2 checkpoint holds exactly the actions a full checkpoint of the same version holds.

Spec: ``spec/checkpoints.md`` §12.1 Sidecar reuse (``CKPT-INC-002``, ``CKPT-INC-004``, ``CKPT-INC-006``);
``docs/incremental-v2-checkpoints.md``.

Hypothesis draws a history: 12 bulk files added at version 1 (one tombstone with them), then the
commits of the reader's reconcile property test (:mod:`tests.reference_impl.read.test_reconcile_property`:
adds, removes and re-adds of three files, with and without deletion vectors, tombstones on both
sides of the cutoff), some of which also remove bulk files, by relative path or by absolute URI
(one identity, ``CKPT-CONTENT-014``), or add a bulk file again (a re-add of a path the base holds
supersedes its add). Our writer writes an ``--incremental`` checkpoint at a drawn
base version (its clock 3 or 16 days before the final one: tombstones expire in between, and at 16
days every base sidecar is older than the reuse age) and another at the last version, which
reuses what it may; a full checkpoint of the last version is written in a copy of the table
without checkpoints. Both are decoded with pyarrow, not with our reader: the reader shares the
replay and the reconcile with the writer, so it would share their mistakes, and it takes the last
action per file, so it would hide a file held twice (once in a reused sidecar, once in a new one).
Every action but ``checkpointMetadata`` and ``sidecar`` must be the same, once each, and every
``sidecar`` action of both incremental checkpoints must record in its tags the counts and oldest
tombstone its file holds (``CKPT-INC-006``, decoded with pyarrow) and its name set's digest, the
name set holding the hashes of exactly the file's canonical names (``CKPT-INC-007``). The examples are
few and derandomized (CI runs the same ones): each costs three real checkpoint writes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from conformance.tables.builder import add, metadata, remove, schema, schema_field, v2_protocol, write_log
from reference_impl.write.incremental import ADDS_TAG, OLDEST_TAG, REMOVES_TAG, reuse_cutoff
from reference_impl.write.name_sets import MAGIC, NAME_SET_TAG
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.result import CheckpointResult
from reference_impl.write.writer import write_checkpoint
from spec.vocabulary import CheckpointSpec
from tests.reference_impl.read.test_reconcile_property import (
    NOW_MS,
    TIMESTAMPS,
    Op,
    action_json,
    histories,
)
from tests.reference_impl.write.helpers import checkpoint_paths, rows_of
from tests.support.listings import log_dir

DAY_MS = 86_400_000
BULK = 12
LOG_RETENTION_MS = 30 * DAY_MS
CONFIGURATION = {
    "delta.checkpointPolicy": "v2",
    "delta.enableDeletionVectors": "true",
    "delta.logRetentionDuration": "interval 30 days",
}
#: How long before the final checkpoint the base is written: tombstones expire in between; at 16 days
#: (the log retention is 30) every base sidecar is older than the reuse age (CKPT-INC-004).
BASE_AGES = (3 * DAY_MS, 16 * DAY_MS)


@dataclass(frozen=True)
class Case:
    history: tuple[tuple[Op, ...], ...]  # the commits after the bulk one
    bulk_removes: tuple[tuple[int, ...], ...]  # per commit of ``history``: bulk files it removes
    bulk_readds: tuple[tuple[int, ...], ...]  # per commit of ``history``: bulk files it adds again
    absolute: bool  # bulk removes name the file by its absolute URI
    base: int  # the version of the base checkpoint (1 = the bulk commit)
    base_age_ms: int


@st.composite
def cases(draw: st.DrawFn) -> Case:
    history = tuple(tuple(c) for c in draw(histories))
    removes = tuple(tuple(draw(st.lists(st.integers(0, BULK - 1), max_size=2, unique=True))) for _ in history)
    readds = tuple(
        tuple(i for i in draw(st.lists(st.integers(0, BULK - 1), max_size=2, unique=True)) if i not in gone)
        for gone in removes
    )
    return Case(
        history,
        removes,
        readds,
        draw(st.booleans()),
        draw(st.integers(1, len(history))),
        draw(st.sampled_from(BASE_AGES)),
    )


#: The explicit example: a base right after the bulk commit, then a DV update of one file, the
#: remove of two bulk files (by URI) and a re-add of a third: the final checkpoint reuses some base
#: sidecars and rewrites others.
MIXED = Case(
    history=((Op("add", 0, 1, 0), Op("remove", 1, 0, 3)), (Op("remove", 0, 1, 3), Op("add", 0, 2, 0))),
    bulk_removes=((3,), (7,)),
    bulk_readds=((), (10,)),
    absolute=True,
    base=1,
    base_age_ms=BASE_AGES[0],
)


def _commits(table: Path, case: Case) -> list[list[dict[str, Any]]]:
    """Version 0 (protocol, metadata), the bulk commit, then the drawn commits."""
    features = ["deletionVectors"]
    head = [
        v2_protocol(reader_extra=features, writer_extra=features),
        metadata(schema(schema_field("id", "long")), configuration=CONFIGURATION),
    ]
    serial = iter(range(10_000))
    bulk = [add(f"bulk-{i:02d}.parquet", size=100 + i) for i in range(BULK)]
    first = [*bulk, remove("gone.parquet", deletion_timestamp=TIMESTAMPS[1])]
    commits = [head, first]
    for ops, removed, readded in zip(case.history, case.bulk_removes, case.bulk_readds, strict=True):
        actions = [action_json(op, next(serial)) for op in ops]
        for i in removed:
            path = f"{table.as_uri()}/bulk-{i:02d}.parquet" if case.absolute else f"bulk-{i:02d}.parquet"
            actions.append(remove(path, deletion_timestamp=TIMESTAMPS[i % len(TIMESTAMPS)] + i, size=100 + i))
        actions.extend(add(f"bulk-{i:02d}.parquet", size=1_000 + next(serial)) for i in readded)
        commits.append(actions)
    return commits


def _checkpoint(
    spark: SparkSession, table: Path, version: int, now_ms: int, *, incremental: bool
) -> CheckpointResult:
    options = CheckpointOptions(
        spec=CheckpointSpec.V2,
        incremental=incremental,
        actions_per_sidecar=2,
        now_ms=now_ms,
        file_time_ms=now_ms,
    )
    return write_checkpoint(table, version, options, spark=spark)


def _decoded(table: Path, result: CheckpointResult) -> list[str]:
    """Every action of the checkpoint's files but ``checkpointMetadata`` and ``sidecar``, as JSON with
    the table's URI replaced by ``<root>`` (the two tables' absolute paths differ only there)."""
    rows = [row for path in checkpoint_paths(table, result) for row in rows_of(path)]
    kept = [r for r in rows if not {"checkpointMetadata", "sidecar"} & set(r)]
    root = f"{table.as_uri()}/"
    return [json.dumps(r, sort_keys=True, default=str).replace(root, "<root>/") for r in kept]


def _assert_recorded_counts(spark: SparkSession, table: Path, result: CheckpointResult) -> None:
    """Every ``sidecar`` action's tags hold its file's ``add`` and ``remove`` rows and oldest tombstone,
    and the count and SHA-256 of its name set ``<sidecar>.names``, which holds Spark's ``xxhash64`` of
    exactly the rows' canonical names (last path segment, percent-decoded)."""
    actions = [
        r["sidecar"] for f in result.top_level for r in rows_of(log_dir(table) / f.name) if "sidecar" in r
    ]
    assert len(actions) == len(result.sidecars), f"{table} v{result.version}: {actions}"
    name_sets: dict[Path, tuple[list[str], bytes]] = {}
    for action in actions:
        path = log_dir(table) / "_sidecars" / action["path"]
        rows = rows_of(path)
        removes = [r["remove"] for r in rows if "remove" in r]
        want = {ADDS_TAG: str(sum("add" in r for r in rows)), REMOVES_TAG: str(len(removes))}
        if removes:
            want[OLDEST_TAG] = str(min(r.get("deletionTimestamp") or 0 for r in removes))
        names = sorted({unquote(r[k]["path"].rsplit("/", 1)[-1]) for r in rows for k in r})
        data = path.with_name(path.name + ".names").read_bytes()
        want[NAME_SET_TAG] = f"{len(names)}:{hashlib.sha256(data).hexdigest()}"
        got = dict(action.get("tags") or {})
        assert got == want, f"{path}: the sidecar action's tags are {got}, its rows {want}"
        name_sets[path] = names, data
    every = sorted({n for names, _ in name_sets.values() for n in names})
    hashed = spark.createDataFrame([(n,) for n in every], "n string").select("n", F.xxhash64("n"))
    hash_of = {str(r[0]): int(r[1]) for r in hashed.collect()}  # one Spark job for the checkpoint
    for path, (names, data) in name_sets.items():
        body = data[len(MAGIC) :]
        held = list(struct.unpack(f"<{len(body) // 8}q", body))
        assert data.startswith(MAGIC) and held == sorted({hash_of[n] for n in names}), (
            f"{path}.names holds {held}, the hashes of its names {names}"
        )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-002", "CKPT-INC-004", "CKPT-INC-006", "CKPT-INC-007")
@settings(
    max_examples=1,  # plus the explicit example; each costs three checkpoint writes
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(case=MIXED)
@given(case=cases())
def test_incremental_checkpoint_equals_a_full_checkpoint(
    spark: SparkSession, tmp_path: Path, case: Case
) -> None:
    """Spec: CKPT-INC-002
    "A writer MUST list a sidecar file written for an earlier checkpoint only when, for every logical
    file that has an action in that sidecar, the action is the one the new checkpoint's state holds
    for that file, and no other file of the new checkpoint holds an action for that logical file."

    Spec: CKPT-INC-004
    "A writer MUST NOT list a sidecar file written for an earlier checkpoint when the sidecar's
    modification time is earlier than the new checkpoint's time minus half the table's log retention …"

    Spec: CKPT-INC-006
    "A writer that records in a `sidecar` action's `tags` how many `add` and `remove` actions the
    sidecar file holds, or the earliest `deletionTimestamp` of its `remove` actions (0 for a `remove`
    without one), MUST record the values the file holds, and a writer that lists the sidecar again MUST
    list it with the same values."

    Spec: CKPT-INC-007
    "A writer that records a name set for a sidecar file in its `sidecar` action's tags … MUST write
    it, before it publishes the top-level file, as the file `<sidecar file name>.names` in the
    sidecar's directory: the 8 bytes `DCKNSET1`, then the distinct 64-bit hashes (Spark's `xxhash64`
    with seed 42 of the UTF-8 bytes) of the canonical name … of every `add` and `remove` row of that
    sidecar, ascending, each a little-endian signed 64-bit integer, `<count>` being their number; and
    a writer that lists the sidecar again MUST list it with the same tag."
    """
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        table = root / "table"
        full_table = root / "full"  # the same commits (absolute URIs name its own root)
        commits = _commits(table, case)
        write_log(table, commits)
        write_log(full_table, _commits(full_table, case))
        last = len(commits) - 1
        base = _checkpoint(spark, table, case.base, NOW_MS - case.base_age_ms, incremental=True)
        final = _checkpoint(spark, table, last, NOW_MS, incremental=True)
        full = _checkpoint(spark, full_table, last, NOW_MS, incremental=False)

        base_names = {s.base_name for s in base.sidecars}
        reused = {s.base_name for s in final.sidecars if s.kept_existing}
        label = f"{table} v{last} ({case}): reused {sorted(reused)} of the base's {sorted(base_names)}"
        assert reused <= base_names, f"{label}: a reused sidecar is not the base's"
        if NOW_MS - case.base_age_ms < reuse_cutoff(NOW_MS, LOG_RETENTION_MS):
            assert not reused, f"{label}: the base sidecars are older than the reuse age"
        if case == MIXED:
            assert reused and base_names - reused, f"{label}: the example must reuse some and rewrite some"
        _assert_recorded_counts(spark, table, base)
        _assert_recorded_counts(spark, table, final)
        got, want = Counter(_decoded(table, final)), Counter(_decoded(full_table, full))
        assert got == want, (
            f"{label}: only in the incremental checkpoint (action: times) {dict(got - want)}; "
            f"only in the full checkpoint {dict(want - got)}"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
