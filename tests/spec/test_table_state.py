"""``spec.table_state``: normalisation makes states from different readers comparable.

Pure Python (no Spark).
"""

from __future__ import annotations

import json
from typing import Any

from spec.table_state import TableState, dv_id, normalize_file, normalize_tombstone

PROTOCOL: dict[str, Any] = {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["v2Checkpoint", "deletionVectors"],
            "writerFeatures": ["v2Checkpoint", "appendOnly", "v2Checkpoint"]}  # fmt: skip
METADATA: dict[str, Any] = {
    "id": "t-1",
    "name": None,
    "format": {"provider": "parquet", "options": None},
    "schemaString": '{"type":"struct","fields":[]}',
    "partitionColumns": [],
    "configuration": {"delta.checkpointPolicy": "v2"},
    "createdTime": 5,
}
DV: dict[str, Any] = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*k^", "offset": 4, "sizeInBytes": 40,
      "cardinality": 6, "maxRowIndex": 99}  # fmt: skip


def add(path: str, **fields: Any) -> dict[str, Any]:
    return {
        "path": path,
        "partitionValues": {},
        "size": 10,
        "modificationTime": 1,
        "dataChange": True,
        **fields,
    }


def build(files: list[dict[str, Any]], **kwargs: Any) -> TableState:
    return TableState.build(version=3, protocol=PROTOCOL, metadata=METADATA, files=files, **kwargs)


def test_null_fields_are_dropped() -> None:
    """Absent and ``null`` fields are the same: nulls vanish from files, tombstones and metadata."""
    file = normalize_file(add("a", tags=None, deletionVector=None, baseRowId=None, stats=None))
    assert file == {"path": "a", "partitionValues": {}, "size": 10, "modificationTime": 1}
    state = build([add("a")])
    assert "name" not in state.metadata and "description" not in state.metadata
    assert state.metadata["format"] == {"provider": "parquet", "options": {}}


def test_partition_values_keep_null_values() -> None:
    """A null *partition value* is data (the null partition), so it stays; an absent map becomes ``{}``."""
    assert normalize_file(add("a", partitionValues={"p": None}))["partitionValues"] == {"p": None}
    bare = {"path": "b", "size": 1}
    assert normalize_file(bare)["partitionValues"] == {}


def test_stats_are_parsed() -> None:
    """``stats`` is compared as JSON, so two serialisations of the same stats are equal."""
    compact = normalize_file(add("a", stats='{"numRecords":3,"minValues":{"id":1}}'))
    spaced = normalize_file(add("a", stats='{ "minValues": {"id": 1}, "numRecords": 3 }'))
    assert compact["stats"] == spaced["stats"] == {"numRecords": 3, "minValues": {"id": 1}}
    assert normalize_file(add("a", stats="{oops"))["stats"] == {"__unparsable__": "{oops"}
    already = normalize_file(add("a", stats={"numRecords": 2}))
    assert already["stats"] == {"numRecords": 2}


def test_data_change_is_dropped() -> None:
    """``dataChange`` is not table state (checkpoints rewrite it to false)."""
    assert "dataChange" not in normalize_file(add("a", dataChange=True))
    tomb = normalize_tombstone(
        {"path": "a", "deletionTimestamp": 7, "dataChange": True, "stats": "{}", "tags": {}}
    )
    assert tomb == {"path": "a", "deletionTimestamp": 7}, "tombstones keep neither dataChange, stats nor tags"


def test_deletion_vector_drops_max_row_index() -> None:
    """``deletionVector.maxRowIndex`` is transient and dropped; the DV id is storageType+path[@offset]."""
    file = normalize_file(add("a", deletionVector=DV))
    assert "maxRowIndex" not in file["deletionVector"]
    assert dv_id(file["deletionVector"]) == "uab^-aqEH.-t@S}K{vb[*k^@4"
    assert dv_id({"storageType": "i", "pathOrInlineDv": "xyz"}) == "ixyz"
    assert dv_id(None) is None


def test_ordering_is_canonical() -> None:
    """Files sort by (path, DV id), txns by appId, domains by domain, features sorted and deduplicated."""
    state = build(
        [add("b"), add("a", deletionVector=DV), add("a")],
        txns=[{"appId": "z", "version": 1}, {"appId": "a", "version": 2, "lastUpdated": None}],
        domain_metadata=[
            {"domain": "d2", "configuration": "{}"},
            {"domain": "d1", "configuration": "{}", "removed": False},
        ],
    )
    assert [(f["path"], "deletionVector" in f) for f in state.files] == [
        ("a", False),
        ("a", True),
        ("b", False),
    ]
    assert [t["appId"] for t in state.txns] == ["a", "z"] and state.txns[0] == {"appId": "a", "version": 2}
    assert state.domain_metadata == [
        {"domain": "d1", "configuration": "{}"},
        {"domain": "d2", "configuration": "{}"},
    ]
    assert state.protocol["readerFeatures"] == ["deletionVectors", "v2Checkpoint"]
    assert state.protocol["writerFeatures"] == ["appendOnly", "v2Checkpoint"]


def test_order_independent_equality() -> None:
    """Two readers listing the same actions in different orders produce equal comparable states."""
    files = [add("a", stats='{"numRecords":1}'), add("b", partitionValues={"p": "x"})]
    one = build(files, source={"reader": "one"})
    two = build(list(reversed(files)), source={"reader": "two"})
    assert one.comparable() == two.comparable()
    assert one != two, "source differs (it is informative and excluded from comparable())"


def test_json_round_trip() -> None:
    """``to_json_text`` → ``from_json`` gives the same state; the text is deterministic."""
    state = build([add("a", deletionVector=DV, stats='{"numRecords":1}')], source={"hint": "used"})
    text = state.to_json_text()
    again = TableState.from_json(json.loads(text))
    assert again == state and again.to_json_text() == text
    assert text.endswith("\n") and list(json.loads(text)) == sorted(json.loads(text))
    assert state.num_files == 1 and state.total_size == 10
