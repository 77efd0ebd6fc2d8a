"""Incremental V2 checkpoints (``--incremental``): untouched buckets' sidecars are listed again, exactly.

Spec: ``spec/checkpoints.md`` §12.1 Sidecar reuse (``CKPT-INC-001``, ``CKPT-INC-002``).

The table: 40 files added at version 1 with one tombstone, three files appended at 2, one file
removed at 3. Checkpoint A (version 1, ``--incremental``, 5 actions per sidecar: 9 buckets) is a full
write with the layout recorded; checkpoint B (version 3, ``--incremental``, its clock 8 days later,
written in a copy of the table: keys are relative to the root, so a copy keeps the layout) rewrites only the buckets the commits 2..3 touched and the bucket whose tombstone has expired by
then, and lists the other sidecars of A again. The judge of B's content is the state replayed from
the commits alone (our reader on a copy without checkpoints); delta-spark and deltalake must read
version 3 from B as that state too.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pyspark.sql import SparkSession

from conformance.adapters.deltalake import deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_spark import delta_spark_state
from conformance.tables.builder import (
    add,
    commit_info,
    metadata,
    remove,
    schema,
    schema_field,
    txn,
    v2_protocol,
    write_commit,
    write_log,
)
from reference_impl.read.snapshot import read_snapshot
from reference_impl.write.incremental import BUCKET_TAG, BUCKETS_TAG, LAYOUT, LAYOUT_TAG
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.result import CheckpointResult
from reference_impl.write.writer import write_checkpoint
from spec.table_state import TableState
from spec.vocabulary import CheckpointSpec
from tests.reference_impl.write.helpers import kind_of, rows_of
from tests.support.listings import log_dir

DAY_MS = 86_400_000
NOW_A = 1_800_000_000_000
NOW_B = NOW_A + 8 * DAY_MS  # the tombstone of version 1 (deleted at NOW_A - 1 s) has expired by then
PER_SIDECAR = 5


def _build(table: Path) -> Path:
    table_schema = schema(schema_field("v", "long"))
    return write_log(
        table,
        [
            [v2_protocol(), metadata(table_schema, configuration={"delta.checkpointPolicy": "v2"})],
            [
                commit_info(),
                *[add(f"f-{i:02d}.parquet", size=100 + i) for i in range(40)],
                remove("gone.parquet", deletion_timestamp=NOW_A - 1000),
            ],
            [commit_info(), *[add(f"new-{i}.parquet", size=500 + i) for i in range(3)]],
            [commit_info(), remove("f-07.parquet", deletion_timestamp=NOW_B - 1000)],
        ],
    )


def _write(table: Path, version: int, now_ms: int, spark: SparkSession) -> CheckpointResult:
    options = CheckpointOptions(
        spec=CheckpointSpec.V2, incremental=True, actions_per_sidecar=PER_SIDECAR, now_ms=now_ms
    )
    return write_checkpoint(table, version, options, spark=spark)


def _actions(table: Path, result: CheckpointResult) -> dict[str, list[dict[str, Any]]]:
    """Sidecar base name -> its rows as ``{kind: body}``."""
    return {s.base_name: rows_of(log_dir(table) / s.name) for s in result.sidecars}


def _top_level_rows(table: Path, result: CheckpointResult) -> list[dict[str, Any]]:
    return rows_of(log_dir(table) / result.top_level[0].name)


def _key(kind: str, body: dict[str, Any]) -> tuple[str, str, int | None]:
    return kind, body["path"], body.get("size") if kind == "add" else body.get("deletionTimestamp")


@pytest.mark.spark
@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-INC-002", "CKPT-INC-001")
def test_incremental_checkpoint_reuses_exactly_the_untouched_sidecars(
    delta_spark: SparkSession, deltalake: ModuleType, tmp_path: Path
) -> None:
    """Spec: CKPT-INC-002
    "A writer MUST list a sidecar file written for an earlier checkpoint only when, for every logical
    file that has an action in that sidecar, the action is the one the new checkpoint's state holds
    for that file, and no other file of the new checkpoint holds an action for that logical file."

    Spec: CKPT-INC-001
    "A writer MAY list in a V2 checkpoint a sidecar file that it or another writer wrote for an
    earlier checkpoint of the same table."
    """
    original = _build(tmp_path / "original")
    first = _write(original, 1, NOW_A, delta_spark)
    table = tmp_path / "table"  # B is written in a copy: the layout does not depend on the table root
    shutil.copytree(original, table)
    second = _write(table, 3, NOW_B, delta_spark)
    meta = next(r["checkpointMetadata"] for r in _top_level_rows(table, second) if "checkpointMetadata" in r)
    tags = meta.get("tags") or {}
    assert tags.get(LAYOUT_TAG) == LAYOUT and tags.get(BUCKETS_TAG) == "9", f"{table}: B's layout tags {tags}"

    a_names, b_names = {s.base_name for s in first.sidecars}, {s.base_name for s in second.sidecars}
    reused, rewritten = a_names & b_names, b_names - a_names
    assert reused and rewritten, (
        f"{table}: A {sorted(a_names)}, B {sorted(b_names)}: nothing reused or rewritten"
    )
    assert all(s.kept_existing for s in second.sidecars if s.base_name in reused)

    # The judge: the state of version 3 from the commits alone.
    judge_table = tmp_path / "commits-only"
    shutil.copytree(
        table, judge_table, ignore=shutil.ignore_patterns("*.checkpoint.*", "_last_checkpoint", "_sidecars")
    )
    want = read_snapshot(delta_spark, judge_table, version=3, now_ms=NOW_B).table_state()
    state = {("add", f["path"]): f["size"] for f in want.files}
    state |= {("remove", t["path"]): t["deletionTimestamp"] for t in want.tombstones}

    seen: dict[str, str] = {}  # logical file -> the sidecar holding it
    for name, rows in _actions(table, second).items():
        for row in rows:
            kind = kind_of(row)
            body = row[kind]
            where = (
                f"{table}: sidecar {name} ({'reused' if name in reused else 'new'}) row {_key(kind, body)}"
            )
            assert body["path"] not in seen, f"{where}: the file is also in {seen[body['path']]}"
            seen[body["path"]] = name
            value = body.get("size") if kind == "add" else body.get("deletionTimestamp")
            assert state.get((kind, body["path"])) == value, (
                f"{where}: the state holds {state.get((kind, body['path']))}"
            )
    assert len(seen) == len(state), f"{table}: B holds {len(seen)} logical files, the state {len(state)}"
    assert "gone.parquet" not in seen and "f-07.parquet" in seen, (
        f"{table}: expired/new tombstones: {sorted(seen)}"
    )
    buckets = {s.base_name: s for s in second.sidecars}
    sidecar_actions = [r["sidecar"] for r in _top_level_rows(table, second) if "sidecar" in r]
    assert {a["path"] for a in sidecar_actions} == set(buckets) and all(
        (a.get("tags") or {}).get(BUCKET_TAG) is not None for a in sidecar_actions
    ), f"{table}: B's sidecar actions {sidecar_actions}"

    ours = read_snapshot(delta_spark, table, version=3, now_ms=NOW_B).table_state()
    assert set(ours.source["checkpoint"]["sidecars"]) == b_names, f"{table}: our reader used {ours.source}"
    _agree(want, ours, "ours from B", table)
    _agree(want, delta_spark_state(delta_spark, str(table), 3, now_ms=NOW_B), "delta-spark from B", table)
    rust = deltalake_state(table, 3)
    assert_states_equal(
        want,
        rust,
        context=f"{table} v3: commits-only state vs deltalake from B",
        ignore=[*unavailable_fields(rust), "tombstones"],  # deltalake's tombstone expiry uses its own clock
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-002")
def test_incremental_checkpoint_after_commits_without_file_actions_reuses_every_sidecar(
    spark: SparkSession, tmp_path: Path
) -> None:
    """No commit after the base touches a file and no tombstone expires: every sidecar is listed
    again and no new one is written (not even Spark's schema-only file of an empty output).

    Spec: CKPT-INC-002
    "A writer MUST list a sidecar file written for an earlier checkpoint only when, for every logical
    file that has an action in that sidecar, the action is the one the new checkpoint's state holds
    for that file …"
    """
    table = _build(tmp_path / "table")
    base = _write(table, 3, NOW_A, spark)
    write_commit(table, 4, [commit_info(), txn("app", 7)])
    again = _write(table, 4, NOW_A, spark)
    names = {s.base_name for s in base.sidecars}
    assert {s.base_name for s in again.sidecars} == names and all(s.kept_existing for s in again.sidecars), (
        f"{table}: base sidecars {sorted(names)}, then {[(s.base_name, s.kept_existing) for s in again.sidecars]}"
    )
    got = read_snapshot(spark, table, version=4, now_ms=NOW_A).table_state()
    want = read_snapshot(spark, table, version=3, now_ms=NOW_A).table_state()
    assert got.files == want.files and got.tombstones == want.tombstones, f"{table}: v4 files differ from v3"
    assert got.source["checkpoint"]["version"] == 4, f"{table}: v4 read from {got.source['checkpoint']}"


def _agree(want: TableState, got: TableState, label: str, table: Path) -> None:
    assert_states_equal(want, got, context=f"{table} v3: commits-only state vs {label}")


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-002")
def test_incremental_checkpoint_rewrites_the_bucket_of_a_base_sidecar_without_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A base sidecar without rows (the one empty sidecar of an empty table's checkpoint, or Spark's
    schema-only file an older writer published for an empty bucket) is not listed again: its bucket
    is rewritten from the state, here a full write with one new empty sidecar, and the write succeeds.

    Spec: CKPT-INC-002
    "A writer MUST list a sidecar file written for an earlier checkpoint only when, for every logical
    file that has an action in that sidecar, the action is the one the new checkpoint's state holds
    for that file …"
    """
    table = write_log(
        tmp_path / "table",
        [
            [
                v2_protocol(),
                metadata(schema(schema_field("v", "long")), configuration={"delta.checkpointPolicy": "v2"}),
            ]
        ],
    )
    base = _write(table, 0, NOW_A, spark)
    assert [s.rows for s in base.sidecars] == [0], f"{table}: the empty table's sidecars {base.sidecars}"
    write_commit(table, 1, [commit_info(), txn("app", 1)])
    again = _write(table, 1, NOW_A, spark)
    listed = [(s.base_name, s.rows, s.kept_existing) for s in again.sidecars]
    assert len(listed) == 1 and listed[0][0] != base.sidecars[0].base_name and not listed[0][2], (
        f"{table}: checkpoint 1 lists {listed}; the base's empty sidecar is {base.sidecars[0].base_name}"
    )
    got = read_snapshot(spark, table, version=1, now_ms=NOW_A).table_state()
    assert not got.files and got.source["checkpoint"]["version"] == 1, f"{table}: v1 read as {got.source}"
