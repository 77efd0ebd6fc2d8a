"""Cross-reading: every checkpoint layout our writer produces is read back identically by delta-spark,
deltalake and our reader, with the commits before it deleted.

For each cell (writer option × table shape): record delta-spark's state of the table, write our
checkpoint, delete every commit before its version (keeping the one at it, which delta-spark
needs: spec D11), then read with delta-spark (its JVM snapshot, and the data through
``spark.read.format("delta")``), deltalake (``DeltaTable`` metadata, and the data through
``QueryBuilder``) and our reader. All must equal the state before, and delta-spark and our reader
must say they used exactly the top-level file(s) we wrote.

Covering design (the full 7 × 7 matrix would take ~15 minutes on the 2-core test machine):

* every option on the **richest shape**, ``rich`` (partitioned with a null partition, deletion
  vectors including a replaced one, row tracking with its ``domainMetadata``, ``txn`` of two apps,
  live tombstones);
* the options whose layout depends on the number of actions on **``files_10k``** (10,000 add
  actions, 10 tombstones): several sidecars, three non-trivial parts, and the default. The other
  options lay out those actions exactly as on ``rich`` (one file, or one per hash partition);
* the **default option on every shape**: on ``rich`` and ``files_10k`` with the ``v2Checkpoint``
  feature and ``delta.checkpointPolicy=v2`` (default = V2, UUID-named JSON, sidecars sized by
  :mod:`reference_impl.write.sizing` from the bytes of the log: one on ``rich``, one per core on ``files_10k``), on
  ``plain`` (unpartitioned, protocol 1/2) and ``empty`` (0 files after a DELETE) without it
  (default = V1 classic).

So each option meets partition values, deletion vectors, txn, domainMetadata and tombstones, every
action-count-dependent layout meets a 10,000-action state, and each shape is read back at least once. ``files_10k`` has no data files
and is read with log-level readers only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from pyspark.sql import SparkSession

from conformance.tables.real_writers import FILES_10K, FILES_10K_REMOVED
from reference_impl.log.naming import classic_checkpoint_name, parse_log_file_name, part_checkpoint_name
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.result import CheckpointResult
from reference_impl.write.sizing import log_estimate, sidecar_count
from reference_impl.write.writer import write_checkpoint
from spec.table_state import TableState
from tests.reference_impl.read.helpers import prune_commits_before
from tests.reference_impl.write.conftest import ShapeCache
from tests.reference_impl.write.helpers import assert_all_readers_see

#: Options by name. ``small`` is a per-shape actions-per-sidecar giving several sidecars.
OPTION_NAMES = (
    "default", "v1-classic", "v2-uuid-json-sidecars", "v2-uuid-parquet", "v2-classic-sidecars", "v2-inline",
    "multipart-3",
)  # fmt: skip
RICHEST = ("rich", "files_10k")
SMALL_SIDECAR = {"rich": 4, "files_10k": 3000}


def options(name: str, shape: str) -> CheckpointOptions:
    small = SMALL_SIDECAR.get(shape, 4)
    return {
        "default": CheckpointOptions(),
        "v1-classic": CheckpointOptions(spec="v1"),
        "v2-uuid-json-sidecars": CheckpointOptions(
            spec="v2", naming="uuid", top_level_format="json", actions_per_sidecar=small
        ),
        "v2-uuid-parquet": CheckpointOptions(
            spec="v2", naming="uuid", top_level_format="parquet", actions_per_sidecar=small
        ),
        "v2-classic-sidecars": CheckpointOptions(spec="v2", naming="classic", actions_per_sidecar=small),
        "v2-inline": CheckpointOptions(spec="v2", sidecars=False),
        "multipart-3": CheckpointOptions(spec="v1", parts=3),
    }[name]


@dataclass(frozen=True)
class Cell:
    option: str
    shape: str
    variant: str  # the table variant: "v2" (supports v2Checkpoint, policy v2) or "classic"

    def __str__(self) -> str:
        return f"{self.shape}-{self.variant}-{self.option}"


def _variant(option: str, shape: str) -> str:
    if option == "multipart-3":
        return "classic"  # multi-part is forbidden on v2Checkpoint tables (CKPT-FEAT-004)
    if option == "default":
        return "v2" if shape in RICHEST else "classic"
    return "v2"  # V2 options need the feature; V1 classic is also allowed there


COUNT_DEPENDENT = ("default", "v2-uuid-json-sidecars", "multipart-3")

CELLS = [
    Cell(o, s, _variant(o, s)) for s in RICHEST for o in OPTION_NAMES if s == "rich" or o in COUNT_DEPENDENT
] + [Cell("default", s, "classic") for s in ("plain", "empty")]


def _commit_bytes(table: Path) -> int:
    """Bytes of the table's commit files (``<20 digits>.json``)."""
    return sum(
        p.stat().st_size for p in (table / "_delta_log").iterdir() if re.fullmatch(r"\d{20}\.json", p.name)
    )


def _expected_layout(cell: Cell, before: TableState, result: CheckpointResult, cores: int) -> None:
    """The writer produced the layout the option asks for (else the cell would test something else).

    The default sidecar count is :func:`reference_impl.write.sizing.sidecar_count` on ``cores`` of
    the actions and bytes :func:`~reference_impl.write.sizing.log_estimate` derives from the commit
    files' sizes (these shapes have no checkpoint before ours, so the commits are all the writer replays).
    """
    v = result.version
    tops = [f.name for f in result.top_level]
    sidecars = result.sidecars
    file_actions = len(before.files) + len(before.tombstones)
    label = f"{cell}: wrote {tops} + {len(sidecars)} sidecar(s)"
    spec = (
        "v1"
        if cell.option in ("v1-classic", "multipart-3")
        or (cell.option == "default" and cell.variant == "classic")
        else "v2"
    )
    assert result.spec == spec, f"{label}: spec {result.spec}, expected {spec}"
    if cell.option == "multipart-3":
        assert tops == [part_checkpoint_name(v, i, 3) for i in (1, 2, 3)], label
    elif spec == "v1" or cell.option == "v2-classic-sidecars":
        assert tops == [classic_checkpoint_name(v)], label
    else:
        kind = parse_log_file_name(tops[0]).kind.value if len(tops) == 1 else None
        suffix = ".parquet" if cell.option == "v2-uuid-parquet" else ".json"
        assert kind == "uuid" and tops[0].endswith(suffix), f"{label}: expected one UUID-named {suffix} file"
    if spec == "v1" or cell.option == "v2-inline":
        assert not sidecars, label
    elif cell.option == "default":
        want = sidecar_count(*log_estimate(_commit_bytes(Path(result.table)), 0), cores, None)
        assert len(sidecars) == want, f"{label}: the default sizing on {cores} cores gives {want} sidecar(s)"
    else:
        # One sidecar per non-empty Spark hash partition: at most ceil(actions / per-sidecar).
        expected = math.ceil(file_actions / SMALL_SIDECAR[cell.shape])
        assert 2 <= len(sidecars) <= expected, (
            f"{label}: expected 2..{expected} sidecars for {file_actions} file actions"
        )
    assert result.num_add_files == len(before.files), (
        f"{label}: {result.num_add_files} adds, state has {len(before.files)}"
    )


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
@pytest.mark.requirement(
    "CKPT-CONTENT-001",
    "CKPT-WRITE-003",
    "CKPT-CONTENT-004",
    "CKPT-CONTENT-006",
    "CKPT-FEAT-008",
    "CKPT-PART-001",
)
@pytest.mark.parametrize("cell", CELLS, ids=str)
def test_checkpoint_read_back_by_every_reader(
    cell: Cell, delta_spark: SparkSession, deltalake: ModuleType, shapes: ShapeCache, tmp_path: Path
) -> None:
    """With the commits before our checkpoint deleted, delta-spark, deltalake and our reader see the state from before.

    Spec: CKPT-CONTENT-001
    "A checkpoint named for version `n` MUST describe exactly the table state obtained by
    reconciling the actions of all commits from version 0 through version `n`."
    Spec: CKPT-WRITE-003
    "Writing a checkpoint MUST NOT change the table state that a conforming reader reports for
    any version."

    The ``default`` cells also check the layout the writer picks by itself (``_expected_layout``):
    Spec: CKPT-FEAT-008
    "When `delta.checkpointPolicy` is `v2` and the protocol supports `v2Checkpoint`, a writer
    SHOULD write V2-spec checkpoints."
    Spec: CKPT-PART-001
    "A writer SHOULD NOT write multi-part checkpoints."
    """
    shape = shapes.get(cell.shape, cell.variant)
    before = shapes.state_before(shape)
    rows = shapes.rows_before(shape) if shape.has_data else None
    table = shapes.copy(shape, tmp_path / "table")
    result = write_checkpoint(table, options=options(cell.option, cell.shape), spark=delta_spark)
    assert result.version == shape.version, (
        f"{table}: checkpoint of version {result.version}, latest is {shape.version}"
    )
    _expected_layout(cell, before, result, delta_spark.sparkContext.defaultParallelism)
    deleted = prune_commits_before(table, result.version)
    assert deleted, f"{table}: no commit before version {result.version} to delete"
    assert_all_readers_see(
        delta_spark,
        table,
        before,
        checkpoint_files=[f.name for f in result.top_level],
        txn_app_ids=shape.txn_app_ids,
        rows=rows,
        context=str(cell),
    )


def _rich_features(s: TableState) -> list[str]:
    missing = []
    if not any(f["partitionValues"].get("part") is None for f in s.files):
        missing.append("a file in the null partition")
    if not any("deletionVector" in f for f in s.files):
        missing.append("a live file with a deletion vector")
    if not any("deletionVector" in t for t in s.tombstones):
        missing.append("a tombstone with a deletion vector (replaced DV)")
    if not any("deletionVector" not in t for t in s.tombstones):
        missing.append("a whole-file tombstone")
    if {t["appId"]: t["version"] for t in s.txns} != {"app-a": 2, "app-b": 7}:
        missing.append(f"txns app-a=2, app-b=7 (got {s.txns})")
    if "delta.rowTracking" not in {d["domain"] for d in s.domain_metadata}:
        missing.append("the delta.rowTracking domain")
    if not all("baseRowId" in f for f in s.files):
        missing.append("baseRowId on every file")
    return missing


FEATURES: dict[str, Callable[[TableState], list[str]]] = {
    "rich": _rich_features,
    "plain": lambda s: (
        [] if len(s.files) == 4 and not s.tombstones else [f"4 files, no tombstone (got {len(s.files)})"]
    ),
    "empty": lambda s: [] if not s.files and len(s.tombstones) == 2 else ["0 files and 2 tombstones"],
    "files_10k": lambda s: (
        []
        if (len(s.files), len(s.tombstones)) == (FILES_10K - FILES_10K_REMOVED, FILES_10K_REMOVED)
        else [f"{FILES_10K - FILES_10K_REMOVED} files and {FILES_10K_REMOVED} tombstones"]
    ),
}


@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.parametrize(("name", "variant"), [("rich", "classic"), ("rich", "v2"), ("plain", "classic"),
                                               ("empty", "classic"), ("files_10k", "v2")])  # fmt: skip
def test_shapes_hold_their_features(
    name: str, variant: str, delta_spark: SparkSession, shapes: ShapeCache
) -> None:
    """Each shape, as delta-spark reads it, really has what the cross-read matrix relies on (no silent loss)."""
    shape = shapes.get(name, variant)
    state = shapes.state_before(shape)
    missing = FEATURES[name](state)
    assert not missing, f"{shape.path} ({name}, {variant}) lacks: {missing}"
    has_v2 = "v2Checkpoint" in state.protocol.get("readerFeatures", [])
    assert has_v2 == (variant == "v2"), f"{shape.path}: protocol {state.protocol}, variant {variant}"
