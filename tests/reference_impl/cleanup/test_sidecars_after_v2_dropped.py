"""Sidecar collection after ``v2Checkpoint`` was dropped (spec §18.2, ``CKPT-CLEAN-023``).

A table with UUID-named V2 checkpoints and sidecars at 2 and 3 sets ``delta.checkpointPolicy = classic``
at 4 and drops the feature at 5 (a protocol without ``v2Checkpoint``), gets a classic V1 checkpoint at 5
and commits up to 8; the files of version ``v`` are dated as in the suite's cleanup cases, so the cutoff commit is 5.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from conformance.adapters.reference import ReferenceImplementation
from conformance.decode.checkpoint import checkpoint_names, decode_checkpoint
from conformance.decode.names import DELTA_LOG, LAST_CHECKPOINT, SIDECAR_DIR
from conformance.tables.builder import rows
from conformance.tables.cleanup_cases import RETENTION, stamp_ms
from conformance.tables.shapes import new_table
from reference_impl.cleanup.cleaner import cleanup


@pytest.mark.spark
@pytest.mark.requirement("CKPT-CLEAN-023")
def test_sidecars_are_collected_after_v2_checkpoint_is_dropped(spark: SparkSession, tmp_path: Path) -> None:
    """The cleaner deletes the expired UUID-named checkpoints 2 and 3 and then the sidecars only they
    referenced, although the latest protocol no longer supports ``v2Checkpoint``; nothing else in
    ``_sidecars/`` was referenced, so the directory ends up empty.

    Spec: CKPT-CLEAN-023
    "A cleaner SHOULD collect unreferenced files in `_delta_log/_sidecars/` (…) also when the latest
    protocol no longer supports `v2Checkpoint`."
    """
    table = tmp_path / "table"
    log_dir = table / DELTA_LOG
    writer = ReferenceImplementation()
    builder = new_table(table, "v2", config={"delta.logRetentionDuration": RETENTION})
    builder.append(rows(0, 2))
    builder.append(rows(2, 2))
    writer.write_checkpoint(table, profile="v2-json", version=2)
    builder.append(rows(4, 2))
    writer.write_checkpoint(table, profile="v2-json", version=3)
    builder.set_properties({"delta.checkpointPolicy": "classic"})
    dropped = {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}
    assert builder.commit([dropped], operation="DROP FEATURE") == 5, f"{table}: the drop is not version 5"
    writer.write_checkpoint(table, profile="v1", version=5)
    for i in range(3):
        builder.append(rows(6 + 2 * i, 2))
    assert builder.version == 8, f"{table}: built {builder.version} versions"
    uuid_checkpoints = {v: sorted(checkpoint_names(log_dir, v).values())[0] for v in (2, 3)}
    sidecars = {
        s.name
        for names in uuid_checkpoints.values()
        for s in decode_checkpoint(log_dir, list(names)).sidecars
    }
    assert sidecars, f"{log_dir}: the checkpoints {uuid_checkpoints} reference no sidecar"
    now = builder.clock.now_ms
    for file in log_dir.rglob("*"):
        head = file.name.split(".", 1)[0]
        version = 5 if file.name == LAST_CHECKPOINT else int(head) if head.isdigit() else None
        if file.is_file() and version is not None:
            ns = stamp_ms(version, now) * 1_000_000
            os.utime(file, ns=(ns, ns))
    result = cleanup(table, now_ms=now, spark=spark)
    left = {p.name for p in (log_dir / SIDECAR_DIR).iterdir()}
    where = f"{table} cleaned at {now} ({result.status}: {result.message})"
    gone = [n for names in uuid_checkpoints.values() for n in names if (log_dir / n).exists()]
    assert not gone, f"{where}: the expired UUID-named checkpoints remain: {gone}"
    assert not left & sidecars, f"{where}: sidecars of deleted checkpoints remain: {sorted(left & sidecars)}"
    assert (log_dir / "00000000000000000005.checkpoint.parquet").exists(), f"{where}: checkpoint 5 is gone"
