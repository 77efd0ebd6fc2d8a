"""The reader's Spark reconcile equals a small pure-Python model of PROTOCOL's Action Reconciliation.

Spec: ``spec/checkpoints.md`` §6 Checkpoint content (``CKPT-READ-001``: the state of version ``v`` is
the reconciliation of commits ``0..v``; ``CKPT-CONTENT-003``: identity is ``(path, DV unique id)``;
tombstone expiry as ``CKPT-CONTENT-006`` states it), whichever checkpoint the log holds.

Hypothesis draws histories of commits that add, remove and re-add a few logical files, with and
without deletion vectors (a DV update removes ``(p, dv1)`` and adds ``(p, dv2)`` in one commit), with
tombstones on both sides of the retention cutoff, and optionally a checkpoint written by our writer
in the middle of the history. :func:`model_state` — written from the spec, not from the reader —
replays the same actions in order; the reader's live files and tombstones must equal it, including
*which* action won (every action carries a distinct ``size`` or ``deletionTimestamp``).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from conformance.tables.builder import add, metadata, protocol, remove, schema, schema_field
from reference_impl.log.naming import DELTA_LOG, commit_name
from reference_impl.read.snapshot import read_snapshot
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.writer import write_checkpoint
from spec.vocabulary import CheckpointSpec

NOW_MS = 1_800_000_000_000
WEEK_MS = 7 * 24 * 3600 * 1000
#: Deletion timestamps: two expired (one exactly at the cutoff: expired, since expiry is strict), two live.
TIMESTAMPS = (NOW_MS - 2 * WEEK_MS, NOW_MS - WEEK_MS, NOW_MS - WEEK_MS + 1, NOW_MS - 1000)
PATHS = ("a.parquet", "b.parquet", "day=1/c.parquet")
#: Deletion vectors: none, two UUID-stored ones, and one at an offset inside a shared file.
DVS: tuple[dict[str, Any] | None, ...] = (
    None,
    {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k", "sizeInBytes": 36, "cardinality": 2},
    {"storageType": "u", "pathOrInlineDv": "zz^-aqEH.-t@S}K{vb[*k", "sizeInBytes": 36, "cardinality": 3},
    {
        "storageType": "u",
        "pathOrInlineDv": "zz^-aqEH.-t@S}K{vb[*k",
        "offset": 7,
        "sizeInBytes": 36,
        "cardinality": 1,
    },
)


def dv_id(dv: dict[str, Any] | None) -> str | None:
    """PROTOCOL "Deletion Vector Descriptor": uniqueId = storageType + pathOrInlineDv [+ "@" + offset]."""
    if dv is None:
        return None
    base = f"{dv['storageType']}{dv['pathOrInlineDv']}"
    return f"{base}@{dv['offset']}" if dv.get("offset") is not None else base


@dataclass(frozen=True)
class Op:
    """One file action of a commit: ``kind`` on file ``path`` with deletion vector ``dv``."""

    kind: str  # "add" | "remove"
    path: int
    dv: int
    timestamp: int  # index into TIMESTAMPS (removes only)


ops = st.builds(
    Op,
    kind=st.sampled_from(("add", "remove")),
    path=st.integers(0, len(PATHS) - 1),
    dv=st.integers(0, len(DVS) - 1),
    timestamp=st.integers(0, len(TIMESTAMPS) - 1),
)


def _one_per_kind_and_identity(commit: list[Op]) -> list[Op]:
    """PROTOCOL: a version holds at most one action of each kind per logical file; keep the first."""
    seen: set[tuple[str, int, int]] = set()
    out = []
    for op in commit:
        if (op.kind, op.path, op.dv) not in seen:
            seen.add((op.kind, op.path, op.dv))
            out.append(op)
    return out


histories = st.lists(
    st.lists(ops, min_size=1, max_size=6).map(_one_per_kind_and_identity), min_size=1, max_size=7
)


def action_json(op: Op, serial: int) -> dict[str, Any]:
    """The action for ``op``; ``serial`` (unique in the history) tells the winner apart.

    Live tombstones get ``serial`` added to their timestamp; expired ones keep theirs (so the one at
    the cutoff stays exactly at it), since they are never reported.
    """
    dv = DVS[op.dv]
    if op.kind == "add":
        return add(PATHS[op.path], size=1000 + serial, deletion_vector=dv)
    stamp = TIMESTAMPS[op.timestamp]
    stamp += serial if stamp > NOW_MS - WEEK_MS else 0
    return remove(PATHS[op.path], deletion_timestamp=stamp, deletion_vector=dv)


def model_state(commits: list[list[dict[str, Any]]]) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """Replay in log order: the newest action per (path, DV unique id) wins; tombstones expire strictly."""
    newest: dict[tuple[str, str | None], dict[str, Any]] = {}
    for commit in commits:
        for action in commit:
            kind, body = next(iter(action.items()))
            newest[(body["path"], dv_id(body.get("deletionVector")))] = {"kind": kind, **body}
    cutoff = NOW_MS - WEEK_MS
    files = {(p, d, b["size"]) for (p, d), b in newest.items() if b["kind"] == "add"}
    tombstones = {
        (p, d, b["deletionTimestamp"])
        for (p, d), b in newest.items()
        if b["kind"] == "remove" and b["deletionTimestamp"] > cutoff
    }
    return files, tombstones


def _write_table(table: Path, commits: list[list[dict[str, Any]]]) -> None:
    log = table / DELTA_LOG
    log.mkdir(parents=True)
    head = [protocol(3, 7, reader_features=["deletionVectors"], writer_features=["deletionVectors"])]
    head.append(
        metadata(schema(schema_field("id", "long")), configuration={"delta.enableDeletionVectors": "true"})
    )
    for version, actions in enumerate([head, *commits]):
        text = "".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions)
        (log / commit_name(version)).write_text(text)


def _reader_state(spark: SparkSession, table: Path) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    state = read_snapshot(spark, table, now_ms=NOW_MS).table_state()
    files = {(f["path"], dv_id(f.get("deletionVector")), f["size"]) for f in state.files}
    tombstones = {
        (t["path"], dv_id(t.get("deletionVector")), t["deletionTimestamp"]) for t in state.tombstones
    }
    return files, tombstones


@pytest.mark.requirement("CKPT-READ-001", "CKPT-CONTENT-003")
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories, checkpoint_at=st.one_of(st.none(), st.integers(1, 7)))
def test_spark_reconcile_equals_the_model(
    spark: SparkSession, tmp_path: Path, history: list[list[Op]], checkpoint_at: int | None
) -> None:
    """Spec: CKPT-READ-001
    "the table state a reader reports for `v` MUST equal the state obtained by reconciling the
    actions of those commits, apart from expired tombstones … whichever checkpoints the log also
    contains."

    Spec: CKPT-CONTENT-003
    "two file actions as referring to the same logical file exactly when their paths have the same canonical form …
    and their deletion-vector unique ids are equal, two absent deletion vectors counting as equal."
    """
    table = tmp_path / "table"
    shutil.rmtree(table, ignore_errors=True)
    serial = iter(range(10_000))
    commits = [[action_json(op, next(serial)) for op in commit] for commit in history]
    _write_table(table, commits)
    if checkpoint_at is not None and checkpoint_at <= len(commits):
        write_checkpoint(
            table, checkpoint_at, CheckpointOptions(spec=CheckpointSpec.V1, now_ms=NOW_MS), spark=spark
        )
    want_files, want_tombstones = model_state(commits)
    got_files, got_tombstones = _reader_state(spark, table)
    assert got_files == want_files, (
        f"{table}: live files (path, dv id, size) {sorted(got_files, key=str)}, the model has "
        f"{sorted(want_files, key=str)} (checkpoint at {checkpoint_at})"
    )
    assert got_tombstones == want_tombstones, (
        f"{table}: tombstones (path, dv id, deletionTimestamp) {sorted(got_tombstones, key=str)}, the model "
        f"has {sorted(want_tombstones, key=str)} (checkpoint at {checkpoint_at})"
    )
