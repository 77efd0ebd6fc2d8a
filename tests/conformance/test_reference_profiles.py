"""The reference adapter's ``v2-incremental`` writer profile really reuses sidecars (``conformance/adapters/reference.py``).

Spec: ``spec/checkpoints.md`` §12.1 Sidecar reuse (``CKPT-INC-001``); ``docs/incremental-v2-checkpoints.md``.

The conformance matrix shows that every reader reads incremental checkpoints as it reads full ones
(issue #12) through the ``reference:v2-incremental`` cross cases: the profile checkpoints the version
before the shape's, then the shape's version with ``--incremental``. Those cases test reuse only if
the second checkpoint lists sidecars of the first; a profile that fell back to a full write would
leave every cross test passing. The ``unpartitioned`` shape's last commit is an append, which
rewrites no sidecar of the base checkpoint, so each of them must be listed again, next to a new one.

The sidecar profiles put 2 file actions in a sidecar, more on a large state so that no checkpoint has
more than ``MAX_CHECKPOINT_FILES`` sidecars: sized from a count of the replayed state.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.adapter import MAX_CHECKPOINT_FILES
from conformance.adapters.reference import ReferenceImplementation
from conformance.tables.shapes import build_shape

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _listed_sidecars(log: Path, version: int) -> set[str]:
    """The sidecar paths the UUID-named JSON top-level file of ``version`` lists (exactly one such file)."""
    tops = sorted(log.glob(f"{version:020d}.checkpoint.*.json"))
    assert len(tops) == 1, f"{log}: top-level files of version {version}: {[p.name for p in tops]}"
    actions = [json.loads(line) for line in tops[0].read_text().splitlines() if line.strip()]
    return {str(a["sidecar"]["path"]) for a in actions if "sidecar" in a}


@pytest.mark.spark
@pytest.mark.requirement("CKPT-INC-001")
def test_v2_incremental_profile_lists_the_previous_checkpoints_sidecars_again(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Spec: CKPT-INC-001
    "A writer MAY list in a V2 checkpoint a sidecar file that it or another writer wrote for an earlier
    checkpoint of the same table."
    """
    shape = build_shape("unpartitioned", "v2", tmp_path / "unpartitioned")
    ReferenceImplementation().write_checkpoint(shape.path, profile="v2-incremental")
    log = shape.path / "_delta_log"
    base = _listed_sidecars(log, shape.version - 1)
    new = _listed_sidecars(log, shape.version)
    assert base and base < new, (
        f"{log}: the v2-incremental checkpoint of version {shape.version} lists sidecars {sorted(new)}; "
        f"expected every sidecar of the checkpoint of version {shape.version - 1} ({sorted(base)}) and a new one"
    )


@pytest.mark.spark
def test_a_sidecar_profile_on_the_10000_file_shape_writes_at_most_the_bounded_sidecars(
    spark: SparkSession, tmp_path: Path
) -> None:
    """``v2-json`` on the ``many-files`` shape (10,000 live files): more than one sidecar, at most
    ``MAX_CHECKPOINT_FILES`` (2 actions per sidecar would give 5,000)."""
    shape = build_shape("many-files", "v2", tmp_path / "many-files")
    ReferenceImplementation().write_checkpoint(shape.path, profile="v2-json", version=shape.version)
    listed = _listed_sidecars(shape.path / "_delta_log", shape.version)
    assert 1 < len(listed) <= MAX_CHECKPOINT_FILES, (
        f"{shape.path}: the v2-json checkpoint of version {shape.version} lists {len(listed)} sidecars"
    )
