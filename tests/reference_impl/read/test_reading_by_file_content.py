"""The reader trusts each checkpoint file's own content: its footer over the hint's schema, each part's own
schema, and the V2 actions a classic-named file holds even when the protocol lacks ``v2Checkpoint``.

Spec: ``spec/checkpoints.md`` §19.2 (``CKPT-READ-021``), §10 (``CKPT-READ-023``), §16.4
(``CKPT-READ-024``). Each test edits a copy of a golden table so that a reader taking the shortcut (the
hint's schema, the first part's schema, the protocol instead of the content) reports a different state.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from conformance.compare import assert_states_equal
from conformance.plugin import DEFAULT_FIXTURES
from conformance.tables import mutations
from reference_impl.log.last_checkpoint import checksum
from reference_impl.read.snapshot import read_snapshot
from spec.table_state import TableState
from tests.reference_impl.read.helpers import log_dir, prune_commits_before


def _golden(name: str, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    table = tmp_path / name
    shutil.copytree(DEFAULT_FIXTURES / "valid" / name / "table", table)
    return table, json.loads((DEFAULT_FIXTURES / "valid" / name / "fixture.json").read_text())


def _expected(name: str, version: int) -> TableState:
    path = DEFAULT_FIXTURES / "valid" / name / "expected" / f"v{version}" / "table_state.json"
    return TableState.from_json(json.loads(path.read_text()))


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-021")
@pytest.mark.parametrize(("name", "version"), [("v1_classic", 3), ("multipart_2", 4)])
def test_hint_schema_without_file_actions_is_not_used(
    name: str, version: int, spark: SparkSession, tmp_path: Path
) -> None:
    """``_last_checkpoint`` (valid checksum) describes the classic or multi-part checkpoint but its
    ``checkpointSchema`` has only ``protocol`` and ``metaData``: the reader still uses the hint to find the
    checkpoint, and reports every file, as the file's own footer says.

    Spec: CKPT-READ-021
    "A reader SHOULD NOT use the `checkpointSchema` of `_last_checkpoint` for a classic-named or multi-part
    checkpoint, and when it does, SHOULD read the file's own footer whenever the hint's schema lacks a column
    the reader needs."
    """
    table, descriptor = _golden(name, tmp_path)
    hint = mutations.read_hint(log_dir(table))
    assert hint["version"] == version, (
        f"{table}: the hint names version {hint['version']}, expected {version}"
    )
    fields = hint["checkpointSchema"]["fields"]
    hint["checkpointSchema"]["fields"] = [f for f in fields if f["name"] in ("protocol", "metaData")]
    hint.pop("checksum", None)
    hint["checksum"] = checksum(hint)
    mutations.write_hint(log_dir(table), hint)
    state = read_snapshot(spark, table, version=version, now_ms=descriptor["nowMs"]).table_state()
    where = f"{table} with a hint schema of {[f['name'] for f in hint['checkpointSchema']['fields']]}"
    assert state.source["hint"] == "used", f"{where}: the hint was not used ({state.source}), so not tested"
    assert state.source["checkpoint"]["version"] == version, f"{where}: read {state.source['checkpoint']}"
    assert_states_equal(_expected(name, version), state, context=where, ignore=["source"])


def _drop_add_fields(part: Path, names: set[str]) -> list[str]:
    """Rewrite ``part`` without the ``add`` sub-fields ``names``; returns the paths of its ``add`` rows."""
    table = pq.read_table(part)
    add_type = table.schema.field("add").type
    kept = [add_type.field(i) for i in range(add_type.num_fields) if add_type.field(i).name not in names]
    schema = table.schema.set(table.schema.get_field_index("add"), pa.field("add", pa.struct(kept)))
    rows = table.to_pylist()
    for row in rows:
        if row["add"] is not None:
            row["add"] = {k: v for k, v in row["add"].items() if k not in names}
    (part.parent / f".{part.name}.crc").unlink(missing_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), part)
    return [r["add"]["path"] for r in rows if r["add"] is not None]


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-023")
def test_each_part_is_read_with_its_own_schema(spark: SparkSession, tmp_path: Path) -> None:
    """Part 1 of the 2-part checkpoint at 4 loses its ``add.stats`` and ``add.stats_parsed`` columns; part 2
    keeps them. The file of part 2 keeps its statistics (a reader using part 1's footer for both would drop
    them), part 1's files have none, and every file is there.

    Spec: CKPT-READ-023
    "A reader SHOULD read each part of a multi-part checkpoint, and each sidecar of a checkpoint, with that
    file's own Parquet schema, so that it loses neither file actions nor statistics when the files' schemas
    differ."
    """
    table, descriptor = _golden("multipart_2", tmp_path)
    (log_dir(table) / "_last_checkpoint").unlink()
    part1, part2 = sorted(log_dir(table).glob("00000000000000000004.checkpoint.*.parquet"))
    stripped = set(_drop_add_fields(part1, {"stats", "stats_parsed"}))
    in_part2 = {r["add"]["path"] for r in pq.read_table(part2).to_pylist() if r["add"] is not None}
    assert stripped and in_part2, (
        f"{table}: part 1 adds {stripped}, part 2 adds {in_part2}: nothing to compare"
    )
    state = read_snapshot(spark, table, version=4, now_ms=descriptor["nowMs"]).table_state()
    expected = {f["path"]: f for f in _expected("multipart_2", 4).files}
    files = {f["path"]: f for f in state.files}
    assert state.source["checkpoint"]["version"] == 4, f"{table}: read {state.source}"
    assert set(files) == set(expected), f"{table}: files {sorted(files)}, expected {sorted(expected)}"
    for path in in_part2:
        assert files[path].get("stats") == expected[path].get("stats"), (
            f"{part2}: {path} has stats {files[path].get('stats')!r}, expected {expected[path].get('stats')!r}"
        )
    for path in stripped:
        assert files[path].get("stats") is None, f"{part1}: {path} has stats {files[path].get('stats')!r}"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-024")
def test_v2_content_is_read_without_the_feature(spark: SparkSession, tmp_path: Path) -> None:
    """The classic-named V2 checkpoint at 3 (``checkpointMetadata``, sidecars) of a table whose protocol —
    in the commits and in the checkpoint — no longer lists ``v2Checkpoint``; the commits before it are gone.
    The reader reads it by its content: every file of the sidecars is in the state.

    Spec: CKPT-READ-024
    "A reader that finds a `checkpointMetadata` or `sidecar` action in a classic-named checkpoint of a version
    whose protocol does not support `v2Checkpoint` SHOULD either read the checkpoint by its content,
    including the file actions of its sidecars (…), or treat it as invalid and fall back (…); it SHOULD NOT
    report a state without the sidecars' file actions."
    """
    name = "v2_classic_named_sidecars"
    table, descriptor = _golden(name, tmp_path)
    (log_dir(table) / "_last_checkpoint").unlink()
    prune_commits_before(table, 3)

    def without_feature(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            if row.get("protocol") is not None:
                row["protocol"] = {**row["protocol"], "readerFeatures": [], "writerFeatures": []}
        return rows

    mutations.rewrite_parquet_rows(
        log_dir(table) / "00000000000000000003.checkpoint.parquet", without_feature
    )
    for commit in sorted(log_dir(table).glob("*.json")):
        mutations.rewrite_json_lines(commit, without_feature)
    state = read_snapshot(spark, table, version=3, now_ms=descriptor["nowMs"]).table_state()
    where = f"{table} (checkpoint 3 without v2Checkpoint in its protocol)"
    assert "v2Checkpoint" not in (state.protocol.get("readerFeatures") or []), f"{where}: {state.protocol}"
    assert state.source["checkpoint"]["sidecars"], f"{where}: no sidecar read: {state.source}"
    expected = sorted(f["path"] for f in _expected(name, 3).files)
    assert expected, f"{where}: the golden state has no files"
    assert sorted(f["path"] for f in state.files) == expected, f"{where}: files {state.files}"
