"""Writer conformance: inspect what each writer profile wrote on each source shape.

Every test opens the files itself (:mod:`conformance.decode`: pyarrow and ``json``, the spec's
file-name grammar and checksum written in the suite), so no reader — and no code of the reference
implementation — is trusted. Parametrised over ``writer_profile`` × ``shape_name``; a profile that promises
a V2 checkpoint is run on the shape's ``v2`` variant.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.adapter import AdapterError
from conformance.decode.checkpoint import (
    DecodedCheckpoint,
    decode_checkpoint,
    read_last_checkpoint,
    sidecar_name,
)
from conformance.decode.checksum import checksum
from conformance.decode.files import diff as files_diff
from conformance.decode.files import files
from conformance.decode.names import SIDECAR_DIR, parse_name
from conformance.decode.paths import canonical_path, table_root_uri
from conformance.decode.spark_hash import part_of, spark_xxhash64
from conformance.plugin import Checks
from conformance.suite.conftest import (
    WrittenTable,
    attempt,
    fail_with,
    from_template,
    listing,
    new_checkpoint,
    shape_variant,
)
from conformance.tables.builder import TableBuilder, rows
from conformance.tables.shapes import BUILDERS, Variant, new_table
from spec.schemas import validator
from spec.vocabulary import CheckpointNaming, CheckpointSpec, LogFileKind, TopLevelFormat

_UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _decoded(w: WrittenTable) -> DecodedCheckpoint:
    return w.decoded()


def _is_v2(d: DecodedCheckpoint) -> bool:
    return bool(d.actions("checkpointMetadata"))


@pytest.mark.requirement("CKPT-NAME-001", "CKPT-NAME-003")
def test_checkpoint_files_have_spec_names(written: WrittenTable) -> None:
    """Every checkpoint file a writer writes has the strict name of its kind.

    Spec: CKPT-NAME-001
    > A writer MUST name every classic, multi-part and UUID-named checkpoint file it writes in the form
    > given for its kind in the column "Name written by writers" of the table above, with n in decimal
    > zero-padded to exactly 20 digits and o and p zero-padded to exactly 10 digits.
    Spec: CKPT-NAME-003
    > The token u in a UUID-named checkpoint name MUST be an RFC 4122 UUID in its canonical lowercase
    > form of 8-4-4-4-12 hexadecimal digits.
    """
    for name in written.checkpoint:
        parsed = parse_name(name)
        assert parsed.kind.is_checkpoint and parsed.strict, (
            f"{written.label}: {name} is not a spec-conforming name"
        )


@pytest.mark.requirement("CKPT-FEAT-001", "CKPT-FEAT-002", "CKPT-FEAT-004")
def test_checkpoint_kind_matches_spec_and_feature(written: WrittenTable, check: Checks) -> None:
    """UUID-named files are V2, multi-part ones V1, V2 appears only where the table supports it and
    multi-part only where it does not.

    Spec: CKPT-FEAT-001
    > A writer MUST give every UUID-named checkpoint it writes the V2 spec and every multi-part checkpoint
    > it writes the V1 spec.
    Spec: CKPT-FEAT-002
    > A writer MUST NOT write a V2-spec checkpoint, under any name, for a version whose protocol does not
    > support v2Checkpoint.
    Spec: CKPT-FEAT-004
    > A writer MUST NOT write a multi-part checkpoint for a version whose protocol supports v2Checkpoint.
    """
    decoded = _decoded(written)
    v2 = _is_v2(decoded)
    if decoded.kind is LogFileKind.CHECKPOINT_UUID:
        check(
            "CKPT-FEAT-001",
            v2,
            f"{written.label}: UUID-named {written.checkpoint[0]} has no checkpointMetadata",
        )
    if decoded.kind is LogFileKind.CHECKPOINT_PART:
        check(
            "CKPT-FEAT-001",
            not v2,
            f"{written.label}: multi-part {written.checkpoint} carries checkpointMetadata",
        )
    supports = "v2Checkpoint" in (written.shape.state.protocol.get("readerFeatures") or [])
    check(
        "CKPT-FEAT-002",
        supports or not v2,
        f"{written.label}: V2 {written.checkpoint} on a table without v2Checkpoint",
    )
    if decoded.kind is LogFileKind.CHECKPOINT_PART:
        check(
            "CKPT-FEAT-004",
            not supports,
            f"{written.label}: multi-part {written.checkpoint} on a table with v2Checkpoint",
        )


@pytest.mark.requirement(
    "CKPT-CONTENT-001",
    "CKPT-CONTENT-002",
    "CKPT-CONTENT-004",
    "CKPT-CONTENT-005",
    "CKPT-CONTENT-006",
    "CKPT-CONTENT-008",
    "CKPT-CONTENT-009",
)
def test_checkpoint_holds_exactly_the_state(written: WrittenTable, check: Checks) -> None:
    """The actions in the checkpoint files are exactly the state of the version (by construction). Each
    difference is scored under the rule of its part of the state, and every one under CKPT-CONTENT-001.

    Spec: CKPT-CONTENT-001 (and -002, -004, -005, -006, -008, -009)
    > A checkpoint named for version n MUST describe exactly the table state obtained by reconciling the
    > actions of all commits from version 0 through version n.
    """
    from conformance.compare import DEFAULT_MAX_DIFFS, diff_states

    d = _decoded(written)
    expected = written.shape.state
    protocols, metadatas = d.actions("protocol"), d.actions("metaData")
    check(
        "CKPT-CONTENT-002",
        len(protocols) == 1 and len(metadatas) == 1,
        f"{written.label}: {len(protocols)} protocol and {len(metadatas)} metaData actions in {written.checkpoint}",
    )
    state = d.state(fallback=expected)  # a missing or doubled protocol/metaData was scored above
    ignore = [] if d.has_json_stats else ["files.stats"]
    diffs = diff_states(expected, state, ignore=ignore, root=table_root_uri(written.shape.path))
    where = f"{written.label}: checkpoint content vs expected"
    one_each = len(protocols) == 1 and len(metadatas) == 1
    check(
        "CKPT-CONTENT-001",
        one_each and not diffs,
        f"{where}: {len(protocols)} protocol, {len(metadatas)} metaData, {len(diffs)} other difference(s)",
    )
    by_rule: dict[str, list[str]] = {}
    for diff in diffs:
        by_rule.setdefault(_content_rule(diff), []).append(diff)
    for rule in dict.fromkeys(_CONTENT_RULES.values()):  # each part is compared: passed unless it differs
        found = by_rule.get(rule, [])
        shown = "".join(f"\n  - {diff}" for diff in found[:DEFAULT_MAX_DIFFS])
        more = f"\n  ... and {len(found) - DEFAULT_MAX_DIFFS} more" if len(found) > DEFAULT_MAX_DIFFS else ""
        check(rule, not found, f"{where}: {len(found)} difference(s){shown}{more}")


#: The CKPT-CONTENT rule a state difference breaks, by the difference's prefix: identity of the live files
#: (-004), their fields (-005), tombstones (-006), txns (-008), domain metadata (-009), protocol and
#: metadata (-002); a version difference breaks only the whole (-001).
_CONTENT_RULES = {
    "files[": "CKPT-CONTENT-005",
    "files": "CKPT-CONTENT-004",
    "tombstones": "CKPT-CONTENT-006",
    "txns": "CKPT-CONTENT-008",
    "domainMetadata": "CKPT-CONTENT-009",
    "protocol": "CKPT-CONTENT-002",
    "metadata": "CKPT-CONTENT-002",
}


def _content_rule(diff: str) -> str:
    return next(
        (rule for prefix, rule in _CONTENT_RULES.items() if diff.startswith(prefix)), "CKPT-CONTENT-001"
    )


@pytest.mark.requirement("CKPT-CONTENT-010", "CKPT-V2-014")
def test_checkpoint_has_no_commit_info_or_cdc(written: WrittenTable) -> None:
    """No commitInfo or cdc action is ever written into a checkpoint.

    Spec: CKPT-CONTENT-010
    > A checkpoint MUST NOT contain any commitInfo or cdc action.
    """
    kinds = {k for r in _decoded(written).all_rows for k in r}
    assert not kinds & {"commitInfo", "cdc"}, (
        f"{written.label}: found {sorted(kinds & {'commitInfo', 'cdc'})}"
    )


@pytest.mark.requirement("CKPT-CONTENT-011")
def test_file_actions_have_data_change_false(written: WrittenTable) -> None:
    """Every add and remove in a checkpoint has dataChange = false.

    Spec: CKPT-CONTENT-011
    > A writer SHOULD set dataChange to false in every add and remove action it writes into a checkpoint.
    """
    d = _decoded(written)
    bad = [a["path"] for a in [*d.actions("add"), *d.actions("remove")] if a.get("dataChange") is not False]
    assert not bad, f"{written.label}: dataChange not false for {bad[:5]}"


@pytest.mark.requirement("CKPT-SCHEMA-001")
def test_each_row_holds_exactly_one_action(written: WrittenTable) -> None:
    """Every Parquet row of the checkpoint holds exactly one action column.

    Spec: CKPT-SCHEMA-001
    > Every row of a Parquet checkpoint file MUST hold exactly one action, stored in the nullable
    > top-level struct column named after its action kind, with every other top-level column of that row
    > null.
    """
    d = _decoded(written)
    for f in [*d.top, *d.sidecars]:
        multi = [r for r in f.rows if len(r) != 1]
        assert not multi and not f.null_rows, (
            f"{written.label}: {f.name} has {len(multi)} rows with several actions and {f.null_rows} empty rows"
        )


def _nullable_everywhere(field: Any, where: str, out: list[str]) -> None:
    import pyarrow as pa

    if not field.nullable:
        out.append(where)
    t = field.type
    if pa.types.is_struct(t):
        for child in t:
            _nullable_everywhere(child, f"{where}.{child.name}", out)
    elif pa.types.is_list(t):
        _nullable_everywhere(t.value_field, f"{where}.element", out)
    elif pa.types.is_map(t):
        _nullable_everywhere(t.item_field, f"{where}.value", out)


@pytest.mark.requirement("CKPT-SCHEMA-003")
def test_every_parquet_field_is_optional(written: WrittenTable) -> None:
    """Every field of every Parquet checkpoint file is optional (map keys excepted).

    Spec: CKPT-SCHEMA-003
    > A writer SHOULD declare every field of a checkpoint file, at every nesting level, as optional
    > (nullable), except map keys.
    """
    d = _decoded(written)
    required: list[str] = []
    for f in [*d.top, *d.sidecars]:
        if f.schema is not None:
            for field in f.schema:
                _nullable_everywhere(field, f"{f.name}:{field.name}", required)
    assert not required, f"{written.label}: required fields: {required[:8]}"


@pytest.mark.requirement("CKPT-SCHEMA-005", "CKPT-SCHEMA-006")
def test_remove_has_no_stats_or_tags(written: WrittenTable, check: Checks) -> None:
    """remove actions in checkpoints carry no stats and no tags (MUST), and the Parquet files leave the
    fields out of the remove struct (SHOULD); each part is scored under its own requirement.

    Spec: CKPT-SCHEMA-005
    > In every Parquet checkpoint file, the stats and tags fields of the remove struct, where the file has
    > them, MUST be null in every row.
    Spec: CKPT-SCHEMA-006
    > A writer SHOULD leave the stats and tags fields out of the remove struct of every checkpoint file.
    """
    d = _decoded(written)
    bad = [r["path"] for r in d.actions("remove") if "stats" in r or "tags" in r]
    check("CKPT-SCHEMA-005", not bad, f"{written.label}: remove with stats/tags: {bad[:5]}")
    for f in [*d.top, *d.sidecars]:
        if f.schema is None or "remove" not in f.schema.names:
            continue
        struct = f.schema.field("remove").type
        kept = sorted({struct.field(i).name for i in range(struct.num_fields)} & {"stats", "tags"})
        check("CKPT-SCHEMA-006", not kept, f"{written.label}: {f.name}: the remove struct has {kept}")


@pytest.mark.requirement("CKPT-SCHEMA-007")
def test_protocol_feature_lists_match_versions(written: WrittenTable) -> None:
    """readerFeatures/writerFeatures are present exactly when the protocol versions use table features.

    Spec: CKPT-SCHEMA-007
    > readerFeatures MUST be a non-null list if minReaderVersion is 3 or more and null otherwise, and
    > writerFeatures MUST be a non-null list if minWriterVersion is 7 or more and null otherwise.
    """
    protocols = _decoded(written).actions("protocol")
    if len(protocols) != 1:
        pytest.skip(
            f"not compared: {len(protocols)} protocol actions (test_checkpoint_holds_exactly_the_state)"
        )
    (protocol,) = protocols
    assert ("readerFeatures" in protocol) == (protocol["minReaderVersion"] >= 3), (
        f"{written.label}: {protocol}"
    )
    assert ("writerFeatures" in protocol) == (protocol["minWriterVersion"] >= 7), (
        f"{written.label}: {protocol}"
    )


def _require_v2(written: WrittenTable) -> DecodedCheckpoint:
    d = _decoded(written)
    if not _is_v2(d):
        pytest.skip(f"n.a.: {written.label} wrote a V1 checkpoint")
    return d


@pytest.mark.requirement("CKPT-V2-001", "CKPT-V2-002")
def test_v2_has_one_checkpoint_metadata_with_its_version(written: WrittenTable) -> None:
    """A V2 checkpoint has exactly one checkpointMetadata, in the top-level file, naming its version.

    Spec: CKPT-V2-001
    > A V2-spec checkpoint MUST contain exactly one checkpointMetadata action, in its top-level file.
    Spec: CKPT-V2-002
    > The version field of a checkpoint's checkpointMetadata action MUST equal the version in the
    > checkpoint's file name.
    """
    d = _require_v2(written)
    top = [r["checkpointMetadata"] for f in d.top for r in f.rows if "checkpointMetadata" in r]
    assert len(top) == 1 and len(d.actions("checkpointMetadata")) == 1, f"{written.label}: {len(top)} in top"
    assert top[0]["version"] == d.version, f"{written.label}: checkpointMetadata.version {top[0]['version']}"


@pytest.mark.requirement("CKPT-V2-003", "CKPT-V2-004", "CKPT-SIDE-002")
def test_v2_action_placement(written: WrittenTable, check: Checks) -> None:
    """Non-file actions only in the top-level file; sidecars hold only add/remove; never a mix.

    Spec: CKPT-V2-003
    > A V2-spec checkpoint MUST store every non-file action in its top-level file.
    Spec: CKPT-V2-004
    > A V2-spec checkpoint whose top-level file contains a sidecar action MUST NOT contain any add or
    > remove action in its top-level file.
    Spec: CKPT-SIDE-002
    > Every row of a sidecar file MUST hold an add action or a remove action.
    """
    d = _require_v2(written)
    for f in d.sidecars:
        other = sorted({k for r in f.rows for k in r} - {"add", "remove"})
        check("CKPT-SIDE-002", not other, f"{written.label}: sidecar {f.name} holds {other}")
        check("CKPT-V2-003", not other, f"{written.label}: non-file actions {other} in sidecar {f.name}")
    top_kinds = {k for f in d.top for r in f.rows for k in r}
    if "sidecar" in top_kinds:
        inline = sorted(top_kinds & {"add", "remove"})
        check(
            "CKPT-V2-004",
            not inline,
            f"{written.label}: inline {inline} next to sidecars in {written.checkpoint}",
        )


@pytest.mark.requirement("CKPT-V2-005")
def test_v2_json_lines_are_valid_actions(written: WrittenTable) -> None:
    """Each line of a JSON top-level file is one valid single-action object.

    Spec: CKPT-V2-005
    > A JSON top-level file MUST be UTF-8 text holding one action per line, each line a JSON object
    > valid against schemas/checkpoint_action.schema.json.
    """
    _require_v2(written)
    name = written.checkpoint[0]
    if not name.endswith(".json"):
        pytest.skip(f"n.a.: {name} is Parquet")
    check = validator("checkpoint_action.schema.json")
    for number, line in enumerate((written.log_dir / name).read_text("utf-8").splitlines(), start=1):
        errors = list(check.iter_errors(json.loads(line)))
        assert not errors, f"{written.label}: {name} line {number}: {errors[0].message}"


@pytest.mark.requirement("CKPT-V2-006")
def test_v2_checkpoint_metadata_tags_are_exact(written: WrittenTable) -> None:
    """The well-known checkpointMetadata tags a writer records are exact.

    Spec: CKPT-V2-006
    > Each well-known tag a writer records MUST be exact: sidecarNumActions the decimal count of rows across
    > all referenced sidecars, sidecarSizeInBytes the decimal sum of their byte lengths, numOfAddFiles …
    """
    d = _require_v2(written)
    if d.missing:
        pytest.skip(f"not compared: {written.label}: sidecar(s) {d.missing} missing (CKPT-SIDE-001)")
    tags = d.actions("checkpointMetadata")[0].get("tags") or {}
    actual = {
        "sidecarNumActions": str(sum(len(f.rows) for f in d.sidecars)),
        "sidecarSizeInBytes": str(sum((written.log_dir / f.name).stat().st_size for f in d.sidecars)),
        "numOfAddFiles": str(len(d.actions("add"))),
    }
    for tag, value in actual.items():
        if tag in tags:
            assert tags[tag] == value, f"{written.label}: tag {tag}={tags[tag]}, files say {value}"


@pytest.mark.requirement("CKPT-SIDE-001", "CKPT-SIDE-004", "CKPT-SIDE-010", "CKPT-SIDE-011")
def test_sidecar_actions_describe_their_files(written: WrittenTable, check: Checks) -> None:
    """Sidecars live in _delta_log/_sidecars, are named by bare unreserved names, with exact sizes; each
    part is scored under its own requirement.

    Spec: CKPT-SIDE-001
    > A writer MUST write every sidecar file as a Parquet file directly inside
    > <table>/_delta_log/_sidecars/.
    Spec: CKPT-SIDE-004
    > The sizeInBytes of a sidecar action MUST equal the exact length in bytes of the sidecar file it
    > references.
    Spec: CKPT-SIDE-010
    > A writer MUST set the path of a sidecar action, and of each v2Checkpoint.sidecarFiles entry, to the
    > bare file name of the sidecar, without scheme, authority or directory.
    Spec: CKPT-SIDE-011
    > A writer MUST name sidecar files using only the characters `A`–`Z`, `a`–`z`, `0`–`9`, `-`, `.`, `_`
    > and `~`, so that a name and its URI encoding are the same string.
    """
    d = _require_v2(written)
    for action in d.actions("sidecar"):
        raw = str(action["path"])
        where = f"{written.label}: sidecar {raw!r}"
        check("CKPT-SIDE-010", "/" not in raw and ":" not in raw, f"{where}: not a bare name")
        check("CKPT-SIDE-011", set(raw) <= _UNRESERVED, f"{where}: needs URI encoding")
        path = written.log_dir / SIDECAR_DIR / sidecar_name(action)
        if check("CKPT-SIDE-001", path.is_file(), f"{where}: {path} missing"):
            size = path.stat().st_size
            check(
                "CKPT-SIDE-004",
                size == action["sizeInBytes"],
                f"{where}: {size} bytes, action says {action['sizeInBytes']}",
            )


#: The tags a writer may record in a ``sidecar`` action (spec §12.1, notes of CKPT-INC-006 and -007).
_ADDS, _REMOVES, _OLDEST, _NAME_SET = (
    "delta-ckpt.numAdds",
    "delta-ckpt.numRemoves",
    "delta-ckpt.minDeletionTimestamp",
    "delta-ckpt.nameSet",
)
_NAME_SET_MAGIC = b"DCKNSET1"


def _name_set_problem(sidecar: Path, tag: str, hashes: set[int]) -> str | None:
    """What is wrong with the name-set file of ``sidecar`` against its tag ``<count>:<sha256>`` and the
    hashes of the sidecar's names (CKPT-INC-007), or None."""
    names = sidecar.with_name(sidecar.name + ".names")
    if not names.is_file():
        return f"{names.name} missing (tag {tag})"
    data = names.read_bytes()
    body = data[len(_NAME_SET_MAGIC) :]
    if not data.startswith(_NAME_SET_MAGIC) or len(body) % 8:
        return f"{names.name}: {len(data)} bytes starting {data[:8]!r}, not DCKNSET1 + 8-byte hashes"
    held = f"{len(body) // 8}:{hashlib.sha256(data).hexdigest()}"
    if tag != held:
        count, sha = held.split(":")
        return f"{names.name}: tag {tag}, file has {count} hashes, SHA-256 {sha}"
    found = [int.from_bytes(body[i : i + 8], "little", signed=True) for i in range(0, len(body), 8)]
    if found != sorted(hashes):
        return f"{names.name}: {len(found)} hashes, not the {len(hashes)} distinct name hashes ascending"
    return None


@pytest.mark.requirement("CKPT-INC-006", "CKPT-INC-007")
def test_sidecar_tags_describe_their_files(written: WrittenTable, check: Checks) -> None:
    """The counts, oldest tombstone and name set a writer records in a ``sidecar`` action's tags are those
    of the sidecar file (judged only for the tags a writer records; none is required).

    Spec: CKPT-INC-006
    > A writer that records in a `sidecar` action's `tags` how many `add` and `remove` actions the sidecar
    > file holds, or the earliest `deletionTimestamp` of its `remove` actions (0 for a `remove` without
    > one), MUST record the values the file holds, and a writer that lists the sidecar again MUST list it
    > with the same values.
    Spec: CKPT-INC-007
    > A writer that records a name set for a sidecar file in its `sidecar` action's tags (tag
    > `delta-ckpt.nameSet`, value `<count>:<SHA-256 of the name-set file, lowercase hex>`) MUST write it,
    > before it publishes the top-level file, as the file `<sidecar file name>.names` in the sidecar's
    > directory: the 8 bytes `DCKNSET1`, then the distinct 64-bit hashes (Spark's `xxhash64` with seed 42
    > of the UTF-8 bytes) of the canonical name (CKPT-CONTENT-014) of every `add` and `remove` row of that
    > sidecar, ascending, each a little-endian signed 64-bit integer, `<count>` being their number; and a writer
    > that lists the sidecar again MUST list it with the same tag.
    """
    d = _require_v2(written)
    files = {f.name: f for f in d.sidecars}
    tagged = [
        a for a in d.actions("sidecar") if {_ADDS, _REMOVES, _OLDEST, _NAME_SET} & set(a.get("tags") or {})
    ]
    if not tagged:
        pytest.skip(f"n.a.: {written.label} records no counts or name set in its sidecar actions")
    root = table_root_uri(written.shape.path)
    for action in tagged:
        name = f"{SIDECAR_DIR}/{sidecar_name(action)}"
        if name not in files:
            continue  # a missing sidecar is CKPT-SIDE-001's
        tags, rows = action["tags"], files[name].rows
        where = f"{written.label}: {name}"
        removes = [r["remove"] for r in rows if "remove" in r]
        held = {_ADDS: str(sum("add" in r for r in rows)), _REMOVES: str(len(removes))}
        if removes:
            held[_OLDEST] = str(min(int(r.get("deletionTimestamp") or 0) for r in removes))
        for tag in (_ADDS, _REMOVES, _OLDEST):
            if tag in tags:
                check(
                    "CKPT-INC-006",
                    tags[tag] == held.get(tag),
                    f"{where}: tag {tag}={tags[tag]}, file holds {held.get(tag)}",
                )
        if _NAME_SET in tags:
            hashes = {
                spark_xxhash64(canonical_path(r[k]["path"], root).rsplit("/", 1)[-1])
                for r in rows
                for k in ("add", "remove")
                if k in r
            }
            problem = _name_set_problem(written.log_dir / name, str(tags[_NAME_SET]), hashes)
            check("CKPT-INC-007", problem is None, f"{where}: {problem}")


@pytest.mark.requirement("CKPT-PART-002", "CKPT-PART-003", "CKPT-NAME-002", "CKPT-PART-010")
def test_multipart_rows_are_hash_clustered(written: WrittenTable, check: Checks) -> None:
    """Each action of a p-part checkpoint sits in the part Spark's hash partitioning assigns it; the parts
    are numbered 1..p (placement is judged only then, against that p) and share one Parquet schema.

    Spec: CKPT-PART-002
    > A writer MUST place each file action of a p-part checkpoint in part pmod(hash(k), p) + 1, where k
    > is the action's path (that is, coalesce(add.path, remove.path)) and hash is Spark SQL's hash
    > function (32-bit Murmur3 with seed 42, Spark's variant for strings).
    Spec: CKPT-PART-003
    > A writer MUST place every non-file action of a p-part checkpoint in part pmod(42, p) + 1, the part
    > that Spark's hash partitioning assigns to a null key.
    Spec: CKPT-PART-010
    > All parts of one multi-part checkpoint SHOULD have the same Parquet schema.
    """
    d = _decoded(written)
    if d.kind is not LogFileKind.CHECKPOINT_PART:
        pytest.skip(f"n.a.: {written.label} did not write a multi-part checkpoint")
    parts = {parse_name(f.name).part or 0: f for f in d.top}
    num = parse_name(d.top[0].name).parts
    schemas = {f.name: f.schema for f in d.top}
    first = d.top[0]
    differ = sorted(name for name, schema in schemas.items() if not schema.equals(first.schema))
    check("CKPT-PART-010", not differ, f"{written.label}: the schema of {differ} differs from {first.name}'s")
    numbered = num is not None and num >= 2 and sorted(parts) == list(range(1, num + 1))
    if not check(
        "CKPT-NAME-002", numbered, f"{written.label}: parts {sorted(parts)} of {num}: {written.checkpoint}"
    ):
        return
    assert num is not None
    for part, f in parts.items():
        for row in f.rows:
            kind, action = next(iter(row.items()))
            key = action["path"] if kind in ("add", "remove") else None
            check(
                "CKPT-PART-002" if key is not None else "CKPT-PART-003",
                part_of(key, num) == part,
                f"{written.label}: {kind} {key!r} in part {part} ({f.name}), expected {part_of(key, num)}",
            )


@pytest.mark.requirement("CKPT-WRITE-007", "CKPT-SIDE-003")
def test_existing_files_are_untouched(written: WrittenTable) -> None:
    """Writing a checkpoint modifies or deletes no existing file (except _last_checkpoint).

    Spec: CKPT-WRITE-007
    > Writing a checkpoint MUST NOT modify or delete any existing commit file, any checkpoint file of
    > another version, or any UUID-named checkpoint file.
    Spec: CKPT-SIDE-003
    > A writer MUST NOT modify, replace or delete any file that already exists in _delta_log/_sidecars/.
    """
    changed = [
        n for n, meta in written.before.items() if n != "_last_checkpoint" and written.after.get(n) != meta
    ]
    assert not changed, f"{written.label}: changed or deleted: {changed}"


def _hint(written: WrittenTable) -> tuple[str, dict[str, Any]]:
    found = read_last_checkpoint(written.log_dir)
    if found is None:
        if written.profile.writes_last_checkpoint:
            pytest.fail(f"{written.label}: no _last_checkpoint written", pytrace=False)
        pytest.skip(f"n.a.: {written.label} does not write _last_checkpoint")
    return found


def _arrow_shape(t: Any) -> Any:
    """The nesting and field names of a pyarrow type (primitive types as None)."""
    if pa.types.is_struct(t):
        return [(f.name, _arrow_shape(f.type)) for f in t]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ("array", _arrow_shape(t.value_type))
    if pa.types.is_map(t):
        return ("map", _arrow_shape(t.key_type), _arrow_shape(t.item_type))
    return None


def _spark_shape(t: Any) -> Any:
    """The nesting and field names of a Spark ``DataType`` JSON value (primitive types as None)."""
    if isinstance(t, dict) and t.get("type") == "struct":
        return [(f.get("name"), _spark_shape(f.get("type"))) for f in t.get("fields") or []]
    if isinstance(t, dict) and t.get("type") == "array":
        return ("array", _spark_shape(t.get("elementType")))
    if isinstance(t, dict) and t.get("type") == "map":
        return ("map", _spark_shape(t.get("keyType")), _spark_shape(t.get("valueType")))
    return None


@pytest.mark.requirement("CKPT-LAST-005")
def test_last_checkpoint_schema_is_the_files(written: WrittenTable) -> None:
    """``_last_checkpoint.checkpointSchema`` is absent for a JSON top-level file; present for Parquet, its
    fields nest and are named as the top-level file's Parquet schema (the primitive types are not compared).

    Spec: CKPT-LAST-005
    > When present, `checkpointSchema` MUST be the Spark `StructType` JSON of the schema of the described
    > checkpoint's Parquet top-level file or parts, and it MUST be absent when the top-level file is JSON.
    """
    _, hint = _hint(written)
    d = _decoded(written)
    top = d.top[0]
    where = f"{written.label}: _last_checkpoint.checkpointSchema"
    if top.format is TopLevelFormat.JSON:
        assert "checkpointSchema" not in hint, f"{where} present, the top-level file {top.name} is JSON"
        return
    if "checkpointSchema" not in hint:
        pytest.skip(f"n.a.: {written.label} writes no checkpointSchema")
    want = [(f.name, _arrow_shape(f.type)) for f in top.schema]
    got = _spark_shape(hint["checkpointSchema"])
    assert got == want, (
        f"{where} has fields {[n for n, _ in got or []]}, {top.name} has {[n for n, _ in want]}"
        + ("" if [n for n, _ in got or []] != [n for n, _ in want] else " (their nested fields differ)")
    )


@pytest.mark.requirement("CKPT-LAST-001", "CKPT-CKSUM-002", "CKPT-CKSUM-003")
def test_last_checkpoint_is_valid(written: WrittenTable, check: Checks) -> None:
    """_last_checkpoint is one JSON object, valid against the schema, without duplicate keys (MUST) and
    with integers as its only numbers (SHOULD); each part is scored under its own requirement.

    Spec: CKPT-LAST-001
    > A writer MUST write _last_checkpoint as a single UTF-8 JSON object that is valid against
    > schemas/last_checkpoint.schema.json.
    Spec: CKPT-CKSUM-002
    > A writer MUST NOT write a duplicate key in any object of _last_checkpoint.
    Spec: CKPT-CKSUM-003
    > A writer SHOULD NOT write numbers other than integers into _last_checkpoint.
    """
    text, hint = _hint(written)
    duplicates: list[str] = []
    fractions: list[str] = []

    def no_dupes(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        duplicates.extend(sorted({k for k in keys if keys.count(k) > 1}))
        return dict(pairs)

    json.loads(text, object_pairs_hook=no_dupes, parse_float=lambda number: fractions.append(number))
    where = f"{written.label}: _last_checkpoint"
    check("CKPT-CKSUM-002", not duplicates, f"{where}: duplicate keys {duplicates}")
    check("CKPT-CKSUM-003", not fractions, f"{where}: numbers that are not integers: {fractions}")
    errors = list(validator("last_checkpoint.schema.json").iter_errors(hint))
    check("CKPT-LAST-001", not errors, f"{where}: {errors[0].message if errors else ''}")


@pytest.mark.requirement("CKPT-LAST-002", "CKPT-LAST-003", "CKPT-LAST-004", "CKPT-LAST-013")
def test_last_checkpoint_matches_the_files(written: WrittenTable, check: Checks) -> None:
    """version, size, parts, sizeInBytes and numOfAddFiles describe the checkpoint on disk exactly; each
    member is scored under its own requirement (a wrong size is not a wrong version). With a referenced
    sidecar missing (CKPT-SIDE-001 fails) the counts are not compared: CKPT-LAST-003/-004 score "not
    compared", not a failure the writer's hint may not have.

    Spec: CKPT-LAST-002
    > The version a writer records in _last_checkpoint MUST be the version of a complete checkpoint that
    > exists when the hint is written.
    Spec: CKPT-LAST-003
    > The size a writer records MUST equal the total number of actions stored in all files of the
    > described checkpoint, counting the rows of the top-level file or parts, including checkpointMetadata
    > and sidecar rows, and the rows of all referenced sidecars.
    Spec: CKPT-LAST-004
    > When present, sizeInBytes MUST equal the sum of the byte lengths of all files of the described
    > checkpoint, referenced sidecars included, and numOfAddFiles MUST equal the number of add actions in
    > the described checkpoint.
    Spec: CKPT-LAST-013
    > A writer MUST include parts in _last_checkpoint when, and only when, the described checkpoint is
    > multi-part, and its value MUST then be the part count.
    """
    _, hint = _hint(written)
    d = _decoded(written)
    where = f"{written.label}: _last_checkpoint"
    multipart = d.kind is LogFileKind.CHECKPOINT_PART
    numbers = sorted(parse_name(f.name).part or 0 for f in d.top)
    count = parse_name(d.top[0].name).parts if multipart else None
    complete = not multipart or numbers == list(range(1, (count or 0) + 1))
    check("CKPT-LAST-002", hint["version"] == d.version, f"{where}: version {hint['version']} != {d.version}")
    check("CKPT-LAST-002", complete, f"{where}: names the incomplete checkpoint {written.checkpoint}")
    check(
        "CKPT-LAST-013",
        ("parts" in hint) == multipart and hint.get("parts") == count,
        f"{where}: parts={hint.get('parts')} for a {d.kind.value} checkpoint of {len(d.top)} file(s) {written.checkpoint}",
    )
    if d.missing:  # CKPT-SIDE-001 fails; what the hint counts is not compared with files that are not there
        return
    rows = sum(len(f.rows) for f in [*d.top, *d.sidecars])
    check("CKPT-LAST-003", hint["size"] == rows, f"{where}: size {hint['size']}, files hold {rows} actions")
    if "sizeInBytes" in hint:
        total = sum((written.log_dir / f.name).stat().st_size for f in [*d.top, *d.sidecars])
        check(
            "CKPT-LAST-004",
            hint["sizeInBytes"] == total,
            f"{where}: sizeInBytes {hint['sizeInBytes']} != {total}",
        )
    if "numOfAddFiles" in hint:
        adds = len(d.actions("add"))
        check(
            "CKPT-LAST-004",
            hint["numOfAddFiles"] == adds,
            f"{where}: numOfAddFiles {hint['numOfAddFiles']} != {adds}",
        )


@pytest.mark.requirement("CKPT-LAST-006", "CKPT-LAST-007")
def test_last_checkpoint_v2_object(written: WrittenTable) -> None:
    """v2Checkpoint appears only for UUID-named checkpoints and describes the top-level file exactly.

    Spec: CKPT-LAST-006
    > A writer MUST write a v2Checkpoint object only when the described checkpoint is UUID-named, with
    > path set to the bare file name of its top-level file and sizeInBytes to that file's exact length in
    > bytes.
    Spec: CKPT-LAST-007
    > When present, v2Checkpoint.nonFileActions MUST list every non-file action of the top-level file
    > except the sidecar actions, and v2Checkpoint.sidecarFiles MUST list exactly the sidecar actions of
    > the top-level file with equal path, sizeInBytes and modificationTime.
    """
    _, hint = _hint(written)
    d = _decoded(written)
    v2 = hint.get("v2Checkpoint")
    if d.kind is not LogFileKind.CHECKPOINT_UUID:
        assert v2 is None, f"{written.label}: v2Checkpoint in the hint of a {d.kind.value} checkpoint"
        return
    if v2 is None:
        return
    top = written.log_dir / written.checkpoint[0]
    assert v2["path"] == top.name and v2["sizeInBytes"] == top.stat().st_size, (
        f"{written.label}: {v2['path']}"
    )
    if v2.get("sidecarFiles") is not None:
        listed = sorted(s["path"] for s in v2["sidecarFiles"])
        assert listed == sorted(str(a["path"]) for a in d.actions("sidecar")), (
            f"{written.label}: sidecarFiles"
        )
    if v2.get("nonFileActions") is not None:
        kinds = sorted(next(iter(a)) for a in v2["nonFileActions"])
        expected = sorted(
            k for f in d.top for r in f.rows for k in r if k not in ("sidecar", "add", "remove")
        )
        assert kinds == expected, f"{written.label}: nonFileActions kinds {kinds} != {expected}"


@pytest.mark.requirement("CKPT-LAST-009", "CKPT-LAST-010", "CKPT-CKSUM-001")
def test_last_checkpoint_order_and_checksum(written: WrittenTable, check: Checks) -> None:
    """version, size, parts come first (MUST); a checksum is there, last (SHOULD) and valid (MUST).

    Spec: CKPT-LAST-009
    > A writer MUST write version, size and, when present, parts as the first members of the
    > _last_checkpoint object, in that order.
    Spec: CKPT-LAST-010
    > A writer SHOULD include a checksum, computed as in …, as the last member of _last_checkpoint.
    Spec: CKPT-CKSUM-001
    > When a writer includes checksum in _last_checkpoint, its value MUST be the checksum that §15.1
    > computes for the written text.
    """
    _, hint = _hint(written)
    keys = list(hint)
    head = ["version", "size", "parts"] if "parts" in hint else ["version", "size"]
    check(
        "CKPT-LAST-009",
        keys[: len(head)] == head,
        f"{written.label}: _last_checkpoint starts with {keys[:3]}",
    )
    check("CKPT-LAST-010", "checksum" in hint, f"{written.label}: _last_checkpoint has no checksum")
    if "checksum" in hint:
        check("CKPT-LAST-010", keys[-1] == "checksum", f"{written.label}: checksum is not the last member")
        try:
            expected = checksum(hint)
        except ValueError:  # a non-integer number: its canonical text is not pinned down (§15.1 rule 4)
            return  # not compared; test_last_checkpoint_is_valid scores the number (CKPT-CKSUM-003)
        check(
            "CKPT-CKSUM-001",
            hint["checksum"] == expected,
            f"{written.label}: checksum {hint['checksum']} != {expected}",
        )


#: Parquet physical types PROTOCOL maps the Delta types of action fields to (CKPT-SCHEMA-002).
_PHYSICAL = {"string": "BYTE_ARRAY", "long": "INT64", "int": "INT32", "boolean": "BOOLEAN"}
_FIELD_TYPES = {
    "add.path": "string", "add.size": "long", "add.modificationTime": "long", "add.dataChange": "boolean",
    "add.stats": "string", "add.deletionVector.offset": "int", "add.deletionVector.sizeInBytes": "int",
    "add.deletionVector.cardinality": "long", "add.baseRowId": "long", "add.defaultRowCommitVersion": "long",
    "remove.path": "string", "remove.deletionTimestamp": "long", "remove.size": "long",
    "metaData.id": "string", "metaData.schemaString": "string", "metaData.createdTime": "long",
    "protocol.minReaderVersion": "int", "protocol.minWriterVersion": "int",
    "txn.appId": "string", "txn.version": "long", "txn.lastUpdated": "long",
    "domainMetadata.domain": "string", "domainMetadata.configuration": "string", "domainMetadata.removed": "boolean",
    "checkpointMetadata.version": "long", "sidecar.path": "string", "sidecar.sizeInBytes": "long",
    "sidecar.modificationTime": "long",
}  # fmt: skip


@pytest.mark.requirement("CKPT-SCHEMA-002")
def test_parquet_physical_types(written: WrittenTable) -> None:
    """Action fields are stored with the Parquet type PROTOCOL maps their Delta type to.

    Spec: CKPT-SCHEMA-002
    > The Parquet type of every action field a writer stores MUST be the one PROTOCOL maps the field's
    > Delta type to (for example Long to INT64, Int to INT32, String to UTF-8 BINARY, maps to MAP and
    > arrays to LIST).
    """
    import pyarrow.parquet as pq

    d = _decoded(written)
    wrong = []
    for f in [*d.top, *d.sidecars]:
        if f.format != "parquet":
            continue
        schema = pq.ParquetFile(written.log_dir / f.name).schema
        for i in range(len(schema)):
            column = schema.column(i)
            dotted = column.path
            expected = _FIELD_TYPES.get(dotted)
            if expected is not None and column.physical_type != _PHYSICAL[expected]:
                wrong.append(f"{f.name}:{dotted} is {column.physical_type}, expected {_PHYSICAL[expected]}")
    assert not wrong, f"{written.label}: {wrong[:6]}"


@pytest.mark.requirement("CKPT-V1-001")
def test_v1_checkpoint_is_flat(written: WrittenTable) -> None:
    """A V1 checkpoint holds every action in its own file(s) and no checkpointMetadata or sidecar.

    Spec: CKPT-V1-001
    > A V1-spec checkpoint MUST hold every action of the checkpointed state in its own file or parts and
    > MUST NOT contain a non-null checkpointMetadata or sidecar action.
    """
    d = _decoded(written)
    if _is_v2(d):
        pytest.skip(f"n.a.: {written.label} wrote a V2 checkpoint")
    assert not d.actions("sidecar") and not d.sidecars, f"{written.label}: V1 checkpoint references sidecars"
    assert len(d.actions("add")) == len(written.shape.state.files), (
        f"{written.label}: not every live file is in it"
    )


@pytest.mark.requirement("CKPT-STATS-001")
def test_json_stats_are_written(written: WrittenTable) -> None:
    """With writeStatsAsJson true or absent, every live file with statistics has add.stats in the checkpoint.

    Spec: CKPT-STATS-001
    > When delta.checkpoint.writeStatsAsJson is true or absent and the newest add action of a live file has
    > statistics, the checkpoint's add.stats for that file MUST be that statistics string, unchanged.
    """
    config = written.shape.state.metadata.get("configuration", {})
    if config.get("delta.checkpoint.writeStatsAsJson", "true").lower() != "true":
        pytest.skip("n.a.: the table asks for no JSON statistics")
    with_stats = {f["path"] for f in written.shape.state.files if f.get("stats")}
    missing = sorted(
        a["path"] for a in _decoded(written).actions("add") if a["path"] in with_stats and "stats" not in a
    )
    assert not missing, f"{written.label}: add.stats missing for {missing[:5]}"


@pytest.mark.requirement("CKPT-PART-004", "CKPT-WRITE-009")
def test_multipart_rewrite_puts_same_actions_in_each_part(
    written: WrittenTable, writer: tuple[Any, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A second attempt at the same multi-part checkpoint writes the same part count and the same actions
    into each part (what makes a retried or zombie task harmless).

    Spec: CKPT-PART-004
    > A writer MUST choose the part count p of a multi-part checkpoint as a function of the checkpointed
    > state and the writer's configuration only, so that every attempt to write the same version with the
    > same configuration uses the same p.
    Spec: CKPT-WRITE-009
    > Two attempts to write a multi-part checkpoint of the same version with the same part count MUST
    > write the same set of actions into each part.
    """
    from conformance.suite.conftest import shape_variant, source_table

    first = _decoded(written)
    if first.kind is not LogFileKind.CHECKPOINT_PART:
        pytest.skip(f"n.a.: {written.label} did not write a multi-part checkpoint")
    impl, profile = writer
    again = source_table(
        written.shape.name,
        shape_variant(profile),
        tmp_path_factory.mktemp("again") / "table",
        tmp_path_factory,
    )
    impl.write_checkpoint(again.path, profile=profile.name, version=again.version)
    second_names = sorted(
        p.name for p in (again.path / "_delta_log").glob(f"{again.version:020d}.checkpoint.*.parquet")
    )
    second = decode_checkpoint(again.path / "_delta_log", second_names)
    assert [f.name for f in second.top] == [f.name for f in first.top], f"{written.label}: part names differ"

    def rows(d: DecodedCheckpoint) -> list[list[str]]:
        return [sorted(json.dumps(r, sort_keys=True) for r in f.rows) for f in d.top]

    assert rows(second) == rows(first), (
        f"{written.label}: a second attempt put different actions in some part"
    )


def _table_files(table: Path) -> dict[str, tuple[int, int, str]]:
    """Every file of the table, ``_delta_log`` and all else: relative name -> (size, mtime ns, SHA-256 of its
    bytes). A refusing writer writes no file anywhere (CKPT-WRITE-010, CKPT-FEAT-003, CKPT-FEAT-005)."""
    return {
        name: (size, mtime, hashlib.sha256((table / name).read_bytes()).hexdigest())
        for name, (size, mtime) in files(table).items()
    }


def _assert_refused(writer: tuple[Any, Any], table: Path, version: int, code: str, case: str) -> None:
    """The writer, asked for ``version`` of ``table``, fails with ``code`` and leaves the table as it was, its
    log and every other file: the same file names, sizes, modification times and bytes."""
    impl, profile = writer
    before = _table_files(table)
    where = f"{impl.info.name}:{profile.name} on {table} ({case})"
    try:
        impl.write_checkpoint(table, profile=profile.name, version=version)
    except AdapterError as exc:
        assert exc.code == code, f"{where}: {exc.code}: {exc.message}"
    else:
        pytest.fail(
            f"{where}: the writer wrote a checkpoint instead of refusing: {files_diff(before, _table_files(table))}",
            pytrace=False,
        )
    changed = files_diff(before, _table_files(table))
    assert not changed, f"{where}: the table's files changed: {changed}"


@pytest.mark.requirement("CKPT-WRITE-010")
def test_writer_refuses_unknown_writer_features(writer: tuple[Any, Any], tmp_path: Path) -> None:
    """A table whose latest protocol lists a writer feature no implementation knows
    (``madeUpWriterFeature``): the writer fails with ``UNSUPPORTED_WRITER_FEATURE`` and no file of the table changes.

    Spec: CKPT-WRITE-010
    > A writer MUST NOT write any checkpoint file or `_last_checkpoint` for a version whose protocol lists a
    > writer feature that the writer does not support, and MUST fail with `UNSUPPORTED_WRITER_FEATURE`
    > instead.
    """
    builder = BUILDERS["empty"](tmp_path / "table", shape_variant(writer[1]))
    builder.set_features((), ("madeUpWriterFeature",))
    _assert_refused(
        writer,
        builder.root,
        builder.version,
        "UNSUPPORTED_WRITER_FEATURE",
        "writer feature madeUpWriterFeature",
    )


@pytest.mark.requirement("CKPT-WRITE-001")
def test_writer_refuses_a_version_without_commit(writer: tuple[Any, Any], tmp_path: Path) -> None:
    """Asked for the version after the table's newest commit (no ``<n>.json``): the writer fails with
    ``VERSION_NOT_FOUND`` and no file of the table changes.

    Spec: CKPT-WRITE-001
    > A writer asked to checkpoint a version whose commit file `<n>.json` is not present in `_delta_log/`
    > MUST fail with `VERSION_NOT_FOUND` and MUST NOT write any file.
    """
    builder = BUILDERS["empty"](tmp_path / "table", shape_variant(writer[1]))
    missing = builder.version + 1
    _assert_refused(writer, builder.root, missing, "VERSION_NOT_FOUND", f"version {missing} has no commit")


@pytest.mark.requirement("CKPT-FEAT-009")
def test_writer_refuses_an_unknown_checkpoint_policy(writer: tuple[Any, Any], tmp_path: Path) -> None:
    """A table whose latest metadata sets ``delta.checkpointPolicy = bogus``: the writer fails with
    ``INVALID_OPTION`` and no file of the table changes.

    Spec: CKPT-FEAT-009
    > A writer asked to checkpoint a version whose `delta.checkpointPolicy` has a value other than `classic`
    > or `v2` (compared case-sensitively) MUST fail with `INVALID_OPTION` and MUST NOT write any file.
    """
    builder = BUILDERS["empty"](tmp_path / "table", shape_variant(writer[1]))
    builder.set_properties({"delta.checkpointPolicy": "bogus"})
    _assert_refused(writer, builder.root, builder.version, "INVALID_OPTION", "delta.checkpointPolicy bogus")


def _without_v2_checkpoint(path: Path) -> TableBuilder:
    """Four appends to a table whose protocol never had ``v2Checkpoint``."""
    return BUILDERS["unpartitioned"](path, "classic")


def _v2_checkpoint_added(path: Path) -> TableBuilder:
    """Four appends to a classic table, then a protocol upgrade that adds ``v2Checkpoint``; the policy
    stays ``classic`` (absent), where a writer may still write a classic V1 checkpoint but no multi-part
    one: what delta-spark's part size alone would give (spec D3)."""
    builder = BUILDERS["unpartitioned"](path, "classic")
    builder.set_features(("v2Checkpoint",), ())
    return builder


def _copy_of(
    name: str, build: Callable[[Path], TableBuilder], factory: pytest.TempPathFactory, target: Path
) -> tuple[Path, int]:
    """A copy at ``target`` of the table ``build`` makes for the writer-only case ``name``, built once per
    process (:func:`~conformance.suite.conftest.from_template`), and the version to ask for, its latest."""
    return target, from_template(("case", name), build, target, factory).version


def _asks_outright(writer: tuple[Any, Any], asks: bool, what: str) -> None:
    """Skip as not applicable unless the writer's profile asks for ``what`` and declares the request
    explicit (a profile whose kind follows from the table could only be asked by changing the table)."""
    impl, profile = writer
    label = f"{impl.info.name}:{profile.name}"
    if not asks:
        pytest.skip(f"n.a.: {label} does not ask for {what}")
    if not profile.explicit:
        pytest.skip(
            f"n.a.: {label} takes its checkpoint kind from the table, not from the request (the profile is "
            f"not declared explicit): it cannot be asked for {what} there without changing the table"
        )


@pytest.mark.requirement("CKPT-FEAT-003")
def test_writer_refuses_v2_without_the_feature(
    writer: tuple[Any, Any], tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """A profile that asks outright for a V2 checkpoint, asked on a table whose protocol lacks
    ``v2Checkpoint``: the writer fails with ``V2_FEATURE_NOT_SUPPORTED`` and no file of the table changes.

    Spec: CKPT-FEAT-003
    > A writer that is explicitly asked to write a V2-spec checkpoint for a version whose protocol does not
    > support `v2Checkpoint` MUST fail with `V2_FEATURE_NOT_SUPPORTED` and MUST NOT write any file.
    """
    _asks_outright(writer, writer[1].spec is CheckpointSpec.V2, "a V2 checkpoint")
    table, version = _copy_of(
        "no-v2-checkpoint", _without_v2_checkpoint, tmp_path_factory, tmp_path / "table"
    )
    _assert_refused(
        writer, table, version, "V2_FEATURE_NOT_SUPPORTED", "V2 asked, the protocol lacks v2Checkpoint"
    )


@pytest.mark.requirement("CKPT-FEAT-005")
def test_writer_refuses_multipart_on_a_v2_table(
    writer: tuple[Any, Any], tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """A profile that asks outright for a multi-part checkpoint, asked on a table whose protocol supports
    ``v2Checkpoint`` (policy ``classic``): the writer fails with ``MULTIPART_ON_V2_TABLE`` and no file of
    the table changes.

    Spec: CKPT-FEAT-005
    > A writer that is explicitly asked to write a multi-part checkpoint for a version whose protocol
    > supports `v2Checkpoint` MUST fail with `MULTIPART_ON_V2_TABLE` and MUST NOT write any file.
    """
    _asks_outright(writer, writer[1].naming is CheckpointNaming.MULTI_PART, "a multi-part checkpoint")
    table, version = _copy_of(
        "v2-checkpoint-added", _v2_checkpoint_added, tmp_path_factory, tmp_path / "table"
    )
    _assert_refused(
        writer, table, version, "MULTIPART_ON_V2_TABLE", "multi-part asked, the protocol has v2Checkpoint"
    )


#: The tag that marks the checkpointMetadata action a commit holds (CKPT-CONTENT-013's case).
_PLANTED = "conformance.plantedInCommit"
#: The version of the commit that holds them, and the ``version`` of the planted ``checkpointMetadata``.
_PLANTED_VERSION = 3


def _checkpoint_actions_in_commit(path: Path, variant: Variant) -> TableBuilder:
    """Two appends, then commit 3 with a ``checkpointMetadata`` (version 3, tagged :data:`_PLANTED`) and a
    ``sidecar`` naming ``planted-in-commit-3.parquet``, which does not exist, then a remove (a live file and
    a tombstone in the state): a log no writer may produce, which readers read by ignoring both actions (CKPT-READ-022)."""
    builder = new_table(path, variant)
    builder.append(rows(0, 2))
    builder.append(rows(2, 2))
    planted = builder.version + 1
    assert planted == _PLANTED_VERSION, f"the planted actions are in commit {planted}"
    builder.commit(
        [
            {"checkpointMetadata": {"version": planted, "tags": {_PLANTED: str(planted)}}},
            {
                "sidecar": {
                    "path": f"planted-in-commit-{planted}.parquet",
                    "sizeInBytes": 1234,
                    "modificationTime": builder.clock.now_ms,
                }
            },
        ]
    )
    builder.remove(builder.live_paths[:1])
    return builder


@pytest.mark.requirement("CKPT-CONTENT-013")
def test_checkpoint_actions_of_a_commit_are_left_out(
    writer: tuple[Any, Any], tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """A table whose commit 3 holds a ``checkpointMetadata`` and a ``sidecar`` action (a writer-only case:
    the state is that of the shapes, only the planted actions are new): the writer's checkpoint of
    version 4 holds neither; at most one ``checkpointMetadata``, its own (version 4, without the planted
    tag), and no ``sidecar`` action naming the planted file. A ``checkpointMetadata`` is the commit's when
    it carries the planted tag or the planted version (3); a single one of its own with another wrong
    version breaks a rule judged elsewhere, not this one.

    Spec: CKPT-CONTENT-013
    > A checkpoint MUST NOT contain a `checkpointMetadata` or `sidecar` action taken from a commit file; its
    > only `checkpointMetadata` and `sidecar` actions are those the writer creates for the checkpoint
    > itself.
    """
    impl, profile = writer
    variant = shape_variant(profile)
    table, version = _copy_of(
        f"checkpoint-actions-in-commit-{variant}",
        lambda path: _checkpoint_actions_in_commit(path, variant),
        tmp_path_factory,
        tmp_path / "table",
    )
    label = f"{impl.info.name}:{profile.name} on {table} (commit 3 holds checkpointMetadata and sidecar)"
    names, decoded = _checkpoint_of(writer, table, version, label)
    metadata = decoded.actions("checkpointMetadata")
    copied = [
        m for m in metadata if _PLANTED in (m.get("tags") or {}) or m.get("version") == _PLANTED_VERSION
    ]
    assert len(metadata) <= 1 and not copied, f"{label}: {names} hold checkpointMetadata {metadata}"
    planted = [a for a in decoded.actions("sidecar") if "planted-in-commit" in str(a.get("path"))]
    assert not planted, f"{label}: {names} hold the commit's sidecar action {planted}"


#: When the expired tombstone of CKPT-CONTENT-007's case was deleted: 2001-09-09, expired under the
#: case's ten-year retention since 2011, whatever the clock; the other one is deleted at the builder's
#: clock (2025), live until 2035.
_EXPIRED_AT = 1_000_000_000_000


def _expired_and_live_tombstones(path: Path, variant: Variant) -> TableBuilder:
    """Three appends to a table with ``delta.deletedFileRetentionDuration`` of 3650 days, then two removes:
    the first file at :data:`_EXPIRED_AT`, the second at the builder's clock."""
    builder = new_table(path, variant, config={"delta.deletedFileRetentionDuration": "interval 3650 days"})
    for i in range(3):
        builder.append(rows(i * 2, 2))
    expired, live = builder.live_paths[:2]
    builder.remove([expired], deletion_timestamp=_EXPIRED_AT)
    builder.remove([live])
    return builder


@pytest.mark.requirement("CKPT-CONTENT-007", "CKPT-CONTENT-006")
def test_expired_tombstones_are_left_out(
    writer: tuple[Any, Any], tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, check: Checks
) -> None:
    """A table with a tombstone deleted in 2001 and one deleted in 2025 under a ten-year
    ``delta.deletedFileRetentionDuration`` (a writer-only case: the writer's clock is the real one): the
    checkpoint leaves the expired tombstone out (SHOULD) and keeps the live one (MUST); each is scored
    under its own requirement.

    Spec: CKPT-CONTENT-007
    > A writer SHOULD leave out every tombstone whose `deletionTimestamp` is not later than the current time
    > minus the table's `delta.deletedFileRetentionDuration` (one week when unset), counting an absent
    > `deletionTimestamp` as 0.
    Spec: CKPT-CONTENT-006
    > A checkpoint MUST contain exactly one `remove` action for each logical file whose newest file action
    > is a `remove` that has not expired, and MUST NOT contain a `remove` action for a logical file that it
    > also lists in an `add` action.
    """
    impl, profile = writer
    variant = shape_variant(profile)
    table, version = _copy_of(
        f"expired-tombstone-{variant}",
        lambda path: _expired_and_live_tombstones(path, variant),
        tmp_path_factory,
        tmp_path / "table",
    )
    root = table_root_uri(table)
    tombstones = {  # deletionTimestamp -> canonical path, from the commits the case wrote
        action["remove"]["deletionTimestamp"]: canonical_path(action["remove"]["path"], root)
        for commit in sorted((table / "_delta_log").glob("[0-9]" * 20 + ".json"))
        for action in map(json.loads, commit.read_text().splitlines())
        if "remove" in action
    }
    label = f"{impl.info.name}:{profile.name} on {table} (tombstones deleted at {sorted(tombstones)})"
    names, decoded = _checkpoint_of(writer, table, version, label)
    removes = [canonical_path(r["path"], root) for r in decoded.actions("remove")]
    expired, live = tombstones[_EXPIRED_AT], tombstones[max(tombstones)]
    check(
        "CKPT-CONTENT-007",
        expired not in removes,
        f"{label}: {names} keep the tombstone of {expired} deleted at {_EXPIRED_AT}",
    )
    check(
        "CKPT-CONTENT-006",
        removes.count(live) == 1,
        f"{label}: {names} hold {removes.count(live)} remove(s) of the live tombstone {live}",
    )


def _checkpoint_of(
    writer: tuple[Any, Any], table: Path, version: int, label: str
) -> tuple[list[str], DecodedCheckpoint]:
    """Have the writer checkpoint ``version`` of ``table``: the new checkpoint's files and their decoded
    content; the test fails, with the writer's message, when it fails or writes no checkpoint."""
    impl, profile = writer
    before = listing(table)
    error = attempt(lambda: impl.write_checkpoint(table, profile=profile.name, version=version))
    if error is not None:
        fail_with(label, "writer", error)
    names = new_checkpoint(table, version, before)
    if not names:
        pytest.fail(f"{label}: no new checkpoint file appeared at version {version}", pytrace=False)
    return names, decode_checkpoint(table / "_delta_log", names, missing_ok=True)


#: CKPT-INC-004's case: the log retention of version 3, under which the sidecars of version 2 are old
#: one second after they were written (half the retention is half a second).
_SHORT_RETENTION = "interval 1 seconds"


def _sidecars_then_a_short_retention(path: Path) -> TableBuilder:
    """A ``v2Checkpoint`` table: two appends (version 2, log retention 2 days), then a commit that sets
    ``delta.logRetentionDuration`` to :data:`_SHORT_RETENTION` and touches no file, so every sidecar of a
    checkpoint of version 2 still holds the state's actions at version 3 (CKPT-INC-002)."""
    builder = new_table(path, "v2", config={"delta.logRetentionDuration": "interval 2 days"})
    builder.append(rows(0, 2))
    builder.append(rows(2, 2))
    builder.set_properties({"delta.logRetentionDuration": _SHORT_RETENTION})
    return builder


@pytest.mark.requirement("CKPT-INC-004")
def test_old_sidecars_are_not_listed_again(
    writer: tuple[Any, Any], tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Two requests, one second apart: a checkpoint of version 2, then one of version 3, whose log retention
    is one second and which touches no file. The checkpoint of version 3 lists none of the sidecars the
    first request wrote (unchanged since: older than half a second). Profiles that write no sidecars are not
    applicable; a writer that never lists a sidecar again passes; a second request that fails (the writer
    could not build on its own checkpoint) compares nothing.

    Spec: CKPT-INC-004
    > A writer MUST NOT list a sidecar file written for an earlier checkpoint when the sidecar's
    > modification time is earlier than the new checkpoint's time minus half the table's log retention
    > (`delta.logRetentionDuration`).
    """
    impl, profile = writer
    if not profile.sidecars:
        pytest.skip(f"n.a.: {impl.info.name}:{profile.name} writes no sidecars")
    table, version = _copy_of(
        "sidecars-then-a-short-retention",
        _sidecars_then_a_short_retention,
        tmp_path_factory,
        tmp_path / "table",
    )
    label = (
        f"{impl.info.name}:{profile.name} on {table} (version {version}: {_SHORT_RETENTION} log retention)"
    )
    _checkpoint_of(writer, table, version - 1, label)
    before = listing(table)
    old = {n.split("/", 1)[1] for n in before if n.startswith(f"{SIDECAR_DIR}/") and n.endswith(".parquet")}
    if not old:
        pytest.skip(f"not compared: {label}: the checkpoint of version {version - 1} has no sidecar")
    time.sleep(1)
    error = attempt(lambda: impl.write_checkpoint(table, profile=profile.name, version=version))
    if error is not None:  # (it failed on its own checkpoint: whatever that breaks is scored elsewhere)
        pytest.skip(f"not compared: {label}: the writer failed at version {version}: {error}")
    names = new_checkpoint(table, version, before)
    if not names:
        pytest.fail(f"{label}: no new checkpoint file appeared at version {version}", pytrace=False)
    after = listing(table)
    listed = [
        sidecar_name(a)
        for a in decode_checkpoint(table / "_delta_log", names, missing_ok=True).actions("sidecar")
    ]
    again = [  # an old sidecar this request did not rewrite (CKPT-SIDE-003 is another test's)
        n for n in listed if n in old and after.get(f"{SIDECAR_DIR}/{n}") == before[f"{SIDECAR_DIR}/{n}"]
    ]
    assert not again, f"{label}: {names} list again {again}, written by the request of version {version - 1}"
