"""Incremental V2 checkpoints (``--incremental``): the base's sidecars no commit touched are listed again, exactly.

Spec: ``spec/checkpoints.md`` §12.1 Sidecar reuse (``CKPT-INC-001``, ``CKPT-INC-002``, ``CKPT-INC-003``).

The table: 40 files added at version 1 with one tombstone, three files appended at 2, one file
removed at 3. Checkpoint A (version 1, ``--incremental``, 5 actions per sidecar: 9 sidecars) is a full
write with the layout recorded; checkpoint B (version 3, ``--incremental``, its clock 8 days later,
written in a copy of the table) rewrites only the sidecars holding a file the commits 2..3 touched
or a tombstone that has expired by then, writes the changes into new sidecars, and lists the other
sidecars of A again. The judge of B's content is the state replayed from the commits alone (our
reader on a copy without checkpoints); delta-spark and deltalake must read version 3 from B as that
state too.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

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
from reference_impl.hooks import NO_HOOKS, Hooks, PublicationPoint
from reference_impl.progress import Progress, silent
from reference_impl.read.sidecars import ResolvedSidecar
from reference_impl.read.snapshot import read_snapshot
from reference_impl.spark import session
from reference_impl.spark.session import SMALL_LOG_BYTES, SMALL_LOG_CONF, size_queries
from reference_impl.storage import Location
from reference_impl.storage.local import LocalStorage
from reference_impl.write import name_sets, sizing, task_files
from reference_impl.write.incremental import (
    ADDS_TAG,
    LAYOUT,
    LAYOUT_TAG,
    MAX_SMALL_TAG,
    SMALL_ROWS_TAG,
    BaseSidecar,
    _footer_agrees,
    _recorded,
    decide,
    reuse_cutoff,
)
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.result import CheckpointResult, WrittenFile
from reference_impl.write.sizing import log_estimate
from reference_impl.write.writer import write_checkpoint
from spec.table_state import TableState
from spec.vocabulary import CheckpointSpec
from tests.reference_impl.write.helpers import kind_of, rows_of
from tests.support.listings import log_dir

DAY_MS = 86_400_000
NOW_A = 1_800_000_000_000
NOW_B = NOW_A + 8 * DAY_MS  # the tombstone of version 1 (deleted at NOW_A - 1 s) has expired by then
PER_SIDECAR = 5


def _stored_hashes(data: bytes) -> tuple[int, ...]:
    """The hashes of a name-set file's bytes, read as the spec lays them out (CKPT-INC-007)."""
    body = data[len(name_sets.MAGIC) :]
    return struct.unpack(f"<{len(body) // 8}q", body)


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


def _write(
    table: Path,
    version: int,
    now_ms: int,
    spark: SparkSession,
    per_sidecar: int | None = PER_SIDECAR,
    hooks: Hooks = NO_HOOKS,
    progress: Progress | None = None,
) -> CheckpointResult:
    options = CheckpointOptions(
        spec=CheckpointSpec.V2,
        incremental=True,
        actions_per_sidecar=per_sidecar,
        now_ms=now_ms,
        file_time_ms=now_ms,  # the reuse age (CKPT-INC-004) compares sidecar times with the clock
        hooks=hooks,
        progress=progress or silent(),
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
    assert (tags.get(LAYOUT_TAG), tags.get(SMALL_ROWS_TAG), tags.get(MAX_SMALL_TAG)) == (LAYOUT, "1", "8"), (
        f"{table}: B's layout tags {tags}"
    )

    a_names, b_names = {s.base_name for s in first.sidecars}, {s.base_name for s in second.sidecars}
    reused, rewritten = a_names & b_names, b_names - a_names
    assert len(a_names) == 9 and reused and rewritten, (
        f"{table}: A {sorted(a_names)}, B {sorted(b_names)}: nothing reused or rewritten"
    )
    assert all(s.kept_existing for s in second.sidecars if s.base_name in reused)
    # Exactly the sidecars of A holding f-07 (removed at 3) or gone.parquet (expired) are not listed again.
    holding = {
        name
        for name, rows in _actions(original, first).items()
        if {r[kind_of(r)]["path"] for r in rows} & {"f-07.parquet", "gone.parquet"}
    }
    assert a_names - b_names == holding, (
        f"{table}: A's sidecars left out {sorted(a_names - b_names)}, want {holding}"
    )

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
    listed = {s.base_name for s in second.sidecars}
    sidecar_actions = [r["sidecar"] for r in _top_level_rows(table, second) if "sidecar" in r]
    assert {a["path"] for a in sidecar_actions} == listed, f"{table}: B's sidecar actions {sidecar_actions}"

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


def _sidecar_files(table: Path) -> set[str]:
    folder = log_dir(table) / "_sidecars"
    return {p.name for p in folder.iterdir() if p.suffix == ".parquet"} if folder.is_dir() else set()


def _step(
    table: Path,
    version: int,
    spark: SparkSession,
    progress: Progress | None = None,
    per_sidecar: int | None = 8,
) -> tuple[CheckpointResult, set[str]]:
    """An incremental checkpoint of ``version`` and the sidecar files it added to ``_sidecars``
    (``per_sidecar`` None: sized by the default policy, the rows written uncounted and counted by
    the write job)."""
    before = _sidecar_files(table)
    result = _write(table, version, NOW_A, spark, per_sidecar=per_sidecar, progress=progress)
    added = _sidecar_files(table) - before
    new = {s.base_name for s in result.sidecars if not s.kept_existing}
    assert added == new, (
        f"{table} v{version}: files added to _sidecars {sorted(added)}, new sidecars {sorted(new)}"
    )
    return result, new


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-003", "CKPT-INC-002", "CKPT-INC-007", "CKPT-INC-008")
def test_incremental_checkpoint_writes_only_what_changed(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """16 files (A: two sidecars of 8), then: an append (B writes one sidecar with the new file and
    rewrites no old one, deciding from the name sets alone; sized by the default policy, so its
    rows are counted by the write job), a remove (C rewrites only the sidecar
    holding the file, although its name set was damaged: it reads that one); C's sidecars hold each
    file the commits leave once.

    Spec: CKPT-INC-003
    "A writer that lists sidecars of an earlier checkpoint SHOULD record in the new checkpoint's
    checkpointMetadata.tags which layout it used, …"

    Spec: CKPT-INC-002
    "A writer MUST list a sidecar file written for an earlier checkpoint only when, for every logical
    file that has an action in that sidecar, the action is the one the new checkpoint's state holds
    for that file …"

    Spec: CKPT-INC-007
    "A writer that records a name set for a sidecar file in its `sidecar` action's tags … MUST write
    it, before it publishes the top-level file, as the file `<sidecar file name>.names` in the
    sidecar's directory: the 8 bytes `DCKNSET1`, then the distinct 64-bit hashes (Spark's `xxhash64`
    with seed 42 of the UTF-8 bytes) of the canonical name … of every `add` and `remove` row of that
    sidecar …"

    Spec: CKPT-INC-008
    "A writer MUST NOT conclude from a name set that a sidecar file holds no file touched by the
    commits after its checkpoint unless the name-set file exists and has the digest the tag records …"
    """
    table_schema = schema(schema_field("v", "long"))
    table = write_log(
        tmp_path / "table",
        [
            [v2_protocol(), metadata(table_schema, configuration={"delta.checkpointPolicy": "v2"})],
            [commit_info(), *[add(f"f-{i:02d}.parquet", size=100 + i) for i in range(16)]],
        ],
    )
    a, a_new = _step(table, 1, spark)
    assert len(a_new) == 2, f"{table}: A's sidecars {sorted(a_new)}"
    for sidecar in a.sidecars:
        _assert_name_set(spark, table, sidecar)

    write_commit(table, 2, [commit_info(), add("new-1.parquet", size=900)])
    capsys.readouterr()
    b, b_new = _step(table, 2, spark, Progress(prefix="B"), per_sidecar=None)
    assert "2 searched for touched files, 0 of them read" in capsys.readouterr().err, (
        f"{table}: B did not decide from A's two name sets alone"
    )
    b_all = {s.base_name for s in b.sidecars}
    assert len(b_new) == 1 and b_all == a_new | b_new, (
        f"{table}: B lists {sorted(b_all)}, wrote {sorted(b_new)}"
    )
    assert [s.adds for s in b.sidecars if s.base_name in b_new] == [1], (
        f"{table}: B's new sidecar {b.sidecars}"
    )
    # B's new rows were counted by the job that wrote them, the reused sidecars' from their tags.
    assert (b.num_add_files, b.num_remove_files) == (17, 0), (
        f"{table}: B counts {b.num_add_files} adds / {b.num_remove_files} removes, the state 17 / 0"
    )

    holder = {
        n
        for n in a_new
        if "f-03.parquet" in {r[kind_of(r)]["path"] for r in rows_of(log_dir(table) / "_sidecars" / n)}
    }
    # The holder's name set loses f-03's hash; its tag still records the old digest, so C must read it.
    for n in holder:
        names = log_dir(table) / "_sidecars" / f"{n}.names"
        hashes = _stored_hashes(names.read_bytes())
        names.write_bytes(
            name_sets.encode([int(h) for h in hashes if int(h) not in _spark_hashes(spark, ["f-03.parquet"])])
        )
    write_commit(table, 3, [commit_info(), remove("f-03.parquet", deletion_timestamp=NOW_A - 1000)])
    capsys.readouterr()
    c, c_new = _step(table, 3, spark, Progress(prefix="C"))
    assert "3 searched for touched files, 1 of them read" in capsys.readouterr().err, (
        f"{table}: C did not read the sidecar whose name set was damaged"
    )
    c_all = {s.base_name for s in c.sidecars}
    assert len(holder) == 1 and len(c_new) == 1 and c_all == (b_all - holder) | c_new, (
        f"{table}: f-03 was in {holder}; C lists {sorted(c_all)}, wrote {sorted(c_new)}"
    )

    held = [
        (kind_of(r), r[kind_of(r)]["path"]) for n in c_all for r in rows_of(log_dir(table) / "_sidecars" / n)
    ]
    want = {("add", f"f-{i:02d}.parquet") for i in range(16) if i != 3}
    want |= {("add", "new-1.parquet"), ("remove", "f-03.parquet")}
    assert sorted(held) == sorted(want), (
        f"{table}: C's sidecars hold {sorted(held)}, the commits leave {sorted(want)}"
    )


def _spark_hashes(spark: SparkSession, names: list[str]) -> set[int]:
    """Spark's ``xxhash64`` of each name (the hash a name set holds, ``CKPT-INC-007``)."""
    frame = spark.createDataFrame([(n,) for n in names], "n string")
    return {int(r[0]) for r in frame.select(F.xxhash64("n")).collect()}


def _assert_name_set(spark: SparkSession, table: Path, sidecar: WrittenFile) -> None:
    """The sidecar's name set ``<sidecar>.names`` holds exactly the hashes of its rows' names (plain
    relative paths here, so a name is the path), and its digest is the one the tag records."""
    path = log_dir(table) / sidecar.name
    names = {r[kind_of(r)]["path"] for r in rows_of(path)}
    data = path.with_name(path.name + ".names").read_bytes()
    got = set(_stored_hashes(data))
    digest = hashlib.sha256(data).hexdigest()
    assert data.startswith(name_sets.MAGIC) and got == _spark_hashes(spark, sorted(names)), (
        f"{path}.names: {len(got)} hashes, the sidecar's {len(names)} names hash otherwise"
    )
    assert sidecar.name_set == f"{len(got)}:{digest}", (
        f"{path}: tag {sidecar.name_set!r}, the name set has {len(got)} hashes and SHA-256 {digest}"
    )


def _base(
    name: str, rows: int, *, oldest: int | None = None, touched: bool = False, mtime: int = 5_000
) -> BaseSidecar:
    action = {"path": name, "sizeInBytes": 10, "modificationTime": mtime}
    resolved = ResolvedSidecar(action, Location.parse(f"/t/_delta_log/_sidecars/{name}"))
    return BaseSidecar(resolved, rows, rows, 0, oldest, touched)


@pytest.mark.requirement("CKPT-INC-002", "CKPT-INC-004")
def test_which_base_sidecars_are_rewritten() -> None:
    """A touched sidecar, one with an expired tombstone, an empty one and one modified before the
    reuse cutoff are rewritten, the others reused (one modified exactly at the cutoff too); once
    ``max_small`` small ones (below ``small`` rows) would be reused, all of those are rewritten too
    (compaction), and the big ones stay. The reuse cutoff is half the log retention before the clock.

    Spec: CKPT-INC-002
    "A writer MUST list a sidecar file written for an earlier checkpoint only when, for every logical
    file that has an action in that sidecar, the action is the one the new checkpoint's state holds
    for that file …"

    Spec: CKPT-INC-004
    "A writer MUST NOT list a sidecar file written for an earlier checkpoint when the sidecar's
    modification time is earlier than the new checkpoint's time minus half the table's log retention
    (`delta.logRetentionDuration`)."
    """
    reuse_after = reuse_cutoff(now_ms=9_000, log_retention_ms=8_000)
    assert reuse_after == 5_000, f"reuse cutoff {reuse_after} at 9000 with a retention of 8000"
    sidecars = [
        _base("big", 100),
        _base("touched", 100, touched=True),
        _base("expired", 100, oldest=1_000),
        _base("fresh", 100, oldest=1_001),
        _base("empty", 0),
        _base("aged", 100, mtime=4_999),
        _base("small-1", 3),
        _base("small-2", 3),
    ]
    kept = decide(sidecars, cutoff_ms=1_000, reuse_after_ms=reuse_after, small=10, max_small=3)
    assert [s.resolved.name for s in kept.reused] == ["big", "fresh", "small-1", "small-2"], kept
    assert kept.rewritten == {
        "touched": "touched",
        "expired": "expired",
        "empty": "empty",
        "aged": "aged",
    }, kept
    merged = decide(sidecars, cutoff_ms=1_000, reuse_after_ms=reuse_after, small=10, max_small=2)
    assert [s.resolved.name for s in merged.reused] == ["big", "fresh"], merged
    assert {k for k, v in merged.rewritten.items() if v == "compacted"} == {"small-1", "small-2"}, merged


def _agree(want: TableState, got: TableState, label: str, table: Path) -> None:
    assert_states_equal(want, got, context=f"{table} v3: commits-only state vs {label}")


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-002")
def test_incremental_checkpoint_does_not_list_a_base_sidecar_without_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A base sidecar without rows (the one empty sidecar of an empty table's checkpoint, or Spark's
    schema-only file of an empty partition) is not listed again: with no other base sidecar, the
    state is written in full, here one new empty sidecar, and the write succeeds.

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


class _DeleteAfterPublication:
    """Hooks that delete one sidecar when the first top-level file is published: a cleaner racing the
    writer between its check before publication and the publication."""

    def __init__(self, sidecar: Path) -> None:
        self.sidecar = sidecar
        self.deleted_at: list[str] = []

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        if point is PublicationPoint.TOP_LEVEL_PUBLISHED and not self.deleted_at:
            self.sidecar.unlink()
            self.deleted_at.append(point)

    def prepare(self, df: DataFrame) -> DataFrame:
        return df


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-005")
def test_a_reused_sidecar_gone_after_publication_means_a_full_checkpoint(
    spark: SparkSession, tmp_path: Path
) -> None:
    """16 files (A: two sidecars of 8), an append, then B (incremental) — and one of A's sidecars is
    deleted right after B publishes its top-level file. B's writer removes that top-level file and
    writes the checkpoint in full: one checkpoint of version 2 is left, it lists no sidecar of A,
    and it holds all 17 files.

    Spec: CKPT-INC-005
    "A writer that lists a sidecar file written for an earlier checkpoint MUST check, both before and
    after it publishes the top-level file, that the sidecar exists with the size its `sidecar` action
    records; if the check after publication fails, it MUST delete the top-level file it published
    before it reports success or writes `_last_checkpoint`."
    """
    table = write_log(
        tmp_path / "table",
        [
            [
                v2_protocol(),
                metadata(schema(schema_field("v", "long")), configuration={"delta.checkpointPolicy": "v2"}),
            ],
            [commit_info(), *[add(f"f-{i:02d}.parquet", size=100 + i) for i in range(16)]],
            [commit_info(), add("new-1.parquet", size=900)],
        ],
    )
    a = _write(table, 1, NOW_A, spark, per_sidecar=8)
    victim = sorted(s.base_name for s in a.sidecars)[0]
    hooks = _DeleteAfterPublication(log_dir(table) / "_sidecars" / victim)
    b = _write(table, 2, NOW_A, spark, per_sidecar=8, hooks=hooks)
    assert hooks.deleted_at, f"{table}: the hook never deleted {victim}"
    tops = sorted(p.name for p in log_dir(table).glob("00000000000000000002.checkpoint.*"))
    assert tops == [b.top_level[0].name], (
        f"{table}: version 2's top-level files {tops}, B wrote {b.top_level}"
    )
    listed = {(s.base_name, s.kept_existing) for s in b.sidecars}
    assert not any(kept for _, kept in listed) and not {n for n, _ in listed} & {
        s.base_name for s in a.sidecars
    }, f"{table}: B lists {sorted(listed)}; A's sidecars are {sorted(s.base_name for s in a.sidecars)}"
    adds = sorted(
        r["add"]["path"] for s in b.sidecars for r in rows_of(log_dir(table) / s.name) if "add" in r
    )
    assert len(adds) == 17 and len(set(adds)) == 17, f"{table}: B's sidecars hold the adds {adds}"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-006")
def test_a_base_sidecar_whose_tags_disagree_with_its_footer_is_not_listed_again(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The counts a base ``sidecar`` action's tags record are checked against the file's Parquet footer
    before the sidecar is listed again: each of A's sidecars agrees with its own tags, and disagrees
    when one count or the oldest tombstone is off by one. With one of A's tags raised by one in its
    top-level file, B (after an append) lists none of A's sidecars and counts the state right.

    Spec: CKPT-INC-006
    "A writer that records in a `sidecar` action's `tags` how many `add` and `remove` actions the
    sidecar file holds, or the earliest `deletionTimestamp` of its `remove` actions (0 for a `remove`
    without one), MUST record the values the file holds, and a writer that lists the sidecar again
    MUST list it with the same values."
    """
    table_schema = schema(schema_field("v", "long"))
    table = write_log(
        tmp_path / "table",
        [
            [v2_protocol(), metadata(table_schema, configuration={"delta.checkpointPolicy": "v2"})],
            [
                commit_info(),
                *[add(f"f-{i:02d}.parquet", size=100 + i) for i in range(15)],
                remove("gone.parquet", deletion_timestamp=NOW_A - 1000),
            ],
        ],
    )
    a = _write(table, 1, NOW_A, spark, per_sidecar=8)
    top = log_dir(table) / a.top_level[0].name
    lines = top.read_text(encoding="utf-8").splitlines()
    actions = [json.loads(line) for line in lines]
    recorded = [
        _recorded(
            ResolvedSidecar(
                x["sidecar"], Location.parse(str(log_dir(table) / "_sidecars" / x["sidecar"]["path"]))
            )
        )
        for x in actions
        if "sidecar" in x
    ]
    assert len(recorded) == 2 and all(r is not None for r in recorded), f"{top}: {recorded}"
    storage = LocalStorage()
    for r in recorded:
        assert r is not None
        assert _footer_agrees(storage, r), f"{r.resolved.path}: footer disagrees with its own tags {r}"
        for wrong in (
            replace(r, rows=r.rows + 1, adds=r.adds + 1),
            replace(r, oldest_tombstone=None if r.oldest_tombstone else NOW_A),
        ):
            assert not _footer_agrees(storage, wrong), f"{r.resolved.path}: footer agrees with {wrong}"

    first = next(i for i, x in enumerate(actions) if "sidecar" in x)
    tags = actions[first]["sidecar"]["tags"]
    tags[ADDS_TAG] = str(int(tags[ADDS_TAG]) + 1)
    top.write_text("".join(json.dumps(x) + "\n" for x in actions), encoding="utf-8")
    write_commit(table, 2, [commit_info(), add("new-1.parquet", size=900)])
    b = _write(table, 2, NOW_A, spark, per_sidecar=8)
    reused = [s.base_name for s in b.sidecars if s.kept_existing]
    hint = json.loads((log_dir(table) / "_last_checkpoint").read_text(encoding="utf-8"))
    assert not reused and b.num_add_files == hint["numOfAddFiles"] == 16, (
        f"{table}: B reused {reused}; counts {b.num_add_files} adds, _last_checkpoint {hint} (want none, 16)"
    )


class _SettingsAtStaging:
    """Hooks that record, each time the writer stages a file set, the session's settings of the keys
    :data:`~reference_impl.spark.session.SMALL_LOG_CONF` names that the session did not start with."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.seen: list[dict[str, str | None]] = []

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        return None

    def prepare(self, df: DataFrame) -> DataFrame:
        self.seen.append(_sized_settings(self.spark))
        return df


def _sized_settings(spark: SparkSession) -> dict[str, str | None]:
    started_with = spark.sparkContext.getConf()
    return {k: spark.conf.get(k, None) for k in SMALL_LOG_CONF if not started_with.contains(k)}


@pytest.mark.spark
def test_spark_settings_follow_the_commits_after_the_base_not_the_whole_replay(
    sized: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spark's SQL settings of an incremental write (``size_queries``, c5557e2) follow the bytes its
    queries read — the commits after the base — not the whole replay's; the small-log threshold
    (``SMALL_LOG_BYTES``) is set at the bytes of the one commit after the base instead of building a
    table of 8 MB, so the commits are a small log and the whole replay (with the base's files) a large
    one. A (16 files, a full write), then two incremental checkpoints sized by the default policy (rows
    counted by the write job): B after an append stages its sidecar with the small-log settings and
    lists A's sidecars again; C after a remove in every sidecar B lists (nothing can be listed again)
    falls back to a full write, which runs with the whole replay's settings, Spark's defaults. Both
    count the files their commits leave.
    """
    table_schema = schema(schema_field("v", "long"))
    table = write_log(
        tmp_path / "table",
        [
            [v2_protocol(), metadata(table_schema, configuration={"delta.checkpointPolicy": "v2"})],
            [commit_info(), *[add(f"f-{i:02d}.parquet", size=100 + i) for i in range(16)]],
        ],
    )
    size_queries(sized, SMALL_LOG_BYTES + 1)
    defaults = _sized_settings(sized)
    small = {k: SMALL_LOG_CONF[k] for k in defaults}
    assert small and small != defaults, f"Spark's defaults {defaults} are the small-log settings {small}"
    a = _write(table, 1, NOW_A, sized, per_sidecar=None)

    def step(
        version: int, actions: list[dict[str, Any]], label: str
    ) -> tuple[CheckpointResult, list[dict[str, str | None]], str]:
        """A commit of ``actions``, then an incremental checkpoint of it with the threshold at that
        commit's bytes: the commits after the base are a small log, the whole replay a large one."""
        write_commit(table, version, [commit_info(), *actions])
        size = (log_dir(table) / f"{version:020d}.json").stat().st_size
        monkeypatch.setattr(session, "SMALL_LOG_BYTES", size)
        hooks = _SettingsAtStaging(sized)
        capsys.readouterr()
        result = _write(
            table, version, NOW_A, sized, per_sidecar=None, hooks=hooks, progress=Progress(prefix=label)
        )
        return result, hooks.seen, capsys.readouterr().err

    b, b_seen, _ = step(2, [add("new-1.parquet", size=900)], "B")
    b_reused = {s.base_name for s in b.sidecars if s.kept_existing}
    assert b_seen == [small] and b_reused == {s.base_name for s in a.sidecars}, (
        f"{table}: B staged with {b_seen} (want {[small]}), listed {sorted(b_reused)} of A's {a.sidecars}"
    )
    victims = [next(iter(rows_of(log_dir(table) / s.name)))["add"]["path"] for s in b.sidecars]
    c, c_seen, c_err = step(3, [remove(p, deletion_timestamp=NOW_A - 1000) for p in victims], "C")
    assert "C] incremental: full write" in c_err and not any(s.kept_existing for s in c.sidecars), (
        f"{table}: C (removes {victims}) did not fall back to a full write: {c.sidecars}\n{c_err}"
    )
    assert c_seen == [defaults], f"{table}: C's full write staged with {c_seen} (want {[defaults]})"
    counts = [(r.num_add_files, r.num_remove_files) for r in (b, c)]
    want = [(17, 0), (17 - len(victims), len(victims))]
    assert counts == want, f"{table}: B and C count {counts}, want {want}"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-001")
def test_an_incremental_write_splits_its_change_by_size_only_not_by_cores(
    sized: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sized by the default policy, a full write adds sidecars to use the session's cores (at least
    ``MIN_ACTIONS_PER_CORE_SIDECAR`` actions each, set to 1 here so that a few files are enough); an
    incremental one writes the change of an append into as few sidecars as its size needs — one —
    and lists the base's again (each core sidecar would be a small one listed by the next checkpoints,
    and a sidecar task that starts a Python worker of its own).

    Spec: CKPT-INC-001
    "A writer MAY list in a V2 checkpoint a sidecar file that it or another writer wrote for an
    earlier checkpoint of the same table."
    """
    cores = sized.sparkContext.defaultParallelism
    assert cores >= 2, f"the test session has {cores} core(s): a full write would not split by cores either"
    monkeypatch.setattr(sizing, "MIN_ACTIONS_PER_CORE_SIDECAR", 1)
    table_schema = schema(schema_field("v", "long"))
    table = write_log(
        tmp_path / "table",
        [
            [v2_protocol(), metadata(table_schema, configuration={"delta.checkpointPolicy": "v2"})],
            [commit_info(), *[add(f"f-{i:02d}.parquet", size=100 + i) for i in range(16)]],
            [commit_info(), *[add(f"new-{i:02d}.parquet", size=500 + i) for i in range(24)]],
        ],
    )
    a = _write(table, 1, NOW_A, sized, per_sidecar=None)
    assert len(a.sidecars) == cores, (
        f"{table}: the full write A has {len(a.sidecars)} sidecar(s), want {cores}"
    )
    b, new = _step(table, 2, sized, per_sidecar=None)
    reused = {s.base_name for s in b.sidecars if s.kept_existing}
    assert reused == {s.base_name for s in a.sidecars} and len(new) == 1, (
        f"{table}: B lists {sorted(reused)} of A's {[s.base_name for s in a.sidecars]} again and "
        f"writes {sorted(new)} (want one sidecar for the 24 appended files)"
    )
    assert (b.num_add_files, b.num_remove_files) == (40, 0), (
        f"{table}: B counts {b.num_add_files} adds, {b.num_remove_files} removes (want 40, 0)"
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-001")
def test_an_incremental_write_of_a_few_files_writes_its_sidecar_on_the_driver(
    sized: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the driver writes a state's one sidecar (``task_files.on_driver``, at most ``DRIVER_ROWS``
    rows, set to 8 here) is judged for an incremental write by the rows it writes — at most one a file
    action of the commits after the base, counted by the search for touched files — not by an estimate
    from the whole log replayed (the base's sidecars: 40 files here) nor from the commits' bytes (3
    appended files with 3,000-character tags, which ``log_estimate`` takes for more than 8 actions).

    Spec: CKPT-INC-001
    "A writer MAY list in a V2 checkpoint a sidecar file that it or another writer wrote for an
    earlier checkpoint of the same table."
    """
    monkeypatch.setattr(task_files, "DRIVER_ROWS", 8)
    table_schema = schema(schema_field("v", "long"))
    table = write_log(
        tmp_path / "table",
        [
            [v2_protocol(), metadata(table_schema, configuration={"delta.checkpointPolicy": "v2"})],
            [commit_info(), *[add(f"f-{i:02d}.parquet", size=100 + i) for i in range(40)]],
            [commit_info(), *[add(f"new-{i}.parquet", tags={"pad": "x" * 3000}) for i in range(3)]],
        ],
    )
    appended = (log_dir(table) / f"{2:020d}.json").stat().st_size
    assert log_estimate(appended, 0)[0] > 8, (
        f"{table}: the append's {appended} bytes are estimated as 8 actions or fewer"
    )
    a = _write(table, 1, NOW_A, sized, per_sidecar=None)
    b, new = _step(table, 2, sized, per_sidecar=None)
    reused = {s.base_name for s in b.sidecars if s.kept_existing}
    assert reused == {s.base_name for s in a.sidecars} and len(new) == 1, (
        f"{table}: B lists {sorted(reused)} of A's {[s.base_name for s in a.sidecars]} again and writes {sorted(new)}"
    )
    assert "write sidecars (by the driver)" in b.timings, f"{table}: B's phases {sorted(b.timings)}"
    assert (b.num_add_files, b.num_remove_files) == (43, 0), (
        f"{table}: B counts {b.num_add_files} adds, {b.num_remove_files} removes (want 43, 0)"
    )
