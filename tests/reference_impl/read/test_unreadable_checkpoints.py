"""Checkpoint files that exist but cannot be read: the reader falls back, or fails with one error naming the file.

The whole class (every kind of checkpoint file × every damage × what is left to fall back on) is in
``fixtures/`` (``fixtures/generator/cases_unreadable.py``) and is read by
``tests/fixtures/test_golden_tables.py``; these tests pin the two mechanisms behind it: a Hadoop
``.crc`` beside a checkpoint file is compared before the checkpoint is used, and a failure that only a
later Spark job meets is ``CHECKPOINT_CORRUPT`` naming the file, never ``INTERNAL_ERROR``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.tables.mutations import write_hadoop_checksum
from reference_impl.errors import CheckpointCorrupt
from reference_impl.log.actions import NON_FILE_COLUMNS
from reference_impl.log.naming import hadoop_checksum_name
from reference_impl.read.checkpoint import _collect_non_file, _spark_schema
from reference_impl.read.snapshot import read_snapshot
from reference_impl.spark.schemas import ACTION_STRUCTS, REMOVE
from tests.support import REPO_ROOT

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FIXTURES = REPO_ROOT / "fixtures"


def _copy(case: str, tmp_path: Path) -> Path:
    table = tmp_path / "table"
    shutil.copytree(FIXTURES / case / "table", table)
    return table


def _sidecar(table: Path) -> Path:
    (sidecar,) = sorted((table / "_delta_log" / "_sidecars").glob("[!.]*.parquet"))
    return sidecar


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-026", "CKPT-READ-012")
def test_a_stale_hadoop_checksum_makes_the_reader_fall_back(spark: SparkSession, tmp_path: Path) -> None:
    """A sidecar whose ``.crc`` was computed over other bytes: the reader uses the older checkpoint; with the
    ``.crc`` gone, or rewritten over the file's own bytes, it uses the newer one — the same state each time.

    Spec: CKPT-READ-026
    > A reader MUST either ignore a Hadoop checksum file `.<name>.crc` beside a checkpoint file, or, when
    > the file's bytes do not match it, treat that checkpoint as unreadable.
    """
    table = _copy("valid/unreadable_sidecar_stalecrc_to_older", tmp_path)
    sidecar = _sidecar(table)
    checksum = sidecar.parent / hadoop_checksum_name(sidecar.name)
    assert checksum.is_file(), f"{checksum}: the fixture has no stale checksum file"
    stale = read_snapshot(spark, table)
    fallen_back = stale.table_state()
    assert stale.checkpoint is not None and stale.checkpoint.instance.version == 2, (
        f"{table}: stale {checksum.name} should make the reader use the v2 checkpoint, source {stale.source()}"
    )
    assert len(stale.segment.fallback_from) == 1, f"{table}: skipped {stale.segment.fallback_from}"

    write_hadoop_checksum(sidecar, sidecar.read_bytes())  # now it matches: Hadoop reads it too
    matching = read_snapshot(spark, table)
    assert matching.checkpoint is not None and matching.checkpoint.instance.version == 4, (
        f"{table}: a matching {checksum.name} must not stop the v4 checkpoint, source {matching.source()}"
    )
    assert matching.table_state().comparable() == fallen_back.comparable(), f"{table}: states differ"

    checksum.unlink()
    plain = read_snapshot(spark, table)
    assert plain.checkpoint is not None and plain.checkpoint.instance.version == 4, (
        f"{table}: {plain.source()}"
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-013")
def test_a_failure_after_the_checkpoint_was_chosen_names_the_file(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A sidecar deleted after the snapshot was built: the job that reads it fails as ``CHECKPOINT_CORRUPT``
    naming the sidecar (not ``INTERNAL_ERROR``).

    Spec: CKPT-READ-013
    > A reader that does not or cannot fall back from an invalid or unreadable checkpoint MUST fail with
    > the error code of the problem, and with `CHECKPOINT_CORRUPT` when a checkpoint file cannot be parsed.
    """
    table = _copy("valid/v2_uuid_json_sidecars", tmp_path)
    snapshot = read_snapshot(spark, table, version=3)
    assert snapshot.checkpoint is not None and snapshot.checkpoint.sidecars, f"{table}: {snapshot.source()}"
    gone = snapshot.checkpoint.sidecars[0].path
    (table / "_delta_log" / "_sidecars" / gone.name).unlink()
    with pytest.raises(CheckpointCorrupt) as caught:
        snapshot.table_state()
    error = caught.value
    assert error.path is not None and error.path.endswith(gone.name), f"{table}: the error names {error.path}"
    assert error.rule == "CKPT-READ-013", f"{table}: {error}"
    assert str(error).startswith("CHECKPOINT_CORRUPT: "), f"{table}: {error}"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-026")
def test_a_stale_checksum_met_after_the_checkpoint_was_chosen_is_a_corrupt_file(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A part of a multi-part checkpoint whose ``.crc`` goes stale after the snapshot was built: Spark's
    ``file:`` read of the part fails with Hadoop's ``ChecksumException`` (a ``java.io.IOException``),
    and the reader reports ``CHECKPOINT_CORRUPT`` naming the part — not ``STORAGE_ERROR``, as the
    writer's publisher reports the same exception for a kept file (22a1057): for a reader the rule
    below fixes it.

    Spec: CKPT-READ-026
    > … a reader that reads the file through a file system that verifies such checksum files MUST NOT
    > let the mismatch surface after it has chosen the checkpoint as anything but `CHECKPOINT_CORRUPT`
    > naming the file.
    """
    table = _copy("valid/multipart_2", tmp_path)
    snapshot = read_snapshot(spark, table)
    assert snapshot.checkpoint is not None and len(snapshot.checkpoint.instance.files) == 2, (
        f"{table}: expected the 2-part checkpoint, source {snapshot.source()}"
    )
    part = table / "_delta_log" / snapshot.checkpoint.instance.files[0].name
    write_hadoop_checksum(part, bytes(part.stat().st_size))  # over zeros, not the part's bytes
    with pytest.raises(CheckpointCorrupt) as caught:
        snapshot.table_state()
    error = caught.value
    assert error.path is not None and error.path.endswith(part.name), f"{table}: the error names {error.path}"
    assert str(error).startswith("CHECKPOINT_CORRUPT: ") and "ChecksumException" in str(error.__cause__), (
        f"{table}: {error} (cause {error.__cause__!r:.300})"
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-013")
def test_no_observed_metrics_is_not_a_corrupt_checkpoint(spark: SparkSession) -> None:
    """Top-level rows that are all file actions with a non-null ``add``: the optimizer proves the filter
    for non-file rows false and drops the observed count with it, so Spark reports no metrics — the
    non-file rows (none) and the file-action count (3) still come back; it was ``CHECKPOINT_CORRUPT``
    (``Observation.get`` raised inside the read's error mapping), which also makes a reader fall back.

    Spec: CKPT-READ-013
    > A reader that does not or cannot fall back from an invalid or unreadable checkpoint MUST fail with
    > the error code of the problem, and with `CHECKPOINT_CORRUPT` when a checkpoint file cannot be parsed.
    """
    from pyspark.sql import functions as F

    columns = [F.struct(F.lit("p").alias("path")).alias("add"), F.lit(None).cast(REMOVE).alias("remove")]
    columns += [F.lit(None).cast(ACTION_STRUCTS[c]).alias(c) for c in NON_FILE_COLUMNS]
    top = spark.range(3).select(*columns)
    assert _collect_non_file(top) == ([], 3), "three file actions, no non-file action"


#: A Spark-schema footer entry nested deeper than Python's recursion limit (json.loads raises RecursionError).
_TOO_DEEP = b'{"type":"struct","fields":[{"name":"a","nullable":true,"metadata":{},"type":' + (
    b'{"type":"array","containsNull":true,"elementType":' * 5_000 + b'"long"' + b"}" * 5_000 + b"}]}"
)


@pytest.mark.parametrize(
    "written",
    [b"not json", b"[1]", b'{"fields": 5}', _TOO_DEEP],
    ids=["not-json", "not-an-object", "not-a-field-list", "nested-too-deep"],
)
def test_a_footer_schema_the_reader_cannot_use_is_left_to_spark(written: bytes) -> None:
    """A Parquet footer's Spark schema (``org.apache.spark.sql.parquet.row.metadata``, 5d75b0b) that is not
    a usable schema gives None, so the file is read with Spark's own inference (which then converts the
    Parquet schema, as ``ParquetFileFormat.deserializeSchemaString`` falls back on any failure) — never an
    exception out of the reader (``RecursionError`` was one: ``INTERNAL_ERROR`` and no fallback)."""
    assert _spark_schema(written) is None, f"footer schema {written[:60]!r}…: not None"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-012")
@pytest.mark.parametrize("spark_schema", [True, False], ids=["spark-footer", "no-spark-footer"])
def test_a_sidecar_whose_add_is_no_struct_makes_the_replay_fall_back(
    spark: SparkSession, tmp_path: Path, spark_schema: bool
) -> None:
    """A sidecar whose ``add`` column is a string, not a struct, is refused while the replay chooses
    its checkpoint (the older one is used), although the scan of the sidecars is planned only when
    their file actions are first used (issue #12): its column types are checked from the footer's
    Spark schema, or from Spark's inference when the footer has none.

    Spec: CKPT-READ-012
    > When the checkpoint it would use is invalid or unreadable, a reader SHOULD fall back to the
    > newest older complete checkpoint, or to the commits from version 0, from which a gap-free chain
    > of commits reaches the requested version.
    """
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = _copy("valid/unreadable_sidecar_stalecrc_to_older", tmp_path)
    log = table / "_delta_log"
    sidecar = _sidecar(table)
    (sidecar.parent / hadoop_checksum_name(sidecar.name)).unlink()  # the fixture's stale checksum
    (log / "_last_checkpoint").unlink()
    intact = read_snapshot(spark, table)
    assert intact.checkpoint is not None and intact.checkpoint.instance.version == 4, (
        f"{table}: the intact sidecar must be used, source {intact.source()}"
    )
    assert "file_actions" not in vars(intact) and "file_actions" not in vars(intact.checkpoint), (
        f"{table}: the replay planned the scan of {sidecar.name} before its file actions were used"
    )
    expected = intact.table_state().comparable()

    footer = (
        {
            b"org.apache.spark.sql.parquet.row.metadata": b'{"type":"struct","fields":[{"name":"add",'
            b'"type":"string","nullable":true,"metadata":{}}]}'
        }
        if spark_schema
        else None
    )
    pq.write_table(pa.table({"add": ["not a struct"]}).replace_schema_metadata(footer), sidecar)
    (top,) = log.glob("00000000000000000004.checkpoint.*.json")
    lines = [json.loads(line) for line in top.read_text().splitlines()]
    for line in lines:
        if "sidecar" in line:
            line["sidecar"]["sizeInBytes"] = sidecar.stat().st_size
    top.write_text("".join(json.dumps(line) + "\n" for line in lines))
    damaged = read_snapshot(spark, table)
    assert damaged.checkpoint is not None and damaged.checkpoint.instance.version == 2, (
        f"{table}: a sidecar whose add is a string must make the reader use the v2 checkpoint, "
        f"source {damaged.source()}"
    )
    assert damaged.segment.fallback_from == (top.name,), f"{table}: skipped {damaged.segment.fallback_from}"
    assert damaged.table_state().comparable() == expected, (
        f"{table}: the fallen-back state differs from the intact table's"
    )
