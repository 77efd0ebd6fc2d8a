"""Sidecar collection after ``v2Checkpoint`` was dropped (spec §18.2, ``CKPT-CLEAN-021``, ``CKPT-CLEAN-023``).

The suite's cleanup case ``v2-dropped`` (:mod:`conformance.tables.cleanup_cases`): a UUID-named V2
checkpoint with a sidecar at 2, ``delta.checkpointPolicy = classic`` and a classic V1 checkpoint
at 4, the feature dropped at 5 as delta-spark's DROP FEATURE does (``checkpointProtection`` with
*P* = 5) with a classic V1 checkpoint there, commits up to 8; the cutoff commit is 5.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from conformance.decode.names import DELTA_LOG, SIDECAR_DIR
from conformance.tables.cleanup_cases import build_cleanup_case
from reference_impl.cleanup.cleaner import cleanup


@pytest.mark.spark
@pytest.mark.requirement("CKPT-CLEAN-021", "CKPT-CLEAN-023")
def test_sidecars_are_collected_after_v2_checkpoint_is_dropped(spark: SparkSession, tmp_path: Path) -> None:
    """The cleaner deletes all the history before *P* = 5 in one run — commits 0-4, the UUID-named
    checkpoint 2 and the classic one at 4 — and then the sidecar only 2 referenced, although
    the latest protocol no longer supports ``v2Checkpoint``; nothing else in ``_sidecars/`` was
    referenced, so the directory ends up empty.

    Spec: CKPT-CLEAN-021
    "A cleaner MUST NOT delete a commit or checkpoint file of a version less than *P* unless the same run
    deletes every commit and checkpoint file of a version less than *P*; …"
    Spec: CKPT-CLEAN-023
    "A cleaner SHOULD collect unreferenced files in `_delta_log/_sidecars/` (…) also when the latest
    protocol no longer supports `v2Checkpoint`."
    """
    case = build_cleanup_case("v2-dropped", tmp_path / "table")
    log_dir = case.path / DELTA_LOG
    sidecars = case.sidecars[2]
    assert sidecars, f"{log_dir}: the checkpoints {case.checkpoints} reference no sidecar"
    result = cleanup(case.path, now_ms=case.now_ms, spark=spark)
    where = f"{case.path} cleaned at {case.now_ms} ({result.status}: {result.message})"
    assert case.protected_before == 5, (
        f"{log_dir}: checkpointProtection P = {case.protected_before}, expected 5"
    )
    before_p = range(case.protected_before)
    kept = [f"{v:020d}.json" for v in before_p if (log_dir / f"{v:020d}.json").exists()]
    kept += [n for v in before_p for n in case.checkpoints.get(v, ()) if (log_dir / n).exists()]
    assert not kept, f"{where}: history before P = {case.protected_before} kept: {kept}"
    left = {f"{SIDECAR_DIR}/{p.name}" for p in (log_dir / SIDECAR_DIR).iterdir()}
    assert not left, (
        f"{where}: sidecars left in _sidecars/: {sorted(left)} (referenced only by 2: {sorted(sidecars)})"
    )
    assert all((log_dir / n).exists() for n in case.checkpoints[5]), f"{where}: checkpoint 5 is gone"
