"""``conformance.compare``: differences are found, named precisely, and selectable by field.

Pure Python (no Spark). Every cross-reader test relies on :func:`assert_states_equal`, so these
tests make sure it cannot pass silently on a real difference.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.compare import assert_states_equal, diff_states, unavailable_fields
from spec.table_state import TableState

DV = {"storageType": "u", "pathOrInlineDv": "abc", "offset": 1, "sizeInBytes": 30, "cardinality": 2}


def state(
    files: list[dict[str, Any]] | None = None,
    *,
    version: int = 4,
    schema: str = '{"type":"struct","fields":[]}',
    config: dict[str, str] | None = None,
    **kwargs: Any,
) -> TableState:
    return TableState.build(
        version=version,
        protocol={"minReaderVersion": 1, "minWriterVersion": 2},
        metadata={"id": "m", "schemaString": schema, "configuration": config or {}, "createdTime": 1},
        files=files if files is not None else [{"path": "a", "size": 1, "stats": '{"numRecords":1}'}],
        **kwargs,
    )


def test_equal_states_have_no_differences() -> None:
    """Identical states: no difference, and ``assert_states_equal`` passes."""
    assert diff_states(state(), state()) == []
    assert_states_equal(state(), state(), context="same")


def test_file_field_difference_names_path_and_field() -> None:
    """A differing file field is reported as ``files[<path>].<field>`` with both values."""
    diffs = diff_states(state([{"path": "a", "size": 1}]), state([{"path": "a", "size": 2}]))
    assert diffs == ["files[a].size: expected 1, actual 2"]


def test_missing_and_extra_files_by_path() -> None:
    """Missing and extra files are listed by path, with a count line first."""
    diffs = diff_states(state([{"path": "a"}, {"path": "b"}]), state([{"path": "b"}, {"path": "c"}]))
    assert diffs[0] == "files: expected 2, actual 2 (1 missing, 1 extra)"
    assert "files: missing in actual: a" in diffs and "files: extra in actual: c" in diffs


def test_deletion_vector_is_part_of_file_identity() -> None:
    """The same path with another DV is a different logical file, unless the DV's identity is ignored."""
    with_dv = state([{"path": "a", "deletionVector": DV}])
    without = state([{"path": "a"}])
    diffs = diff_states(with_dv, without)
    assert "files: missing in actual: a (dv uabc@1)" in diffs and "files: extra in actual: a" in diffs
    partial = state([{"path": "a", "deletionVector": {"cardinality": 2}}])
    ignore = [
        "files.deletionVector.storageType",
        "files.deletionVector.pathOrInlineDv",
        "files.deletionVector.offset",
        "files.deletionVector.sizeInBytes",
    ]
    assert diff_states(with_dv, partial, ignore=ignore) == []
    wrong = state([{"path": "a", "deletionVector": {"cardinality": 3}}])
    assert diff_states(with_dv, wrong, ignore=ignore) == [
        'files[a].deletionVector: expected {"cardinality": 2}, actual {"cardinality": 3}'
    ]


def test_metadata_protocol_version_differences() -> None:
    """Version, metadata configuration keys and protocol fields are reported one by one."""
    a = state(config={"k": "1", "gone": "x"})
    b = TableState.build(
        version=5,
        protocol={"minReaderVersion": 1, "minWriterVersion": 3},
        metadata={
            "id": "m",
            "schemaString": a.metadata["schemaString"],
            "configuration": {"k": "2"},
            "createdTime": 1,
        },
        files=a.files,
    )
    diffs = diff_states(a, b)
    assert "version: expected 4, actual 5" in diffs
    assert "protocol.minWriterVersion: expected 2, actual 3" in diffs
    assert "metadata.configuration['k']: expected '1', actual '2'" in diffs
    assert "metadata.configuration['gone']: expected 'x', actual missing" in diffs


def test_schema_string_compares_parsed_json() -> None:
    """Two serialisations of one schema are equal; a different schema is not."""
    assert (
        diff_states(
            state(schema='{"type":"struct","fields":[]}'), state(schema='{"fields": [], "type": "struct"}')
        )
        == []
    )
    assert diff_states(
        state(schema='{"type":"struct","fields":[]}'), state(schema='{"type":"struct","fields":[1]}')
    )


def test_txns_domains_tombstones_keyed() -> None:
    """txns by appId, domains by domain, tombstones by path."""
    a = state(
        txns=[{"appId": "x", "version": 1, "lastUpdated": 5}],
        domain_metadata=[{"domain": "d", "configuration": "1"}],
        tombstones=[{"path": "t", "deletionTimestamp": 9}],
    )
    b = state(
        txns=[{"appId": "x", "version": 2, "lastUpdated": 6}],
        domain_metadata=[{"domain": "d", "configuration": "2"}],
    )
    diffs = diff_states(a, b)
    assert "txns[x].version: expected 1, actual 2" in diffs
    assert "domainMetadata[d].configuration: expected '1', actual '2'" in diffs
    assert "tombstones: missing in actual: t" in diffs
    assert diff_states(a, b, fields=["txns.appId"]) == []
    assert (
        diff_states(a, b, ignore=["txns.version", "txns.lastUpdated", "domainMetadata", "tombstones"]) == []
    )


def test_fields_and_nested_ignore() -> None:
    """``fields`` selects, ``ignore`` removes at any depth (``files.stats.tightBounds``)."""
    a = state([{"path": "a", "size": 1, "stats": '{"numRecords":1,"tightBounds":true}'}])
    b = state([{"path": "a", "size": 9, "stats": '{"numRecords":1}'}], version=7)
    assert diff_states(a, b, fields=["files.path"]) == []
    assert diff_states(a, b, fields=["files.stats"], ignore=["files.stats.tightBounds"]) == []
    assert diff_states(a, b, fields=["files.stats"]) == [
        'files[a].stats: expected {"numRecords": 1, "tightBounds": true}, actual {"numRecords": 1}'
    ]
    with pytest.raises(ValueError, match="unknown TableState field"):
        diff_states(a, b, fields=["file"])


def test_unavailable_fields_union() -> None:
    """``unavailable_fields`` merges ``source["unavailable"]`` of all states."""
    a = state(source={"unavailable": ["tombstones"]})
    b = state(source={"unavailable": ["files.tags", "tombstones"]})
    assert unavailable_fields(a, b) == ["files.tags", "tombstones"]


def test_assert_message_has_context_and_is_capped() -> None:
    """The AssertionError starts with the context and lists at most 20 differences."""
    a = state([{"path": f"f{i:02d}", "size": 1} for i in range(30)])
    b = state([{"path": f"f{i:02d}", "size": 2} for i in range(30)])
    with pytest.raises(AssertionError) as info:
        assert_states_equal(a, b, context="/t (shape) v4: ours vs theirs")
    text = str(info.value)
    assert text.startswith("/t (shape) v4: ours vs theirs: 30 difference(s)")
    assert text.count("\n  - ") == 20 and "... and 10 more" in text


ROOT = "file:///data/my%20table"
SPELLINGS = ["part=a/f.parquet", "./part=a/f.parquet", "part=a//f.parquet", "part%3Da/f.parquet",
             "/data/my%20table/part=a/f.parquet", "file:///data/my%20table/part=a/./f.parquet"]  # fmt: skip


@pytest.mark.requirement("CKPT-CONTENT-014", "CKPT-CONTENT-003")
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_file_identity_compares_canonical_paths_under_the_root(spelling: str) -> None:
    """Given the table root, a reader reporting one file under another spelling agrees — in ``files`` and
    ``tombstones`` — while another file, or the same spelling without the root, still differs.

    Spec: CKPT-CONTENT-014
    > An implementation MUST compute file identity from the canonical form of `path`, which for a table
    > whose root is the absolute URI `R` is obtained by: …
    Spec: CKPT-CONTENT-003
    > … two file actions as referring to the same logical file exactly when their paths have the same
    > canonical form …
    """
    tomb = {"path": "gone.parquet", "deletionTimestamp": 5}
    expected = state([{"path": "part=a/f.parquet", "size": 1}], tombstones=[tomb])
    actual = state([{"path": spelling, "size": 1}], tombstones=[{**tomb, "path": "./gone.parquet"}])
    assert diff_states(expected, actual, root=ROOT) == [], f"{spelling!r} under {ROOT}"
    assert_states_equal(expected, actual, context=spelling, root=ROOT)
    assert "tombstones: missing in actual: gone.parquet" in diff_states(expected, actual)
    other = state([{"path": spelling.replace("f.parquet", "g.parquet"), "size": 1}], tombstones=[tomb])
    assert diff_states(expected, other, root=ROOT) == [
        "files: expected 1, actual 1 (1 missing, 1 extra)",
        "files: missing in actual: file:/data/my table/part=a/f.parquet",
        "files: extra in actual: file:/data/my table/part=a/g.parquet",
    ], f"{spelling!r}: another file must differ"
    grown = state([{"path": spelling, "size": 2}], tombstones=[tomb])
    assert diff_states(expected, grown, root=ROOT) == [
        "files[file:/data/my table/part=a/f.parquet].size: expected 1, actual 2"
    ]
