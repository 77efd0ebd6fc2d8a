"""What our checkpoint files and ``_last_checkpoint`` contain, checked against the files on disk.

The tables are hand-written logs, so every expectation is exact: which tombstones have expired at
the writer's clock (``now_ms``), which ``txn`` has expired under
``delta.setTransactionRetentionDuration``, which domain was removed, which rows are ``commitInfo``
and ``cdc``. Every file the writer reports is read back (Parquet with pyarrow, JSON line by line)
and every ``_last_checkpoint`` member is recomputed from the files on disk. The checksum is
recomputed with the conformance suite's implementation of spec §15.1 (:mod:`conformance.decode.checksum`),
independently of the writer's (checked here against the spec's test vectors too).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from conformance.decode.checksum import checksum
from conformance.tables.builder import (
    add,
    cdc,
    commit_info,
    domain,
    metadata,
    protocol,
    remove,
    schema,
    schema_field,
    stats_json,
    txn,
    v2_protocol,
    write_log,
)
from conformance.tables.real_writers import HOUR_MS
from reference_impl.log.naming import parse_log_file_name
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.result import CheckpointResult, FileRole
from reference_impl.write.staging import plain_columns
from reference_impl.write.writer import write_checkpoint
from spec.schemas import validator
from spec.vocabulary import LogFileKind
from tests.reference_impl.write.helpers import kind_of, parquet_spark_schema, rows_of
from tests.support.listings import log_dir

NOW = 1_800_000_000_000  # the writer's clock in these tests (2027-01-15)
MINUTE_MS = 60_000
_UNRESERVED = re.compile(r"^[A-Za-z0-9._~-]+$")


def spec_checksum(document: Mapping[str, Any]) -> str:
    """§15.1 as the conformance suite computes it (:mod:`conformance.decode.checksum`), independently of the writer."""
    return checksum(document)


def schema_validator(name: str) -> Any:
    """A validator for ``spec/schemas/<name>``, resolving references to the other spec schemas offline."""
    return validator(name)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    assert not duplicated, f"duplicate key(s) {duplicated} in _last_checkpoint (CKPT-CKSUM-002)"
    return dict(pairs)


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"k0": "'v 0'", "checksum": "adsaskfljadfkjadfkj",
          "k1": {"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}},
         "6a92d155a59bf2eecbd4b4ec7fd1f875"),
        ({"a": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]}, "e6e7f7501e532040b7a2abe0a2140083"),
        ({"version": 2, "size": 5, "sizeInBytes": 13865, "numOfAddFiles": 3}, "44ac021ea4bd0b0182bb3ec79d66f7f2"),
        ({"version": 10, "size": 4, "note": "a b/€~", "flags": [True, False, None], "empty": {}, "none": []},
         "84ec1e09f23a74dbdac99ee05338d7ca"),
        ({"version": 1, "tags": {"checksum": "x"}, "checksum": "ignored"}, "0b1fccd1be77892cd24c6b781e0270f4"),
        ({}, "d41d8cd98f00b204e9800998ecf8427e"),
    ],
    ids=["protocol-sample", "eleven-plus-elements", "plain", "encoding", "nested-checksum", "empty"],
)  # fmt: skip
def test_checksum_checker_matches_spec_vectors(document: dict[str, Any], expected: str) -> None:
    """This module's checksum implementation reproduces spec §15.2's test vectors (so it can judge the writer)."""
    assert spec_checksum(document) == expected, f"§15.2 vector {document}: {spec_checksum(document)}"


# --------------------------------------------------------------------------------------------------
# the content table
# --------------------------------------------------------------------------------------------------

CONTENT_SCHEMA = schema(schema_field("v", "long"), schema_field("p", "string"))
CONTENT_DV = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 4, "sizeInBytes": 40,
              "cardinality": 2}  # fmt: skip


def _stats(low: int, high: int) -> str:
    return stats_json(10, {"v": low}, {"v": high}, {"v": 0})


TXN_CUTOFF = NOW - HOUR_MS  # delta.setTransactionRetentionDuration of the content table at the writer's clock
#: The content table's ``txn``\\ s: appId -> (version, lastUpdated or None, covered by CKPT-CONTENT-012's
#: permission: absent ``lastUpdated`` or not later than the cutoff).
TXNS: dict[str, tuple[int, int | None, bool]] = {
    "fresh": (3, NOW - 10 * MINUTE_MS, False),
    "old": (4, NOW - 2 * HOUR_MS, True),
    "undated": (5, None, True),
    "at-cutoff": (6, TXN_CUTOFF, True),
    "after-cutoff": (7, TXN_CUTOFF + 1, False),
}


def build_content_table(path: Path, *, v2: bool) -> Path:
    """Every kind of action a checkpoint must keep, rewrite or drop, at the clock :data:`NOW`.

    Retention: tombstones 1 hour, transaction identifiers 1 hour. Expected in a checkpoint at
    ``NOW``: adds ``a``, ``c`` (null partition), ``d`` (deletion vector), ``e``; the tombstone of ``b``
    (without the stats and tags its remove had); txns ``fresh`` and ``after-cutoff`` only (:data:`TXNS`); domain ``keep`` only.
    """
    extra = {"reader_extra": ["deletionVectors"], "writer_extra": ["deletionVectors", "domainMetadata"]}
    proto = (
        v2_protocol(**extra)
        if v2
        else protocol(
            3, 7, reader_features=["deletionVectors"], writer_features=["deletionVectors", "domainMetadata"]
        )
    )
    config = {
        "delta.deletedFileRetentionDuration": "interval 1 hours",
        "delta.setTransactionRetentionDuration": "interval 1 hours",
        "delta.enableDeletionVectors": "true",
    }
    if v2:
        config["delta.checkpointPolicy"] = "v2"
    fresh, old = NOW - 10 * MINUTE_MS, NOW - 2 * HOUR_MS
    commits = [
        [commit_info(), proto, metadata(CONTENT_SCHEMA, partition_columns=["p"], configuration=config)],
        [
            commit_info(),
            add("p=x/a.parquet", partition_values={"p": "x"}, stats=_stats(0, 9), tags={"t": "1"}),
            add("p=y/b.parquet", partition_values={"p": "y"}, stats=_stats(10, 19)),
            add("p=__HIVE_DEFAULT_PARTITION__/c.parquet", partition_values={"p": None}, stats=_stats(20, 29)),
            cdc("_change_data/cdc-1.parquet"),
            *(txn(app, version, updated) for app, (version, updated, _) in TXNS.items()),
            domain("keep", '{"k":1}'),
            domain("gone", '{"k":2}'),
        ],
        [
            commit_info(),
            remove(
                "p=y/b.parquet",
                deletion_timestamp=fresh,
                partition_values={"p": "y"},
                stats=_stats(10, 19),
                tags={"t": "2"},
            ),
            remove("p=x/expired.parquet", deletion_timestamp=old, partition_values={"p": "x"}),
            remove("p=x/undated.parquet", deletion_timestamp=None, partition_values={"p": "x"}),
            add(
                "p=x/d.parquet", partition_values={"p": "x"}, stats=_stats(30, 39), deletion_vector=CONTENT_DV
            ),
            domain("gone", '{"k":2}', removed=True),
        ],
        [commit_info(), add("p=y/e.parquet", partition_values={"p": "y"}, stats=_stats(40, 49))],
    ]
    return write_log(path, commits)


EXPECTED_ADDS = {"p=x/a.parquet", "p=__HIVE_DEFAULT_PARTITION__/c.parquet", "p=x/d.parquet", "p=y/e.parquet"}
EXPECTED_REMOVES = {"p=y/b.parquet"}


@dataclass(frozen=True)
class Layout:
    id: str
    v2_table: bool
    options: CheckpointOptions


LAYOUTS = [
    Layout("v1-classic", True, CheckpointOptions(spec="v1", now_ms=NOW)),
    Layout("multi-part", False, CheckpointOptions(spec="v1", parts=3, now_ms=NOW)),
    Layout("v2-uuid-json-sidecars", True, CheckpointOptions(spec="v2", actions_per_sidecar=2, now_ms=NOW)),
    Layout("v2-uuid-parquet-sidecars", True,
           CheckpointOptions(spec="v2", top_level_format="parquet", actions_per_sidecar=2, now_ms=NOW)),
    Layout("v2-classic-sidecars", True, CheckpointOptions(spec="v2", naming="classic", actions_per_sidecar=2, now_ms=NOW)),
    Layout("v2-uuid-json-inline", True, CheckpointOptions(spec="v2", sidecars=False, now_ms=NOW)),
]  # fmt: skip


class WrittenLayouts:
    """The content table checkpointed once per layout, shared by the content and ``_last_checkpoint`` tests.

    Both tests only read the files; writing each layout once halves this module's Spark work.
    """

    def __init__(self, spark: SparkSession, root: Path) -> None:
        self._spark, self._root = spark, root
        self._done: dict[str, tuple[Path, CheckpointResult]] = {}

    def get(self, layout: Layout) -> tuple[Path, CheckpointResult]:
        if layout.id not in self._done:
            table = build_content_table(self._root / layout.id, v2=layout.v2_table)
            self._done[layout.id] = (
                table,
                write_checkpoint(table, options=layout.options, spark=self._spark),
            )
        return self._done[layout.id]


@pytest.fixture(scope="module")
def written(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> WrittenLayouts:
    return WrittenLayouts(spark, tmp_path_factory.mktemp("content-layouts"))


def _as_map(value: Any) -> Any:
    """A map as read back: a dict from JSON, a list of pairs from Parquet (pyarrow)."""
    return dict(value) if isinstance(value, list) else value


def _files(table: Path, result: CheckpointResult) -> list[Path]:
    return [log_dir(table) / f.name for f in result.files]


def _assert_parquet_layout(path: Path) -> None:
    """Nullable fields (map keys excepted), zstd, one action per row, no remove.stats/tags."""
    schema_ = pq.read_schema(path)

    def walk(field: pa.Field, where: str) -> Iterator[str]:
        if not field.nullable:
            yield where
        t = field.type
        if pa.types.is_struct(t):
            for child in t:
                yield from walk(child, f"{where}.{child.name}")
        elif pa.types.is_list(t):
            yield from walk(t.value_field, f"{where}.element")
        elif pa.types.is_map(t):
            yield from walk(t.item_field, f"{where}.value")  # the key is required by Parquet

    required = [w for f in schema_ for w in walk(f, f.name)]
    assert not required, f"{path}: required (non-nullable) fields {required} (CKPT-SCHEMA-003)"
    if "remove" in schema_.names:
        names = [f.name for f in schema_.field("remove").type]
        assert "stats" not in names and "tags" not in names, (
            f"{path}: remove struct has {names} (CKPT-SCHEMA-006)"
        )
    meta = pq.read_metadata(path)
    codecs = {
        meta.row_group(g).column(c).compression
        for g in range(meta.num_row_groups)
        for c in range(meta.num_columns)
    }
    assert codecs <= {"ZSTD"}, f"{path}: compression {codecs}, expected ZSTD (CKPT-SCHEMA-008)"
    for number, row in enumerate(pq.read_table(path).to_pylist()):
        present = [k for k, v in row.items() if v is not None]
        assert len(present) == 1, f"{path} row {number}: columns {present} are non-null (CKPT-SCHEMA-001)"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-CONTENT-012", "CKPT-CONTENT-008")
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_expired_txns_left_out_up_to_the_cutoff(layout: Layout, written: WrittenLayouts) -> None:
    """Under a 1-hour ``delta.setTransactionRetentionDuration``, the reference writer leaves out exactly the
    ``txn``\\ s the permission covers — no ``lastUpdated``, updated 2 hours ago, updated exactly at the
    cutoff — and keeps, each once and as written, the one updated 1 ms after the cutoff and the fresh one.

    Spec: CKPT-CONTENT-012
    "When `delta.setTransactionRetentionDuration` is set, a writer MAY leave out of a checkpoint the
    newest `txn` action of an `appId` when its `lastUpdated` is absent or not later than the current
    time minus that duration."
    Spec: CKPT-CONTENT-008
    "A checkpoint MUST contain, for each `appId` that occurs in a `txn` action of commits `0..n`, exactly
    one `txn` action, equal to the newest one for that `appId`, unless a writer leaves it out under
    CKPT-CONTENT-012."
    """
    table, result = written.get(layout)
    found = sorted(
        (row["txn"]["appId"], row["txn"]["version"], row["txn"].get("lastUpdated"))
        for path in _files(table, result)
        for row in rows_of(path)
        if "txn" in row
    )
    expected = sorted((app, v, updated) for app, (v, updated, expired) in TXNS.items() if not expired)
    assert found == expected, (
        f"{layout.id} ({table}): txns {found}, expected {expected} (cutoff {TXN_CUTOFF}; CKPT-CONTENT-012/-008)"
    )


@pytest.mark.spark
@pytest.mark.requirement(
    "CKPT-CONTENT-002",
    "CKPT-CONTENT-004",
    "CKPT-CONTENT-005",
    "CKPT-CONTENT-006",
    "CKPT-CONTENT-007",
    "CKPT-CONTENT-009",
    "CKPT-CONTENT-010",
    "CKPT-CONTENT-011",
    "CKPT-SCHEMA-001",
    "CKPT-SCHEMA-003",
    "CKPT-SCHEMA-005",
    "CKPT-SCHEMA-006",
    "CKPT-SCHEMA-007",
    "CKPT-SCHEMA-008",
    "CKPT-V1-001",
    "CKPT-V2-001",
    "CKPT-V2-002",
    "CKPT-V2-003",
    "CKPT-V2-004",
    "CKPT-V2-005",
    "CKPT-SIDE-001",
    "CKPT-SIDE-002",
    "CKPT-SIDE-004",
    "CKPT-SIDE-010",
    "CKPT-SIDE-011",
    "CKPT-NAME-001",
    "CKPT-NAME-002",
    "CKPT-NAME-003",
)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_checkpoint_content(layout: Layout, written: WrittenLayouts) -> None:
    """The checkpoint holds exactly the reconciled state, rewritten as a checkpoint, in every layout.

    Spec: CKPT-CONTENT-007
    "A writer SHOULD leave out every tombstone whose `deletionTimestamp` is not later than the
    current time minus the table's `delta.deletedFileRetentionDuration` …, counting an absent
    `deletionTimestamp` as 0."
    Spec: CKPT-CONTENT-010
    "A checkpoint MUST NOT contain any `commitInfo` or `cdc` action."
    Spec: CKPT-CONTENT-011
    "A writer SHOULD set `dataChange` to `false` in every `add` and `remove` action it writes into a
    checkpoint."
    Spec: CKPT-SCHEMA-006
    "A writer SHOULD leave the `stats` and `tags` fields out of the `remove` struct of every
    checkpoint file."
    """
    table, result = written.get(layout)
    label = f"{layout.id} ({table})"
    by_kind: dict[str, list[dict[str, Any]]] = {}
    placement: dict[str, set[str]] = {}
    validator = schema_validator("checkpoint_action.schema.json")
    for path in _files(table, result):
        role = "sidecar" if path.parent.name == "_sidecars" else "top"
        if path.suffix == ".parquet":
            _assert_parquet_layout(path)
        else:
            for number, action in enumerate(rows_of(path)):
                errors = [e.message for e in validator.iter_errors(action)]
                assert not errors, f"{path} line {number + 1}: {errors[:3]} (CKPT-V2-005)"
        for action in rows_of(path):
            kind = kind_of(action)
            by_kind.setdefault(kind, []).append(action[kind])
            placement.setdefault(role, set()).add(kind)
    assert not {"commitInfo", "cdc"} & set(by_kind), f"{label}: {sorted(by_kind)} (CKPT-CONTENT-010)"
    assert len(by_kind["protocol"]) == 1 and len(by_kind["metaData"]) == 1, f"{label}: {sorted(by_kind)}"
    assert {a["path"] for a in by_kind["add"]} == EXPECTED_ADDS and len(by_kind["add"]) == len(
        EXPECTED_ADDS
    ), label
    assert [r["path"] for r in by_kind["remove"]] == sorted(EXPECTED_REMOVES), (
        f"{label}: removes {by_kind['remove']}"
    )
    for kind in ("add", "remove"):
        changed = [a["path"] for a in by_kind[kind] if a.get("dataChange") is not False]
        assert not changed, f"{label}: {kind} with dataChange != false: {changed} (CKPT-CONTENT-011)"
    tombstone = by_kind["remove"][0]
    assert tombstone.get("stats") is None and tombstone.get("tags") is None, (
        f"{label}: {tombstone} (CKPT-SCHEMA-005)"
    )
    assert tombstone["deletionTimestamp"] == NOW - 10 * MINUTE_MS, tombstone
    assert [(d["domain"], d["removed"]) for d in by_kind["domainMetadata"]] == [("keep", False)], label
    with_dv = [a for a in by_kind["add"] if a.get("deletionVector")]
    assert [a["path"] for a in with_dv] == ["p=x/d.parquet"], f"{label}: {with_dv}"
    assert {k: v for k, v in with_dv[0]["deletionVector"].items() if v is not None} == CONTENT_DV, with_dv[0]
    tagged = next(a for a in by_kind["add"] if a["path"] == "p=x/a.parquet")
    assert _as_map(tagged.get("tags")) == {"t": "1"}, (
        f"{label}: add.tags {tagged.get('tags')} (CKPT-CONTENT-005)"
    )
    proto = by_kind["protocol"][0]
    assert proto.get("readerFeatures") is not None and proto.get("writerFeatures") is not None, proto

    spec = "v1" if layout.id in ("v1-classic", "multi-part") else "v2"
    tops = [f.name for f in result.top_level]
    for name in tops:
        parsed = parse_log_file_name(name)
        assert parsed.conforms and parsed.version == result.version, (
            f"{label}: bad name {name} (CKPT-NAME-001)"
        )
        if parsed.kind is LogFileKind.CHECKPOINT_UUID:
            assert re.fullmatch(
                r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", parsed.token or ""
            ), name
    if layout.id == "multi-part":
        assert sorted((parse_log_file_name(n).part, parse_log_file_name(n).num_parts) for n in tops) == [
            (1, 3),
            (2, 3),
            (3, 3),
        ], f"{label}: {tops} (CKPT-NAME-002)"
    if spec == "v1":
        assert "checkpointMetadata" not in by_kind and "sidecar" not in by_kind, (
            f"{label}: {sorted(by_kind)} (CKPT-V1-001)"
        )
        return
    assert len(by_kind["checkpointMetadata"]) == 1, f"{label}: (CKPT-V2-001)"
    assert by_kind["checkpointMetadata"][0]["version"] == result.version, f"{label}: (CKPT-V2-002)"
    assert placement["top"] >= {"protocol", "metaData", "txn", "domainMetadata", "checkpointMetadata"}, (
        placement
    )
    if layout.options.sidecars:
        assert placement["top"].isdisjoint({"add", "remove"}), (
            f"{label}: top-level holds {placement['top']} (CKPT-V2-004)"
        )
        assert placement["sidecar"] <= {"add", "remove"}, (
            f"{label}: sidecars hold {placement['sidecar']} (CKPT-SIDE-002)"
        )
        assert len(result.sidecars) >= 2, f"{label}: {result.files}"
        for ref in by_kind["sidecar"]:
            assert _UNRESERVED.match(ref["path"]), (
                f"{label}: sidecar path {ref['path']!r} (CKPT-SIDE-010/011)"
            )
            on_disk = log_dir(table) / "_sidecars" / ref["path"]
            assert on_disk.is_file(), f"{label}: {on_disk} missing (CKPT-SIDE-001)"
            st = on_disk.stat()
            assert ref["sizeInBytes"] == st.st_size, (
                f"{on_disk}: {st.st_size} bytes, recorded {ref['sizeInBytes']} (CKPT-SIDE-004)"
            )
            assert ref["modificationTime"] == st.st_mtime_ns // 1_000_000, (
                f"{on_disk}: mtime {st.st_mtime_ns // 1_000_000}, recorded {ref['modificationTime']}"
            )
    else:
        assert "sidecar" not in by_kind and "sidecar" not in placement, f"{label}: {placement}"


# --------------------------------------------------------------------------------------------------
# _last_checkpoint
# --------------------------------------------------------------------------------------------------


def _hint(table: Path) -> tuple[str, dict[str, Any]]:
    text = (log_dir(table) / "_last_checkpoint").read_text(encoding="utf-8")
    document = json.loads(text, object_pairs_hook=_no_duplicates)
    assert isinstance(document, dict), text
    return text, document


def check_last_checkpoint(table: Path, result: CheckpointResult, label: str) -> dict[str, Any]:
    """Every member of ``_last_checkpoint`` recomputed from the checkpoint files on disk."""
    _, hint = _hint(table)
    errors = [e.message for e in schema_validator("last_checkpoint.schema.json").iter_errors(hint)]
    assert not errors, f"{label}: _last_checkpoint is invalid: {errors[:3]} (CKPT-LAST-001)"
    keys = list(hint)
    multi = len(result.top_level) > 1
    head = ["version", "size", "parts"] if multi else ["version", "size"]
    assert keys[: len(head)] == head, (
        f"{label}: members start {keys[:3]}, expected {head} (CKPT-LAST-009/013)"
    )
    assert keys[-1] == "checksum", f"{label}: last member {keys[-1]} (CKPT-LAST-010)"
    assert hint["checksum"] == spec_checksum(hint), (
        f"{label}: checksum {hint['checksum']}, §15.1 gives {spec_checksum(hint)} (CKPT-CKSUM-001)"
    )
    tops = [log_dir(table) / f.name for f in result.top_level]
    files = _files(table, result)
    assert all(p.is_file() for p in files), f"{label}: {files}"
    assert hint["version"] == result.version, f"{label}: version {hint['version']} (CKPT-LAST-002)"
    rows = [row for p in files for row in rows_of(p)]
    assert hint["size"] == len(rows), (
        f"{label}: size {hint['size']}, the files hold {len(rows)} rows (CKPT-LAST-003)"
    )
    assert hint["sizeInBytes"] == sum(p.stat().st_size for p in files), (
        f"{label}: sizeInBytes (CKPT-LAST-004)"
    )
    adds = sum(1 for row in rows if kind_of(row) == "add")
    assert hint["numOfAddFiles"] == adds, (
        f"{label}: numOfAddFiles {hint['numOfAddFiles']}, files hold {adds} (CKPT-LAST-004)"
    )
    if multi:
        assert hint["parts"] == len(tops), f"{label}: parts {hint['parts']} (CKPT-LAST-013)"
    else:
        assert "parts" not in hint, f"{label}: parts in a single-file checkpoint's hint (CKPT-LAST-013)"
    if tops[0].suffix == ".parquet":
        for top in tops:
            assert hint["checkpointSchema"] == parquet_spark_schema(top), (
                f"{label}: checkpointSchema != schema of {top.name} (CKPT-LAST-005)"
            )
    else:
        assert "checkpointSchema" not in hint, (
            f"{label}: checkpointSchema with a JSON top-level file (CKPT-LAST-005)"
        )
    top_kind = parse_log_file_name(tops[0].name).kind
    if top_kind is not LogFileKind.CHECKPOINT_UUID:
        assert "v2Checkpoint" not in hint, (
            f"{label}: v2Checkpoint for a {top_kind.value} checkpoint (CKPT-LAST-006)"
        )
        return hint
    v2 = hint["v2Checkpoint"]
    st = tops[0].stat()
    assert (v2["path"], v2["sizeInBytes"], v2["modificationTime"]) == (
        tops[0].name,
        st.st_size,
        st.st_mtime_ns // 1_000_000,
    ), f"{label}: v2Checkpoint {v2['path']}/{v2['sizeInBytes']}/{v2['modificationTime']} (CKPT-LAST-006)"
    top_rows = rows_of(tops[0])
    non_file = [r for r in top_rows if kind_of(r) not in ("add", "remove", "sidecar")]
    sidecars = [r["sidecar"] for r in top_rows if kind_of(r) == "sidecar"]
    if len(non_file) <= 30:
        assert "nonFileActions" in v2, (
            f"{label}: {len(non_file)} non-file actions but no nonFileActions (CKPT-LAST-007/008)"
        )
        assert _canon(v2["nonFileActions"]) == _canon(non_file), (
            f"{label}: nonFileActions differ from the file (CKPT-LAST-007)"
        )
    else:
        assert "nonFileActions" not in v2, f"{label}: {len(non_file)} nonFileActions kept (CKPT-LAST-008)"
    if len(sidecars) <= 30:
        assert "sidecarFiles" in v2, (
            f"{label}: {len(sidecars)} sidecars but no sidecarFiles (CKPT-LAST-007/008)"
        )
        listed = [(s["path"], s["sizeInBytes"], s["modificationTime"]) for s in v2["sidecarFiles"]]
        assert listed == [(s["path"], s["sizeInBytes"], s["modificationTime"]) for s in sidecars], (
            f"{label}: (CKPT-LAST-007)"
        )
    else:
        assert "sidecarFiles" not in v2, f"{label}: {len(sidecars)} sidecarFiles kept (CKPT-LAST-008)"
    return hint


def _canon(actions: list[dict[str, Any]]) -> list[str]:
    """Actions as sorted canonical JSON (a Parquet row's maps become dicts, nulls dropped)."""

    def clean(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: clean(v, k) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            if key in ("configuration", "options", "tags", "partitionValues") and all(
                isinstance(x, tuple) for x in value
            ):
                return dict(value)
            return [clean(v) for v in value]
        return value

    return sorted(json.dumps(clean(a), sort_keys=True) for a in actions)


def check_checkpoint_metadata_tags(table: Path, result: CheckpointResult, label: str) -> None:
    """The well-known tags of ``checkpointMetadata`` equal what the sidecars on disk hold."""
    top = log_dir(table) / result.top_level[0].name
    tags = dict(
        next(r["checkpointMetadata"] for r in rows_of(top) if kind_of(r) == "checkpointMetadata").get("tags")
        or {}
    )
    sidecar_files = [log_dir(table) / f.name for f in result.sidecars]
    side_rows = [row for p in sidecar_files for row in rows_of(p)]
    adds = sum(1 for p in _files(table, result) for row in rows_of(p) if kind_of(row) == "add")
    expected = {"numOfAddFiles": str(adds)}
    if sidecar_files:
        expected |= {
            "sidecarNumActions": str(len(side_rows)),
            "sidecarSizeInBytes": str(sum(p.stat().st_size for p in sidecar_files)),
        }
        schemas = [parquet_spark_schema(p) for p in sidecar_files]
        assert all(s == schemas[0] for s in schemas), f"{label}: sidecars have different schemas"
        assert json.loads(tags.get("sidecarFileSchema", "null")) == schemas[0], (
            f"{label}: sidecarFileSchema (CKPT-V2-006)"
        )
    recorded = {k: v for k, v in tags.items() if k != "sidecarFileSchema"}
    assert recorded == expected, (
        f"{label}: checkpointMetadata tags {recorded}, the files give {expected} (CKPT-V2-006)"
    )


@pytest.mark.spark
@pytest.mark.requirement(
    "CKPT-LAST-001",
    "CKPT-LAST-002",
    "CKPT-LAST-003",
    "CKPT-LAST-004",
    "CKPT-LAST-005",
    "CKPT-LAST-006",
    "CKPT-LAST-007",
    "CKPT-LAST-009",
    "CKPT-LAST-010",
    "CKPT-LAST-013",
    "CKPT-CKSUM-001",
    "CKPT-CKSUM-002",
    "CKPT-CKSUM-003",
    "CKPT-V2-006",
)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_last_checkpoint_matches_the_files(layout: Layout, written: WrittenLayouts) -> None:
    """``_last_checkpoint`` is schema-valid, ordered, checksummed and equal to what the files on disk hold.

    Spec: CKPT-LAST-003
    "The `size` a writer records MUST equal the total number of actions stored in all files of the
    described checkpoint, counting the rows of the top-level file or parts, including
    `checkpointMetadata` and `sidecar` rows, and the rows of all referenced sidecars."
    Spec: CKPT-LAST-005
    "When present, `checkpointSchema` MUST be the Spark `StructType` JSON of the schema of the
    described checkpoint's Parquet top-level file or parts, and it MUST be absent when the
    top-level file is JSON."
    Spec: CKPT-V2-006
    "Each well-known tag a writer records MUST be exact …"
    """
    table, result = written.get(layout)
    label = f"{layout.id} ({table})"
    check_last_checkpoint(table, result, label)
    if result.spec == "v2":
        check_checkpoint_metadata_tags(table, result, label)


def build_many_actions_table(path: Path, *, files: int, txns: int) -> Path:
    """``files`` adds (for many sidecars) and ``txns`` transaction identifiers, on a v2Checkpoint table."""
    table_schema = schema(schema_field("v", "long"))
    adds = [
        add(f"f-{i:04d}.parquet", stats=stats_json(1, {"v": i}, {"v": i}, {"v": 0})) for i in range(files)
    ]
    return write_log(
        path,
        [
            [v2_protocol(), metadata(table_schema, configuration={"delta.checkpointPolicy": "v2"})],
            [commit_info(), *adds, *[txn(f"app-{i:02d}", i) for i in range(txns)]],
        ],
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-LAST-008", "CKPT-LAST-007", "CKPT-CKSUM-001")
@pytest.mark.parametrize(
    ("files", "per_sidecar", "txns", "sidecars_listed", "non_file_listed"),
    [(240, 8, 28, True, False), (320, 8, 27, False, True)],
    ids=["30-sidecars-kept-31-non-file-dropped", "40-sidecars-dropped-30-non-file-kept"],
)  # fmt: skip
def test_v2_checkpoint_lists_dropped_beyond_30(
    files: int,
    per_sidecar: int,
    txns: int,
    sidecars_listed: bool,
    non_file_listed: bool,
    spark: SparkSession,
    tmp_path: Path,
) -> None:
    """``v2Checkpoint.sidecarFiles`` / ``nonFileActions`` are kept up to 30 entries and left out beyond.

    Spec: CKPT-LAST-008
    "A writer SHOULD leave out `v2Checkpoint.nonFileActions` when it would have more than 30 entries
    and `v2Checkpoint.sidecarFiles` when it would have more than 30 entries."
    """
    table = build_many_actions_table(tmp_path / "table", files=files, txns=txns)
    result = write_checkpoint(
        table, options=CheckpointOptions(spec="v2", actions_per_sidecar=per_sidecar), spark=spark
    )
    label = f"{files} adds / {per_sidecar} per sidecar, {txns} txns ({table})"
    n_sidecars, n_non_file = len(result.sidecars), txns + 3  # protocol, metaData, txns, checkpointMetadata
    assert (n_sidecars <= 30) == sidecars_listed and n_sidecars >= 30, (
        f"{label}: {n_sidecars} sidecars; the case needs {'30' if sidecars_listed else '> 30'}"
    )
    hint = check_last_checkpoint(table, result, label)
    assert ("sidecarFiles" in hint["v2Checkpoint"]) == sidecars_listed, (
        f"{label}: {n_sidecars} sidecars, hint {list(hint['v2Checkpoint'])}"
    )
    assert ("nonFileActions" in hint["v2Checkpoint"]) == non_file_listed, (
        f"{label}: {n_non_file} non-file actions, hint {list(hint['v2Checkpoint'])}"
    )


@pytest.mark.spark
@pytest.mark.requirement("CKPT-LAST-011")
def test_older_checkpoint_does_not_replace_a_newer_hint(spark: SparkSession, tmp_path: Path) -> None:
    """A checkpoint of an older version is written, but ``_last_checkpoint`` keeps naming the newer one.

    Spec: CKPT-LAST-011
    "A writer SHOULD NOT replace a `_last_checkpoint` that describes a newer version with one that
    describes an older version."
    """
    table = build_content_table(tmp_path / "table", v2=False)
    newer = write_checkpoint(table, options=CheckpointOptions(now_ms=NOW), spark=spark)
    text_before, _ = _hint(table)
    older = write_checkpoint(
        table, version=newer.version - 1, options=CheckpointOptions(now_ms=NOW), spark=spark
    )
    text_after, hint = _hint(table)
    assert (log_dir(table) / older.top_level[0].name).is_file(), older.files
    assert text_after == text_before and hint["version"] == newer.version, (
        f"{table}: _last_checkpoint became {text_after}"
    )
    assert older.last_checkpoint is None and older.last_checkpoint_skipped, older.to_json()


# --------------------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------------------

MAPPED_SCHEMA = schema(
    schema_field("id", "long", column_id=1, physical="col-5f1d-id"),
    schema_field("name", "string", column_id=2, physical="col-8a2c-name"),
    schema_field("ts", "timestamp", column_id=3, physical="col-93b7-ts"),
    schema_field("day", "date", column_id=4, physical="col-0c41-day"),
    schema_field("score", "double", column_id=5, physical="col-77e0-score"),
    schema_field("part", "string", column_id=6, physical="col-2d9a-part"),
)
PART_PHYSICAL = "col-2d9a-part"
DATA_PHYSICAL = ["col-5f1d-id", "col-8a2c-name", "col-93b7-ts", "col-0c41-day", "col-77e0-score"]


def _mapped_stats(i: int) -> str:
    low = {
        "col-5f1d-id": i * 10,
        "col-8a2c-name": f"a{i}",
        "col-93b7-ts": f"2024-01-0{i + 1}T03:04:05.123Z",
        "col-0c41-day": f"2024-02-0{i + 1}",
        "col-77e0-score": i + 0.5,
    }
    high = {
        "col-5f1d-id": i * 10 + 9,
        "col-8a2c-name": f"z{i}",
        "col-93b7-ts": f"2024-01-0{i + 1}T23:59:59.999Z",
        "col-0c41-day": f"2024-02-0{i + 2}",
        "col-77e0-score": i + 9.25,
    }
    nulls = dict.fromkeys(DATA_PHYSICAL, i)
    return stats_json(10 + i, low, high, nulls)


def build_column_mapped_table(path: Path) -> Path:
    """Column mapping ``name``, partitioned by ``part`` (physical name in ``partitionValues``); one add without stats."""
    config = {"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "6"}
    adds = [
        add(
            f"{PART_PHYSICAL}=a/f{i}.parquet", partition_values={PART_PHYSICAL: value}, stats=_mapped_stats(i)
        )
        for i, value in enumerate(["a", "b", None])
    ]
    adds.append(add(f"{PART_PHYSICAL}=a/no-stats.parquet", partition_values={PART_PHYSICAL: "a"}))
    return write_log(
        path,
        [
            [protocol(2, 5), metadata(MAPPED_SCHEMA, partition_columns=["part"], configuration=config)],
            [commit_info(), *adds],
        ],
    )


BASE_ADD_FIELDS = ["path", "partitionValues", "size", "modificationTime", "dataChange", "tags", "deletionVector",
                   "baseRowId", "defaultRowCommitVersion", "clusteringProvider"]  # fmt: skip
EXPECTED_ADD_FIELDS = {
    "json": [*BASE_ADD_FIELDS, "stats"],
    "struct": [*BASE_ADD_FIELDS, "partitionValues_parsed", "stats_parsed"],
    "both": [*BASE_ADD_FIELDS, "stats", "partitionValues_parsed", "stats_parsed"],
}


def _json_form(value: Any) -> Any:
    """A typed Parquet value in the form JSON statistics use."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _compare_parsed(parsed: Any, stats: Any, where: str) -> list[str]:
    """Every non-null value of ``stats_parsed`` equals the JSON statistic at the same place."""
    if parsed is None:
        return []
    if isinstance(parsed, dict):
        out = []
        for key, value in parsed.items():
            if value is None:
                continue
            if not isinstance(stats, dict) or key not in stats:
                out.append(f"{where}.{key}: {value!r} in stats_parsed, absent from the JSON stats")
                continue
            out += _compare_parsed(value, stats[key], f"{where}.{key}")
        return out
    return (
        []
        if _json_form(parsed) == stats
        else [f"{where}: stats_parsed {_json_form(parsed)!r}, JSON {stats!r}"]
    )


@pytest.mark.spark
@pytest.mark.requirement(
    "CKPT-STATS-001",
    "CKPT-STATS-002",
    "CKPT-STATS-003",
    "CKPT-STATS-004",
    "CKPT-STATS-005",
    "CKPT-STATS-006",
    "CKPT-STATS-007",
    "CKPT-SCHEMA-004",
)
@pytest.mark.parametrize(
    "option", ["json", "struct", "both", None], ids=["json", "struct", "both", "default"]
)
def test_stats_forms_with_column_mapping(option: str | None, spark: SparkSession, tmp_path: Path) -> None:
    """``--stats json|struct|both`` give exactly the expected ``add`` fields, physical names, and equal values.

    Without the option the table decides; this table sets neither ``writeStatsAsJson`` nor
    ``writeStatsAsStruct``, so the writer must write both forms.

    Spec: CKPT-STATS-003
    "A writer SHOULD behave as if `delta.checkpoint.writeStatsAsStruct` were `true` when the
    property is absent."

    Spec: CKPT-STATS-006
    "When column mapping is enabled, the field names inside `partitionValues_parsed` and inside the
    `minValues`, `maxValues` and `nullCount` structs of `stats_parsed` MUST be the physical column
    names."
    Spec: CKPT-STATS-007
    "Every non-null value in a `stats_parsed` struct MUST equal the value of the same statistic for
    the same column in the JSON statistics of the same `add` action."
    """
    stats = option or "both"
    table = build_column_mapped_table(tmp_path / "table")
    result = write_checkpoint(table, options=CheckpointOptions(spec="v1", stats=option), spark=spark)
    path = log_dir(table) / result.top_level[0].name
    label = f"--stats {option or '(default)'} ({path})"
    add_type = pq.read_schema(path).field("add").type
    assert [f.name for f in add_type] == EXPECTED_ADD_FIELDS[stats], (
        f"{label}: add fields {[f.name for f in add_type]}"
    )
    if stats != "json":
        assert [f.name for f in add_type.field("partitionValues_parsed").type] == [PART_PHYSICAL], label
        parsed_type = add_type.field("stats_parsed").type
        for group in ("minValues", "maxValues", "nullCount"):
            names = [f.name for f in parsed_type.field(group).type]
            assert names == DATA_PHYSICAL, (
                f"{label}: stats_parsed.{group} fields {names}, expected physical names"
            )
    source = {
        a["add"]["path"]: a["add"]
        for a in (
            json.loads(x) for x in (log_dir(table) / "00000000000000000001.json").read_text().splitlines()
        )
        if "add" in a
    }
    adds = [row["add"] for row in rows_of(path) if "add" in row]
    assert len(adds) == len(source), f"{label}: {len(adds)} adds, the log has {len(source)}"
    for a in adds:
        original = source[a["path"]]
        if stats != "struct":
            assert a.get("stats") == original.get("stats"), (
                f"{label}: {a['path']} stats changed (CKPT-STATS-001)"
            )
        if stats == "json":
            continue
        value = original["partitionValues"][PART_PHYSICAL]
        assert a["partitionValues_parsed"] == {PART_PHYSICAL: value}, (
            f"{label}: {a['path']} partitionValues_parsed {a['partitionValues_parsed']} (CKPT-STATS-004)"
        )
        if original.get("stats") is None:
            continue
        assert a["stats_parsed"] is not None, (
            f"{label}: {a['path']} has stats but no stats_parsed (CKPT-STATS-005)"
        )
        problems = _compare_parsed(a["stats_parsed"], json.loads(original["stats"]), a["path"])
        assert not problems, f"{label}: {problems} (CKPT-STATS-007)"
        assert a["stats_parsed"]["minValues"]["col-93b7-ts"] is not None, (
            f"{label}: timestamps not parsed: {a['stats_parsed']}"
        )


@pytest.mark.requirement("CKPT-CONTENT-013")
def test_checkpoint_actions_of_a_commit_are_not_copied(spark: SparkSession, tmp_path: Path) -> None:
    """The table of fixture ``valid/checkpoint_actions_in_commit`` without its checkpoint: commit 3 holds a
    ``checkpointMetadata`` and a ``sidecar`` naming ``does-not-exist.parquet``. Our V2 checkpoint of v3 has
    one ``checkpointMetadata`` (its own, version 3) and references only sidecars it wrote.

    Spec: CKPT-CONTENT-013
    "A checkpoint MUST NOT contain a `checkpointMetadata` or `sidecar` action taken from a commit file; its
    only `checkpointMetadata` and `sidecar` actions are those the writer creates for the checkpoint
    itself."
    """
    from conformance.decode.checkpoint import decode_file, sidecar_actions

    source = Path(__file__).resolve().parents[3] / "fixtures/valid/checkpoint_actions_in_commit/table"
    table = tmp_path / "table"
    shutil.copytree(
        source, table, ignore=shutil.ignore_patterns("*.checkpoint.*", "_last_checkpoint", "_sidecars")
    )
    logs = log_dir(table)
    assert '"does-not-exist.parquet"' in (logs / "00000000000000000003.json").read_text()
    result = write_checkpoint(table, 3, CheckpointOptions(spec="v2", top_level_format="json"), spark=spark)
    (top,) = [f.name for f in result.top_level]
    rows = decode_file(logs, top).rows
    metadata = [row["checkpointMetadata"] for row in rows if "checkpointMetadata" in row]
    assert [m["version"] for m in metadata] == [3], f"{logs / top}: checkpointMetadata actions {metadata}"
    paths = [action["path"] for action in sidecar_actions(logs, top)]
    written = {p.name for p in (logs / "_sidecars").iterdir() if not p.name.startswith(".")}
    assert paths and set(paths) <= written, f"{logs / top}: sidecar paths {paths}, files written {written}"


@pytest.mark.requirement("CKPT-PART-010", "CKPT-SIDE-015")
@pytest.mark.parametrize(
    "layout", [x for x in LAYOUTS if x.id in ("multi-part", "v2-uuid-json-sidecars")], ids=lambda x: x.id
)
def test_parts_and_sidecars_share_one_schema(layout: Layout, written: WrittenLayouts) -> None:
    """Every part of our multi-part checkpoint, and every sidecar of our V2 checkpoint, has one Parquet schema.

    Spec: CKPT-PART-010
    "All parts of one multi-part checkpoint SHOULD have the same Parquet schema."
    Spec: CKPT-SIDE-015
    "All sidecar files that one checkpoint references SHOULD have the same Parquet schema, …"
    """
    table, result = written.get(layout)
    role = FileRole.PART if layout.id == "multi-part" else FileRole.SIDECAR
    paths = [log_dir(table) / f.name for f in result.files if f.role is role]
    assert len(paths) >= 2, (
        f"{layout.id}: expected several {role} files, wrote {[f.name for f in result.files]}"
    )
    schemas = {str(pq.read_schema(p).remove_metadata()) for p in paths}
    assert len(schemas) == 1, f"{layout.id}: {len(schemas)} different schemas among {[p.name for p in paths]}"


def _dictionary_encoded(path: Path) -> tuple[list[str], list[tuple[str, Any]]]:
    """The :func:`plain_columns` of the Parquet file ``path`` (each a column of the file, else the test
    fails) and those of its column chunks that are dictionary-encoded, with their encodings."""
    plain = plain_columns(T.StructType.fromJson(parquet_spark_schema(path)))
    meta = pq.read_metadata(path)
    chunks = [
        meta.row_group(g).column(c) for g in range(meta.num_row_groups) for c in range(meta.num_columns)
    ]
    by_column = {chunk.path_in_schema for chunk in chunks}
    missing = [c for c in plain if c not in by_column]
    assert not missing, f"{path}: {missing} are no Parquet columns of the file ({sorted(by_column)})"
    encoded = [
        (c.path_in_schema, c.encodings)
        for c in chunks
        if c.path_in_schema in plain
        and (c.has_dictionary_page or any("DICTIONARY" in e for e in c.encodings))
    ]
    return plain, encoded


@pytest.mark.parametrize(
    "layout", [x for x in LAYOUTS if x.id in ("v1-classic", "v2-uuid-parquet-sidecars")], ids=lambda x: x.id
)
def test_unique_columns_are_written_without_dictionary(layout: Layout, written: WrittenLayouts) -> None:
    """The columns whose values are unique per file (``plain_columns``: an add's path, stats and
    ``stats_parsed`` bounds) are columns of every Parquet file we write, and none of their column
    chunks is dictionary-encoded (issue #12: the dictionary only cost CPU there). On these tables
    parquet-mr would fall back to plain by itself (values that do not repeat do not compress): the
    next test is the one a dictionary left on fails."""
    table, result = written.get(layout)
    paths = [log_dir(table) / f.name for f in result.files if f.name.endswith(".parquet")]
    assert paths, f"{layout.id}: no Parquet file among {[f.name for f in result.files]}"
    for path in paths:
        plain, encoded = _dictionary_encoded(path)
        if "add" in pq.read_schema(path).names:
            assert {"add.path", "add.stats_parsed.minValues.v"} <= set(plain), (
                f"{path}: plain columns {plain}"
            )
        assert not encoded, f"{path}: dictionary-encoded column chunks {encoded}"


@pytest.mark.spark
def test_unique_columns_stay_plain_where_a_dictionary_would_pay(spark: SparkSession, tmp_path: Path) -> None:
    """24 adds with the same stats: ``add.stats`` and every ``stats_parsed`` bound repeat one value, so
    parquet-mr keeps the dictionary it compresses them with — unless the writer turns it off for
    those columns (``plain_columns``, issue #12), which it does: no dictionary-encoded chunk of them.
    (Fails with the per-column option removed from ``staging._parquet``: ``add.stats`` and the bounds
    are ``PLAIN_DICTIONARY``/``RLE_DICTIONARY``.)"""
    first = [
        protocol(1, 2),
        metadata(
            schema(schema_field("v", "long")), configuration={"delta.checkpoint.writeStatsAsStruct": "true"}
        ),
    ]
    table = write_log(
        tmp_path / "table", [first, [add(f"f-{i:02d}.parquet", stats=_stats(0, 9)) for i in range(24)]]
    )
    result = write_checkpoint(table, 1, CheckpointOptions(spec="v1"), spark=spark)
    [path] = [log_dir(table) / f.name for f in result.files]
    plain, encoded = _dictionary_encoded(path)
    repeated = {"add.stats", "add.stats_parsed.minValues.v", "add.stats_parsed.maxValues.v"}
    assert repeated <= set(plain), f"{path}: plain columns {plain}"
    assert not encoded, f"{path}: dictionary-encoded column chunks {encoded}"
