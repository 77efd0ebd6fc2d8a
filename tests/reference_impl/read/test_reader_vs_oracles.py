"""The reference reader against the real thing: delta-spark's own snapshot and deltalake's.

For every table shape (built by delta-spark itself or by deltalake, see :mod:`conformance.tables.real_writers`)
the commits before the newest checkpoint are deleted — the one *at* the checkpoint version stays —
so the state can only come from the checkpoint plus the commits after it. Our ``TableState`` must
then equal delta-spark's field by field (files with all their fields, metadata, protocol, txns,
domain metadata, tombstones) and deltalake's on every field deltalake exposes
(``conformance.adapters.deltalake`` documents which it does not). Time travel, the choice between a
UUID-named checkpoint and its compatibility copy, and tombstone expiry with an explicit clock are
checked the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from conformance.adapters.deltalake import deltalake_row_count, deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_spark import delta_spark_state
from conformance.tables.real_writers import DELTA_SPARK_BUILDERS, DELTALAKE_BUILDERS, BuiltTable
from reference_impl.read.snapshot import read_snapshot
from spec.table_state import TableState
from tests.reference_impl.read.helpers import (
    checkpoint_version_of,
    delta_spark_state_at,
    expected_rows,
    log_dir,
    prune_commits_before,
)

CopyOf = Callable[[str], tuple[BuiltTable, Path]]
HOUR_MS = 3_600_000


def _has_dv(s: TableState) -> bool:
    return any("deletionVector" in f for f in s.files) and any("deletionVector" in t for t in s.tombstones)


#: What each shape must visibly contain, so a builder that silently lost its feature fails here.
FEATURE_PRESENT: dict[str, tuple[str, Callable[[TableState], bool]]] = {
    "v1-classic": ("5 live files", lambda s: len(s.files) == 5),
    "multi-part": ("8 live files", lambda s: len(s.files) == 8),
    "v2-json": ("v2Checkpoint feature", lambda s: "v2Checkpoint" in s.protocol.get("readerFeatures", [])),
    "v2-parquet": ("v2Checkpoint feature", lambda s: "v2Checkpoint" in s.protocol.get("readerFeatures", [])),
    "v2-compat": ("v2Checkpoint feature", lambda s: "v2Checkpoint" in s.protocol.get("readerFeatures", [])),
    "deletion-vectors": ("live files and tombstones with deletion vectors", _has_dv),
    "partitioned": (
        "a null partition and tombstones",
        lambda s: any(f["partitionValues"].get("part") is None for f in s.files) and bool(s.tombstones),
    ),
    "txn": (
        "txns app-a=2, app-b=8",
        lambda s: {t["appId"]: t["version"] for t in s.txns} == {"app-a": 2, "app-b": 8},
    ),
    "domain-metadata": (
        "delta.clustering and delta.rowTracking domains, row ids",
        lambda s: (
            {d["domain"] for d in s.domain_metadata} >= {"delta.clustering", "delta.rowTracking"}
            and all("baseRowId" in f for f in s.files)
        ),
    ),
    "removes": ("3 tombstones", lambda s: len(s.tombstones) == 3),
    "deltalake-plain": ("txn dl-app=3", lambda s: [t["version"] for t in s.txns] == [3]),
    "deltalake-v2": (
        "v2Checkpoint feature",
        lambda s: "v2Checkpoint" in s.protocol.get("readerFeatures", []),
    ),
}
SHAPES = [*DELTA_SPARK_BUILDERS, *DELTALAKE_BUILDERS]
#: Shapes whose newest checkpoint follows the V2 spec (deltalake-v2: classic-named, ``checkpointMetadata`` row).
V2_SPEC = {"v2-json", "v2-parquet", "v2-compat", "domain-metadata", "deltalake-v2"}


def compare_with_oracles(
    spark: SparkSession, table: Path, built: BuiltTable, ours: TableState, version: int | None = None
) -> TableState:
    """Assert ours == delta-spark's and ours == deltalake's (on what deltalake has); return delta-spark's."""
    label = f"{table} ({built.name}) v{ours.version}"
    theirs = delta_spark_state(spark, str(table), version)
    assert_states_equal(ours, theirs, context=f"{label}: reference reader (expected) vs delta-spark (actual)")
    rust = deltalake_state(table, version, txn_app_ids=built.txn_app_ids)
    assert_states_equal(
        ours,
        rust,
        context=f"{label}: reference reader (expected) vs deltalake (actual)",
        ignore=unavailable_fields(rust),
    )
    rows = deltalake_row_count(table, version)
    assert rows == expected_rows(ours), (
        f"{label}: deltalake counts {rows} rows, the state's stats say {expected_rows(ours)}"
    )
    return theirs


def assert_same_checkpoint(ours: TableState, theirs: TableState, table: Path) -> None:
    """Both readers built the state from the same checkpoint files."""
    mine = ours.source["checkpoint"]
    other = theirs.source["checkpoint"]
    mine_desc = None if mine is None else {"version": mine["version"], "files": sorted(mine["files"])}
    assert mine_desc == other, f"{table}: we used checkpoint {mine_desc}, delta-spark used {other}"


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-READ-001", "CKPT-V2-007", "CKPT-PART-007")
@pytest.mark.parametrize("shape", SHAPES)
def test_checkpoint_plus_tail_matches_oracles(
    shape: str, delta_spark: SparkSession, deltalake: ModuleType, copy_of: CopyOf
) -> None:
    """With the commits before the checkpoint deleted, our state equals delta-spark's and deltalake's.

    (delta-spark wrote the checkpoint from the full log; its own snapshot of the same remaining files,
    and deltalake's, are the oracles.)

    Spec: CKPT-READ-001
    "Whenever the log contains a gap-free sequence of commits from version 0 through version `v`,
    the table state a reader reports for `v` MUST equal the state obtained by reconciling the
    actions of those commits …"
    Spec: CKPT-V2-007
    "A reader MUST read UUID-named checkpoints with a JSON top-level file and with a Parquet
    top-level file."
    Spec: CKPT-PART-007
    "A reader MUST read a complete multi-part checkpoint as one V1 checkpoint whose actions are the
    union of the rows of all its parts."
    """
    built, table = copy_of(shape)
    deleted = prune_commits_before(table, built.checkpoint_version)
    assert deleted, f"{table}: nothing before checkpoint {built.checkpoint_version} to delete"
    snapshot = read_snapshot(delta_spark, table)
    ours = snapshot.table_state()
    assert ours.version == built.latest_version, (
        f"{table}: version {ours.version}, expected {built.latest_version}"
    )
    assert checkpoint_version_of(ours) == built.checkpoint_version, f"{table}: source {ours.source}"
    kind, spec = ours.source["checkpoint"]["kind"], ours.source["checkpoint"]["spec"]
    assert kind == built.checkpoint_kind, (
        f"{table}: used a {kind} checkpoint, the writer wrote {built.checkpoint_kind}"
    )
    assert spec == ("v2" if shape in V2_SPEC else "v1"), f"{table}: read checkpoint as {spec}"
    what, present = FEATURE_PRESENT[shape]
    assert present(ours), f"{table} ({shape}) should have {what}; state: {ours.to_json_text()[:2000]}"
    source = ours.source
    assert source["checkpoint"]["files"] == list(built.checkpoint_files), f"{table}: {source}"
    tail = (
        [built.checkpoint_version + 1, built.latest_version]
        if built.latest_version > built.checkpoint_version
        else []
    )
    assert source["commits"] == tail, f"{table}: {source}"
    assert (source["foundBy"], source["hint"], source["fallbackFrom"]) == ("hint", "used", []), (
        f"{table}: {source}"
    )
    theirs = compare_with_oracles(delta_spark, table, built, ours)
    assert_same_checkpoint(ours, theirs, table)


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
@pytest.mark.parametrize(("version", "checkpoint"), [(2, 2), (1, None)])
def test_time_travel_v1(
    version: int, checkpoint: int | None, delta_spark: SparkSession, deltalake: ModuleType, copy_of: CopyOf
) -> None:
    """Time travel on the classic table (checkpoints at 2 and 4): version 2 is checkpoint 2 alone (no commit
    replayed), version 1 has no checkpoint at or below it and comes from commits 0..1."""
    built, table = copy_of("v1-classic")
    ours = read_snapshot(delta_spark, table, version=version).table_state()
    assert ours.version == version
    assert checkpoint_version_of(ours) == checkpoint, f"{table} v{version}: source {ours.source}"
    assert ours.source["hint"] == "not-applicable", ours.source
    theirs = compare_with_oracles(delta_spark, table, built, ours, version)
    assert_same_checkpoint(ours, theirs, table)


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
def test_time_travel_v2_to_older_checkpoint(
    delta_spark: SparkSession, deltalake: ModuleType, copy_of: CopyOf
) -> None:
    """V2 JSON table with commits before the older checkpoint (2) deleted: version 3 = checkpoint 2 + commit 3."""
    built, table = copy_of("v2-json")
    assert built.older_checkpoint_version == 2, built
    prune_commits_before(table, 2)
    ours = read_snapshot(delta_spark, table, version=3).table_state()
    assert (ours.version, checkpoint_version_of(ours)) == (3, 2), ours.source
    assert ours.source["checkpoint"]["kind"] == "uuid" and len(ours.source["checkpoint"]["sidecars"]) >= 2
    theirs = compare_with_oracles(delta_spark, table, built, ours, 3)
    assert_same_checkpoint(ours, theirs, table)


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-READ-004", "CKPT-COMPAT-005", "CKPT-V2-009")
def test_uuid_named_preferred_over_compat_copy(
    delta_spark: SparkSession, deltalake: ModuleType, copy_of: CopyOf
) -> None:
    """At the version with a UUID-named checkpoint and delta-spark's compatibility copy, the UUID one is used;
    without it, the compatibility copy (classic-named, V2 content, same sidecars) gives the same state.

    Spec: CKPT-READ-004
    "… among complete checkpoints of that same version SHOULD prefer a UUID-named one … over a
    multi-part one … over a classic-named one."
    Spec: CKPT-COMPAT-005
    "A reader MUST report the same table state from a compatibility checkpoint as from the
    UUID-named checkpoint of the same version."
    Spec: CKPT-V2-009
    "A reader MUST read a classic-named checkpoint that contains a `checkpointMetadata` action as a
    V2 checkpoint, including the file actions of every sidecar it references."
    """
    built, table = copy_of("v2-compat")
    compat_version = int(built.notes["compat_version"])
    files = list(built.notes["compat_files"])
    uuid_file = next(f for f in files if not f.endswith(".checkpoint.parquet"))
    compat_file = next(f for f in files if f.endswith(".checkpoint.parquet"))
    version = compat_version + 2  # before the newer checkpoint
    ours = read_snapshot(delta_spark, table, version=version).table_state()
    assert ours.source["checkpoint"]["files"] == [uuid_file], (
        f"{table} v{version}: {ours.source['checkpoint']}"
    )
    theirs = compare_with_oracles(delta_spark, table, built, ours, version)
    assert_same_checkpoint(ours, theirs, table)

    (log_dir(table) / uuid_file).unlink()
    from_compat = read_snapshot(delta_spark, table, version=version).table_state()
    cp = from_compat.source["checkpoint"]
    assert cp["files"] == [compat_file] and cp["spec"] == "v2", f"{table}: {cp}"
    assert cp["sidecars"] == ours.source["checkpoint"]["sidecars"], (
        "the copy must reference the same sidecars"
    )
    assert_states_equal(
        ours, from_compat, context=f"{table} v{version}: UUID-named vs compatibility checkpoint"
    )
    theirs_compat = compare_with_oracles(delta_spark, table, built, from_compat, version)
    assert_same_checkpoint(from_compat, theirs_compat, table)


def _remove_rows(checkpoint: Path) -> int:
    column = pq.read_table(checkpoint, columns=["remove"]).column("remove")
    return int(len(column) - column.null_count)


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.requirement("CKPT-READ-001")
@pytest.mark.parametrize(("offset_ms", "tombstones"), [(0, 3), (2 * HOUR_MS, 0)])
def test_tombstone_expiry_with_a_clock(
    offset_ms: int, tombstones: int, delta_spark: SparkSession, copy_of: CopyOf
) -> None:
    """Tombstones (``deletedFileRetentionDuration`` = 1 hour) are kept now and dropped 2 hours later — by
    both readers, with the same explicit clock. The checkpoint really holds them: the *reader* expires them.

    Spec: CKPT-READ-001
    "… the table state a reader reports for `v` MUST equal the state obtained by reconciling the
    actions of those commits, apart from expired tombstones and expired transaction identifiers."
    """
    built, table = copy_of("removes")
    prune_commits_before(table, built.checkpoint_version)
    checkpoint = log_dir(table) / built.checkpoint_files[0]
    assert _remove_rows(checkpoint) == 2, f"{checkpoint} should hold the 2 tombstones of version 2"
    now = int(time.time() * 1000) + offset_ms
    ours = read_snapshot(delta_spark, table, now_ms=now).table_state()
    assert len(ours.tombstones) == tombstones, f"{table} at now+{offset_ms}ms: {ours.tombstones}"
    theirs = delta_spark_state_at(delta_spark, table, now)
    assert_states_equal(
        ours, theirs, context=f"{table} clock now+{offset_ms}ms: reference reader vs delta-spark"
    )
