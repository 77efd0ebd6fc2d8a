"""``reference_impl.log.naming``: every ``_delta_log`` file kind parsed and formatted, strict vs lenient.

Pure Python (no Spark). Lenient parsing is what readers use (delta-spark's ``FileNames`` regexes);
``LogFileName.conforms`` is the strict, spec-padded form writers must produce.
"""

from __future__ import annotations

import uuid

import pytest

from reference_impl.log.naming import (
    LogFileName,
    classic_checkpoint_name,
    commit_name,
    compaction_name,
    crc_name,
    is_sidecar_temp_name,
    parse_log_file_name,
    part_checkpoint_name,
    sidecar_name,
    sidecar_temp_name,
    uuid_checkpoint_name,
    version_prefix,
)
from reference_impl.storage.local import temp_name
from spec.vocabulary import LogFileKind, TopLevelFormat

TOKEN = uuid.UUID("bd1885fd-6ec0-4370-b0f5-43b5162fd4de")


@pytest.mark.parametrize(
    ("name", "kind", "fields"),
    [
        ("00000000000000000007.json", LogFileKind.COMMIT, {"version": 7}),
        (
            "00000000000000000010.checkpoint.parquet",
            LogFileKind.CHECKPOINT_CLASSIC,
            {"version": 10, "fmt": "parquet"},
        ),
        (
            "00000000000000000010.checkpoint.0000000002.0000000003.parquet",
            LogFileKind.CHECKPOINT_PART,
            {"version": 10, "part": 2, "num_parts": 3, "fmt": "parquet"},
        ),
        (
            f"00000000000000000002.checkpoint.{TOKEN}.json",
            LogFileKind.CHECKPOINT_UUID,
            {"version": 2, "token": str(TOKEN), "fmt": "json"},
        ),
        (
            f"00000000000000000002.checkpoint.{TOKEN}.parquet",
            LogFileKind.CHECKPOINT_UUID,
            {"version": 2, "token": str(TOKEN), "fmt": "parquet"},
        ),
        ("00000000000000000003.crc", LogFileKind.CRC, {"version": 3}),
        (
            "00000000000000000004.00000000000000000009.compacted.json",
            LogFileKind.COMPACTION,
            {"version": 4, "end_version": 9},
        ),
        ("_last_checkpoint", LogFileKind.LAST_CHECKPOINT, {}),
    ],
)
@pytest.mark.requirement("CKPT-NAME-004")
def test_every_kind_parses_strictly(name: str, kind: LogFileKind, fields: dict[str, object]) -> None:
    """Each spec-formed name is classified as its kind, with its numbers, and conforms.

    Spec: CKPT-NAME-004
    "A reader MUST recognise every file whose whole name matches one of the strict checkpoint
    patterns of the table above as a checkpoint file of the kind and version that the name encodes."
    """
    parsed = parse_log_file_name(name)
    assert parsed.kind is kind, f"{name!r} classified as {parsed.kind}"
    for key, value in fields.items():
        assert getattr(parsed, key) == value, (
            f"{name!r}: {key} = {getattr(parsed, key)!r}, expected {value!r}"
        )
    assert parsed.conforms, f"{name!r} should conform to the strict form"


@pytest.mark.requirement("CKPT-NAME-001")
def test_formatters_round_trip() -> None:
    """Every formatter produces a name that parses back to the same kind and numbers, and conforms.

    Spec: CKPT-NAME-001
    "A writer MUST name every classic, multi-part and UUID-named checkpoint file it writes in the
    form given for its kind in the column "Name written by writers" of the table above, with `n` in
    decimal zero-padded to exactly 20 digits and `o` and `p` zero-padded to exactly 10 digits."
    """
    cases: list[tuple[str, LogFileKind, dict[str, object]]] = [
        (commit_name(12), LogFileKind.COMMIT, {"version": 12}),
        (crc_name(12), LogFileKind.CRC, {"version": 12}),
        (classic_checkpoint_name(12), LogFileKind.CHECKPOINT_CLASSIC, {"version": 12}),
        (
            part_checkpoint_name(12, 2, 5),
            LogFileKind.CHECKPOINT_PART,
            {"version": 12, "part": 2, "num_parts": 5},
        ),
        (
            uuid_checkpoint_name(12, TOKEN, TopLevelFormat.JSON),
            LogFileKind.CHECKPOINT_UUID,
            {"version": 12, "fmt": "json"},
        ),
        (
            uuid_checkpoint_name(12, TOKEN, TopLevelFormat.PARQUET),
            LogFileKind.CHECKPOINT_UUID,
            {"version": 12, "fmt": "parquet"},
        ),
        (compaction_name(3, 12), LogFileKind.COMPACTION, {"version": 3, "end_version": 12}),
    ]
    for name, kind, fields in cases:
        parsed = parse_log_file_name(name)
        assert parsed.kind is kind and parsed.conforms, f"{name!r} -> {parsed}"
        for key, value in fields.items():
            assert getattr(parsed, key) == value, f"{name!r}: {key} = {getattr(parsed, key)!r}"
    assert commit_name(12) == "00000000000000000012.json"
    assert part_checkpoint_name(12, 2, 5) == "00000000000000000012.checkpoint.0000000002.0000000005.parquet"
    assert version_prefix(12) == "00000000000000000012."


def test_uuid_checkpoint_name_rejects_other_formats() -> None:
    """A UUID-named checkpoint is JSON or Parquet; anything else is refused."""
    with pytest.raises(ValueError, match="avro"):
        uuid_checkpoint_name(1, TOKEN, "avro")  # type: ignore[arg-type]  # the wrong type is the test


def test_sidecar_name_is_delta_sparks_form() -> None:
    """Sidecar names follow delta-spark (``v.checkpoint.part.numParts.uuid.parquet``), as the golden example."""
    assert sidecar_name(2, 1, 2, TOKEN) == (
        "00000000000000000002.checkpoint.0000000001.0000000002.bd1885fd-6ec0-4370-b0f5-43b5162fd4de.parquet"
    )


@pytest.mark.parametrize(
    ("name", "kind", "version"),
    [
        ("7.json", LogFileKind.COMMIT, 7),
        ("10.checkpoint.parquet", LogFileKind.CHECKPOINT_CLASSIC, 10),
        ("10.checkpoint.2.3.parquet", LogFileKind.CHECKPOINT_PART, 10),
        (f"2.checkpoint.{TOKEN}.json", LogFileKind.CHECKPOINT_UUID, 2),
        ("3.crc", LogFileKind.CRC, 3),
        ("000000000000000000000000001.json", LogFileKind.COMMIT, 1),
    ],
)
@pytest.mark.requirement("CKPT-NAME-005")
def test_unpadded_versions_are_accepted_leniently(name: str, kind: LogFileKind, version: int) -> None:
    """Readers accept any number of version digits (delta-spark ``\\d+``) but such names do not conform.

    Spec: CKPT-NAME-005
    "A reader SHOULD also recognise names that match only the lenient patterns, taking the version,
    part number and part count as the decimal values of the digit runs regardless of their length."
    """
    parsed = parse_log_file_name(name)
    assert (parsed.kind, parsed.version) == (kind, version), f"{name!r} -> {parsed}"
    assert not parsed.conforms, f"{name!r} must not pass the strict check"


@pytest.mark.requirement("CKPT-NAME-008")
def test_non_uuid_token_is_uuid_named_but_not_conforming() -> None:
    """``0010.checkpoint.123.parquet``: any dot-free token makes a UUID-named (V2) checkpoint for delta-spark.

    Spec: CKPT-NAME-008
    "A reader MAY treat `<n>.checkpoint.<token>.json` and `<n>.checkpoint.<token>.parquet` as a
    UUID-named checkpoint for any non-empty `<token>` that contains no dot, whether or not the token
    is a UUID."
    """
    parsed = parse_log_file_name("0010.checkpoint.123.parquet")
    assert parsed.kind is LogFileKind.CHECKPOINT_UUID, parsed
    assert (parsed.version, parsed.token, parsed.fmt) == (10, "123", "parquet")
    assert not parsed.conforms
    padded = parse_log_file_name("00000000000000000010.checkpoint.not-a-uuid.json")
    assert padded.kind is LogFileKind.CHECKPOINT_UUID and not padded.conforms, padded
    upper = parse_log_file_name(f"00000000000000000010.checkpoint.{str(TOKEN).upper()}.json")
    assert upper.kind is LogFileKind.CHECKPOINT_UUID and not upper.conforms, upper


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("00000000000000000010.checkpoint.0000000001.0000000001.parquet", "1-of-1 part: p must be > 1"),
        ("00000000000000000010.checkpoint.0000000003.0000000002.parquet", "part number above the part count"),
        ("00000000000000000010.checkpoint.0000000000.0000000002.parquet", "part numbers start at 1"),
        ("00000000000000000010.checkpoint.1.2.parquet", "unpadded part numbers"),
    ],
)
def test_multipart_names_outside_the_strict_form(name: str, why: str) -> None:
    """Multi-part names that delta-spark's regex accepts but the spec does not: still parts, not conforming."""
    parsed = parse_log_file_name(name)
    assert parsed.kind is LogFileKind.CHECKPOINT_PART, f"{name!r} ({why}) -> {parsed.kind}"
    assert not parsed.conforms, f"{name!r} must not conform: {why}"


def test_one_of_one_part_keeps_its_numbers() -> None:
    """A 1-of-1 part is parsed as part 1 of 1 (the log segment treats it as a complete checkpoint)."""
    parsed = parse_log_file_name("00000000000000000010.checkpoint.0000000001.0000000001.parquet")
    assert (parsed.version, parsed.part, parsed.num_parts) == (10, 1, 1)


@pytest.mark.parametrize(
    "name",
    [
        ".00000000000000000010.checkpoint.parquet.crc",
        ".00000000000000000010.json.crc",
        "._last_checkpoint.crc",
        f".00000000000000000010.checkpoint.parquet.{TOKEN}.tmp",
        temp_name(commit_name(3), TOKEN),
    ],
)
@pytest.mark.requirement("CKPT-NAME-007")
def test_hidden_files_are_hidden(name: str) -> None:
    """Names starting with ``.`` (temp files, Hadoop ``.crc`` companions) are HIDDEN, never a log file.

    Spec: CKPT-NAME-007
    "A reader MUST match checkpoint patterns against the whole file name and MUST ignore every file
    in `_delta_log/` whose name matches no pattern it recognises, in particular names that begin
    with `.` (such as temporary files and Hadoop `.crc` companions) and names with extra suffixes
    such as `.tmp`."
    """
    parsed = parse_log_file_name(name)
    assert parsed.kind is LogFileKind.HIDDEN, f"{name!r} -> {parsed.kind}"
    assert not parsed.kind.is_checkpoint and parsed.version is None


@pytest.mark.parametrize(
    "name",
    [
        "00000000000000000010.checkpoint.parquet.tmp",
        "00000000000000000010.json.bak",
        "x00000000000000000010.json",
        "00000000000000000010.checkpoint.a.b.json",
        "00000000000000000010.checkpoint..json",
        "00000000000000000010.checkpoint.orc",
        "_staged_commits",
        "00000000000000000010.json.",
    ],
)
@pytest.mark.requirement("CKPT-NAME-007")
def test_whole_name_match_only(name: str) -> None:
    """Patterns match the whole name: extra prefixes/suffixes make the file OTHER (ignored).

    Spec: CKPT-NAME-007
    "A reader MUST match checkpoint patterns against the whole file name and MUST ignore every file
    in `_delta_log/` whose name matches no pattern it recognises, in particular names that begin
    with `.` (such as temporary files and Hadoop `.crc` companions) and names with extra suffixes
    such as `.tmp`."
    """
    parsed = parse_log_file_name(name)
    assert parsed.kind is LogFileKind.OTHER, f"{name!r} -> {parsed.kind}"
    assert not parsed.conforms


def test_is_checkpoint() -> None:
    """Only the three checkpoint kinds are checkpoints."""
    checkpoints = {k for k in LogFileKind if k.is_checkpoint}
    assert checkpoints == {
        LogFileKind.CHECKPOINT_CLASSIC,
        LogFileKind.CHECKPOINT_PART,
        LogFileKind.CHECKPOINT_UUID,
    }


def test_parsed_names_are_values() -> None:
    """``LogFileName`` is a frozen value: equal names parse equal."""
    assert parse_log_file_name("00000000000000000001.json") == LogFileName(
        "00000000000000000001.json", LogFileKind.COMMIT, version=1
    )


@pytest.mark.requirement("CKPT-CLEAN-027")
def test_sidecar_temp_names_are_built_and_recognised_exactly() -> None:
    """One grammar for the writer's sidecar temporaries and the cleaner that collects them: the builder's
    names, which are the stores' own temporaries, are recognised, and no near miss is (a Hadoop ``.crc``, an uppercase or hyphen-less UUID, a
    name that is not a Parquet sidecar's, a doubly hidden name); the builder refuses such a sidecar name.

    Spec: CKPT-CLEAN-027
    "A cleaner MAY delete a file directly in `_delta_log/_sidecars/` whose name is a sidecar temporary
    name …"
    """
    sidecar = sidecar_name(2, 1, 1, TOKEN)
    temp = sidecar_temp_name(sidecar, TOKEN)
    assert temp == f".{sidecar}.{TOKEN}.tmp" == temp_name(sidecar, TOKEN)
    assert is_sidecar_temp_name(temp) and is_sidecar_temp_name(sidecar_temp_name("x.parquet", TOKEN))
    stored = temp_name(sidecar, uuid.uuid4())  # what a store or task sink writes a sidecar under first
    assert is_sidecar_temp_name(stored), f"a cleaner would never collect {stored}"
    near_misses = [
        f"{temp}.crc",
        f".{temp}.crc",
        f".{sidecar}.crc",
        f".{sidecar}.tmp",
        f".{sidecar}.{str(TOKEN).upper()}.tmp",
        f".{sidecar}.{TOKEN.hex}.tmp",
        f".{sidecar}.names.{TOKEN}.tmp",
        f".{sidecar}.{TOKEN}.tmp\n",
        f"..{sidecar}.{TOKEN}.tmp",
        f"./{sidecar}.{TOKEN}.tmp",
        f".parquet.{TOKEN}.tmp",
        temp[1:],
        sidecar,
    ]
    assert [n for n in near_misses if is_sidecar_temp_name(n)] == []
    for bad in (f".{sidecar}", "a/b.parquet", "x.json", ""):
        with pytest.raises(ValueError, match="not a sidecar name"):
            sidecar_temp_name(bad, TOKEN)
