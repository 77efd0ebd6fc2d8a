"""Sidecar count: delta-spark's 50,000-action cap, a byte cap, one sidecar per core, and the override.

:mod:`reference_impl.write.sizing` decides how many sidecars a V2 checkpoint gets; the rule itself
is a pure function (checked on its boundaries), as is the estimate of actions and bytes from the
log's file sizes that feeds it when the writer does not count the state first (:func:`log_estimate`);
one real write on the test session's two cores shows the writer uses them: a state of 12,000 adds
is split over two sidecars that together hold every add once (CKPT-SIDE-002: only file actions in
sidecars).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from conformance.tables.builder import (
    add,
    commit_info,
    metadata,
    schema,
    schema_field,
    v2_protocol,
    write_log,
)
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.sizing import (
    DELTA_SPARK_ACTIONS_PER_SIDECAR,
    MIN_ACTIONS_PER_CORE_SIDECAR,
    TARGET_SIDECAR_BYTES,
    log_estimate,
    sidecar_count,
)
from reference_impl.write.writer import write_checkpoint
from spec.vocabulary import CheckpointSpec
from tests.reference_impl.write.helpers import kind_of, rows_of
from tests.support.listings import log_dir

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("actions", "estimated_bytes", "cores", "override", "expected"),
    [
        (0, 0, 2, None, 1),  # an empty state still gets one (empty) sidecar
        (4_999, 2 * MIB, 8, None, 1),  # too small to split for the cores
        (12_000, 5 * MIB, 2, None, 2),  # one per core
        (12_000, 5 * MIB, 8, None, 2),  # ... but at least 5,000 actions each
        (1_000_000, 400 * MIB, 2, None, 20),  # delta-spark's cap: 50,000 actions each
        (100_000, 300 * MIB, 2, None, 5),  # wide stats: 64 MiB each
        (100_000, 300 * MIB, 2, 30_000, 4),  # the override wins over everything
        (10, 0, 8, 4, 3),
    ],
)
def test_sidecar_count(
    actions: int, estimated_bytes: int, cores: int, override: int | None, expected: int
) -> None:
    got = sidecar_count(actions, estimated_bytes, cores, override)
    assert got == expected, (
        f"{actions} actions, {estimated_bytes} bytes, {cores} cores, override {override}: "
        f"{got} sidecars, expected {expected} (caps: {DELTA_SPARK_ACTIONS_PER_SIDECAR} actions, "
        f"{TARGET_SIDECAR_BYTES} bytes, {MIN_ACTIONS_PER_CORE_SIDECAR} actions per core sidecar)"
    )


@pytest.mark.parametrize(
    ("commit_bytes", "checkpoint_bytes", "expected"),
    [
        (0, 0, (0, 0)),
        (255, 63, (0, 255 + 4 * 63)),  # below one action of either kind
        (451 * MIB, 0, (1_847_296, 451 * MIB)),  # 1M adds with stats (~450-byte lines): errs high
        (MIB, 115 * MIB, (4_096 + 1_884_160, MIB + 460 * MIB)),  # a checkpoint counts 4x its bytes
    ],
)
def test_log_estimate(commit_bytes: int, checkpoint_bytes: int, expected: tuple[int, int]) -> None:
    got = log_estimate(commit_bytes, checkpoint_bytes)
    assert got == expected, (
        f"{commit_bytes} commit bytes, {checkpoint_bytes} checkpoint bytes: (actions, bytes) {got}, expected {expected}"
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-SIDE-002")
def test_writer_uses_one_sidecar_per_core(spark: SparkSession, tmp_path: Path) -> None:
    """Spec: CKPT-SIDE-002
    "Every row of a sidecar file MUST hold an `add` action or a `remove` action."
    """
    files = 12_000
    table = write_log(
        tmp_path / "table",
        [
            [
                v2_protocol(),
                metadata(schema(schema_field("v", "long")), configuration={"delta.checkpointPolicy": "v2"}),
            ],
            # long file names (~260-byte lines): the log-size estimate sees >= 10,000 actions
            [commit_info(), *[add(f"part-{i:05d}-{i:0128x}-c000.snappy.parquet") for i in range(files)]],
        ],
    )
    cores = spark.sparkContext.defaultParallelism
    commit_bytes = sum(p.stat().st_size for p in log_dir(table).glob("*.json"))
    result = write_checkpoint(table, options=CheckpointOptions(spec=CheckpointSpec.V2), spark=spark)
    expected = sidecar_count(*log_estimate(commit_bytes, 0), cores, None)
    assert cores >= 2 and len(result.sidecars) == expected == 2, (
        f"{table}: {len(result.sidecars)} sidecars on {cores} cores for {files} adds, expected {expected}"
    )
    paths: Counter[str] = Counter()
    for sidecar in result.sidecars:
        rows = rows_of(log_dir(table) / sidecar.name)
        kinds = Counter(kind_of(row) for row in rows)
        assert set(kinds) == {"add"} and len(rows) >= MIN_ACTIONS_PER_CORE_SIDECAR, (
            f"{sidecar.name}: {dict(kinds)} rows; expected only adds, at least {MIN_ACTIONS_PER_CORE_SIDECAR}"
        )
        paths.update(row["add"]["path"] for row in rows)
    assert len(paths) == files and set(paths.values()) == {1}, (
        f"{table}: the sidecars hold {len(paths)} distinct adds (max {max(paths.values())} copies), expected {files} once each"
    )


@pytest.mark.spark
def test_no_sidecar_without_rows_when_the_first_partition_is_empty(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Ten adds whose paths all hash to the second of two sidecar partitions: one sidecar, not two.

    Spark's first write task creates a schema-only file even when its partition is empty; the
    writer must not publish it as a sidecar of a non-empty state (with ``--incremental`` such a file
    broke the next checkpoint's re-check of reused sidecars).
    """
    names = spark.range(400).select(F.format_string("f-%03d.parquet", "id").alias("p"))
    paths = [r["p"] for r in names.where(F.pmod(F.hash("p"), F.lit(2)) == 1).limit(10).collect()]
    table = write_log(
        tmp_path / "table",
        [
            [
                v2_protocol(),
                metadata(schema(schema_field("v", "long")), configuration={"delta.checkpointPolicy": "v2"}),
            ],
            [commit_info(), *[add(p) for p in paths]],
        ],
    )
    options = CheckpointOptions(spec=CheckpointSpec.V2, actions_per_sidecar=5)
    result = write_checkpoint(table, options=options, spark=spark)
    counts = {s.name: len(rows_of(log_dir(table) / s.name)) for s in result.sidecars}
    assert len(paths) == 10 and sorted(counts.values()) == [10], (
        f"{table}: sidecars and their row counts {counts}, expected one sidecar with the 10 adds"
    )
