"""``reference_impl.log.last_checkpoint``: the checksum, parsing and serialisation of ``_last_checkpoint``.

Pure Python (no Spark). The test vectors are those of protocol-notes §2.6 / spec §15.2, computed
independently and agreeing with delta-spark.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from reference_impl.errors import LastCheckpointCorrupt
from reference_impl.log.last_checkpoint import (
    LastCheckpoint,
    LastCheckpointV2,
    SidecarRef,
    canonical_string,
    checksum,
    checksum_by_path,
    java_double_to_string,
    parse_last_checkpoint,
)

PROTOCOL_SAMPLE = (
    '{"k0":"\'v 0\'", "checksum": "adsaskfljadfkjadfkj", '
    '"k1":{"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}'
)
SUITE_SAMPLE = (
    '{"version":1,"size":2,"parts":3,"sizeInBytes":20,"numOfAddFiles":2,"checkpointSchema":'
    '{"type":"struct","fields":[{"name":"c1","type":"integer","nullable":false,"metadata":{}}]}}'
)
ARRAY_SAMPLE = {"a": list(range(12))}


@pytest.mark.parametrize(
    ("text", "canonical", "expected"),
    [
        (
            PROTOCOL_SAMPLE,
            '"k0"="%27v%200%27","k1"+"k2"=2,"k1"+"k3"+0="v3","k1"+"k3"+1+0=1,"k1"+"k3"+1+1=2,'
            '"k1"+"k3"+2+"k4"="v4","k1"+"k3"+2+"k5"+0="v5","k1"+"k3"+2+"k5"+1="v6","k1"+"k3"+2+"k5"+2="v7"',
            "6a92d155a59bf2eecbd4b4ec7fd1f875",
        ),
        (
            json.dumps(ARRAY_SAMPLE),
            '"a"+0=0,"a"+10=10,"a"+11=11,"a"+1=1,"a"+2=2,"a"+3=3,"a"+4=4,"a"+5=5,"a"+6=6,"a"+7=7,"a"+8=8,"a"+9=9',
            "e6e7f7501e532040b7a2abe0a2140083",
        ),
        (
            '{"version":2,"size":5,"sizeInBytes":13865,"numOfAddFiles":3}',
            '"numOfAddFiles"=3,"size"=5,"sizeInBytes"=13865,"version"=2',
            "44ac021ea4bd0b0182bb3ec79d66f7f2",
        ),
        (SUITE_SAMPLE, None, "524d4e2226f3c3f923df4ee42dae347e"),
        (
            '{"version":10,"size":4,"note":"a b/€~","flags":[true,false,null],"empty":{},"none":[]}',
            '"flags"+0=true,"flags"+1=false,"flags"+2=null,"note"="a%20b%2F%E2%82%AC~","size"=4,"version"=10',
            "84ec1e09f23a74dbdac99ee05338d7ca",
        ),
        (
            '{"version":1,"tags":{"checksum":"x"},"checksum":"ignored"}',
            '"tags"+"checksum"="x","version"=1',
            "0b1fccd1be77892cd24c6b781e0270f4",
        ),
        ("{}", "", "d41d8cd98f00b204e9800998ecf8427e"),
    ],
)
@pytest.mark.requirement("CKPT-CKSUM-001")
def test_checksum_vectors(text: str, canonical: str | None, expected: str) -> None:
    """The canonical form and MD5 of each spec test vector are exactly delta-spark's.

    Spec: CKPT-CKSUM-001
    "When a writer includes `checksum` in `_last_checkpoint`, its value MUST be the checksum that
    §15.1 computes for the written text."
    """
    document = json.loads(text)
    if canonical is not None:
        assert canonical_string(document) == canonical, f"canonical form of {text}"
    assert checksum(document) == expected, f"checksum of {text}"


def test_array_sort_orders_differ() -> None:
    """``{"a":[0..11]}``: delta-spark sorts ``path=value`` strings, PROTOCOL's wording sorts paths — different MD5s."""
    assert checksum(ARRAY_SAMPLE) == "e6e7f7501e532040b7a2abe0a2140083"
    assert checksum_by_path(ARRAY_SAMPLE) == "82f777c9575dcbb8831ce028cdf8e5d5"


def test_checksum_by_path_agrees_without_prefix_paths() -> None:
    """Without arrays of 11+ scalars both orders give the same checksum (PROTOCOL sample)."""
    document = json.loads(PROTOCOL_SAMPLE)
    assert checksum_by_path(document) == checksum(document) == "6a92d155a59bf2eecbd4b4ec7fd1f875"


@pytest.mark.requirement("CKPT-CKSUM-005")
def test_parse_accepts_the_delta_spark_sort_and_rejects_the_path_sort() -> None:
    """A hint whose checksum was computed by path order (PROTOCOL's literal text) is corrupt for a reader.

    Spec: CKPT-CKSUM-005
    "A reader that validates `_last_checkpoint` and finds a checksum mismatch or a duplicate key
    MUST treat the hint as corrupt, which means ignoring it as if it were absent."
    """
    document: dict[str, Any] = {"version": 3, "size": 4, "tags": {f"k{i:02d}": "v" for i in range(2)}}
    document["v2Checkpoint"] = {
        "path": "00000000000000000003.checkpoint.x.json",
        "sizeInBytes": 1,
        "modificationTime": 2,
        "nonFileActions": [{"protocol": {"writerFeatures": [f"f{i}" for i in range(12)]}}],
    }
    good = parse_last_checkpoint(json.dumps({**document, "checksum": checksum(document)}))
    assert good.version == 3 and good.checksum == checksum(document)
    assert checksum_by_path(document) != checksum(document)
    with pytest.raises(LastCheckpointCorrupt, match="checksum mismatch"):
        parse_last_checkpoint(json.dumps({**document, "checksum": checksum_by_path(document)}))


def _full_hint() -> LastCheckpoint:
    return LastCheckpoint(
        version=6,
        size=45,
        parts=None,
        size_in_bytes=143276,
        num_of_add_files=30,
        checkpoint_schema={"type": "struct", "fields": []},
        tags={"a": "b"},
        v2_checkpoint=LastCheckpointV2(
            path="00000000000000000006.checkpoint.5f4f16f6-b3cd-4cda-ae57-0ecf5adec99b.json",
            size_in_bytes=6821,
            modification_time=1795303301878,
            non_file_actions=({"checkpointMetadata": {"version": 6}},),
            sidecar_files=(SidecarRef("s1.parquet", 10, 11),),
        ),
    )


@pytest.mark.requirement("CKPT-LAST-009")
def test_serialisation_order_and_round_trip() -> None:
    """``version``, ``size``, ``parts`` come first and ``checksum`` last; parsing the text gives the hint back.

    Spec: CKPT-LAST-009
    "A writer MUST write `version`, `size` and, when present, `parts` as the first members of the
    `_last_checkpoint` object, in that order."
    """
    multi = LastCheckpoint(version=4, size=9, parts=3, size_in_bytes=100, num_of_add_files=6)
    keys = list(json.loads(multi.to_json_text()))
    assert keys == ["version", "size", "parts", "sizeInBytes", "numOfAddFiles", "checksum"], keys
    hint = _full_hint()
    text = hint.to_json_text()
    keys = list(json.loads(text))
    assert keys[:2] == ["version", "size"] and keys[-1] == "checksum", keys
    assert "parts" not in keys, "parts is written only for multi-part checkpoints"
    parsed = parse_last_checkpoint(text)
    assert parsed.checksum == checksum(json.loads(text))
    assert (parsed.version, parsed.size, parsed.size_in_bytes, parsed.num_of_add_files) == (6, 45, 143276, 30)
    assert parsed.v2_checkpoint == hint.v2_checkpoint
    assert parsed.tags == {"a": "b"} and parsed.checkpoint_schema == {"type": "struct", "fields": []}
    assert parsed.to_json_text() == text, "parse → serialise must reproduce the text"


def test_serialise_without_checksum() -> None:
    """``with_checksum=False`` writes no checksum member (and omits absent fields)."""
    text = LastCheckpoint(version=1, size=2).to_json_text(with_checksum=False)
    assert text == '{"version":1,"size":2}'


def test_missing_checksum_is_accepted() -> None:
    """A hint without ``checksum`` is valid (delta-spark's backward compatibility)."""
    parsed = parse_last_checkpoint('{"version":7,"size":12}')
    assert (parsed.version, parsed.size, parsed.checksum) == (7, 12, None)


@pytest.mark.requirement("CKPT-LAST-012")
def test_unknown_members_are_ignored() -> None:
    """Unknown members do not make the hint corrupt (they are part of the checksummed text).

    Spec: CKPT-LAST-012
    "A reader MUST ignore members of `_last_checkpoint` that it does not know."
    """
    document = {"version": 7, "size": 12, "somethingNew": {"x": [1, 2]}}
    parsed = parse_last_checkpoint(json.dumps({**document, "checksum": checksum(document)}))
    assert parsed.version == 7 and parsed.raw is not None and parsed.raw["somethingNew"] == {"x": [1, 2]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ('{"version":1,"size":2', "not valid JSON"),
        ('{"version":1,"si', "not valid JSON"),
        ('{"version":1,"version":2,"size":3}', "duplicate key"),
        (
            '{"version":1,"size":2,"v2Checkpoint":{"path":"p","path":"q","sizeInBytes":1,"modificationTime":1}}',
            "duplicate key",
        ),
        ('{"version":1,"size":2,"checksum":"00000000000000000000000000000000"}', "checksum mismatch"),
        ("[1,2]", "not a JSON object"),
        ('{"size":2}', "version"),
        ('{"version":1}', "size"),
        ('{"version":"1","size":2}', "version"),
        ('{"version":1.5,"size":2}', "version"),
        ('{"version":true,"size":2}', "version"),
        ('{"version":-1,"size":2}', "version"),
        ('{"version":1,"size":2,"parts":0}', "parts"),
        ('{"version":1,"size":2,"checksum":5}', "checksum"),
        ('{"version":1,"size":2,"tags":{"a":1}}', "tags"),
        ('{"version":1,"size":2,"checkpointSchema":"x"}', "checkpointSchema"),
        ('{"version":1,"size":2,"tags":' + "[" * 5000 + "]" * 5000 + "}", "not valid JSON"),
        ('{"version":1,"size":2,"v2Checkpoint":{"sizeInBytes":1,"modificationTime":1}}', "path"),
        (
            '{"version":1,"size":2,"v2Checkpoint":{"path":"p","sizeInBytes":1,"modificationTime":1,"nonFileActions":[{}]}}',
            "nonFileActions",
        ),
    ],
)
@pytest.mark.requirement("CKPT-READ-010")
def test_parse_errors(text: str, message: str) -> None:
    """Every malformed hint is ``LastCheckpointCorrupt`` naming the file and the problem.

    Spec: CKPT-READ-010
    "A reader MUST treat a `_last_checkpoint` that is empty, is not a JSON object, lacks `version`
    or `size`, has a member of the wrong type, or is corrupt by CKPT-CKSUM-005 exactly as if the
    file did not exist."
    """
    with pytest.raises(LastCheckpointCorrupt) as info:
        parse_last_checkpoint(text, path="/t/_delta_log/_last_checkpoint")
    assert message in info.value.message, f"{text!r}: {info.value.message}"
    assert info.value.path == "/t/_delta_log/_last_checkpoint"
    assert info.value.code == "LAST_CHECKPOINT_CORRUPT"


def test_size_minus_one_is_accepted() -> None:
    """``size = -1`` (delta-spark's "unknown", written when a hint is recovered by listing) parses."""
    assert parse_last_checkpoint('{"version":3,"size":-1}').size == -1


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (23.45, "23.45"),
        (1.0e10, "1.0E10"),
        (1.0, "1.0"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (100.0, "100.0"),
        (1234567.0, "1234567.0"),
        (12345678.0, "1.2345678E7"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (-2.5e-7, "-2.5E-7"),
        (123.456e20, "1.23456E22"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_java_double_to_string(value: float, text: str) -> None:
    """Floats render as Java's ``Double.toString`` (plain in [1e-3, 1e7), else ``d.dddE±n``)."""
    assert java_double_to_string(value) == text


def test_floats_in_checksum_use_java_rendering() -> None:
    """A float leaf contributes its Java rendering (``1.0E10``) to the canonical form."""
    assert canonical_string({"x": 1.0e10, "y": 23.45}) == '"x"=1.0E10,"y"=23.45'
