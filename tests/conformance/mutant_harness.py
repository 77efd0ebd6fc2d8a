"""Mutant implementations for ``test_mutants.py``: a correct writer and a correct reader, and the same
broken in one way each, behind the subprocess protocol 1.0 (no JVM).

``mutant_harness.py writer`` is one program whose writer profiles are the correct writer and its mutants;
``mutant_harness.py reader [MUTATION]`` is the correct reader, or one of :data:`READER_MUTATIONS`.

The correct writer (profiles ``v1``, ``parts`` and ``v2``) has deltalake's ``create_checkpoint()`` reconcile
the log, takes the actions it wrote and writes them again as the spec asks (``dataChange`` false, no
``remove.stats``/``tags``, every Parquet field optional, a ``_last_checkpoint`` with a checksum). It shares
nothing with the judge, so a bug of the judge cannot pass the correct writer and its mutants alike: the
checksum is the reference implementation's (:func:`reference_impl.log.last_checkpoint.checksum`), the part
of an action is computed here from the spec (:func:`_part_of`), not with ``conformance.decode``'s helpers.

* ``v1`` — a classic V1 Parquet file (spec §6);
* ``parts`` — a 2-part V1 checkpoint, each action in the part Spark's hash partitioning gives it (§10);
* ``v2`` — a UUID-named JSON top-level file and one UUID-named Parquet sidecar (§11, §12), its action's
  tags counting its rows (CKPT-INC-006).

Each profile asks for its kind outright (``explicit``): asked for ``v2`` on a table without ``v2Checkpoint``
or for ``parts`` on one with it, the correct writer refuses and writes nothing (CKPT-FEAT-003, -005).

Every other profile is ``<base>.<mutation>``: the base profile's output with one defect of
:data:`MUTATIONS`, which the conformance suite must report under the rule the defect breaks.
"""

from __future__ import annotations

import json
import struct
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.decode.checkpoint import checkpoint_names
from conformance.decode.names import parse_name
from reference_impl.log.last_checkpoint import checksum
from spec.table_state import dv_id
from spec.vocabulary import LogFileKind

PROTOCOL_VERSION = "1.0"
#: Writer features this writer knows (the suite's shapes use no other).
KNOWN_WRITER_FEATURES = {"appendOnly", "invariants", "checkConstraints", "domainMetadata", "deletionVectors",
                         "v2Checkpoint", "columnMapping", "timestampNtz", "generatedColumns"}  # fmt: skip

#: mutation -> (base profile, what it breaks). The expected rules are test_mutants.py's table.
MUTATIONS: dict[str, tuple[str, str]] = {
    "last-size": ("v1", "_last_checkpoint.size one more than the rows"),
    "last-size-in-bytes": ("v1", "_last_checkpoint.sizeInBytes one more than the file"),
    "last-bad-checksum": ("v1", "_last_checkpoint.checksum of other text"),
    "last-no-checksum": ("v1", "_last_checkpoint without a checksum"),
    "last-missing-version": ("v1", "_last_checkpoint names version n + 1, which has no checkpoint"),
    "duplicate-add": ("v1", "one add row written twice"),
    "remove-as-add": ("v1", "a tombstone written as an add"),
    "no-protocol": ("v1", "no protocol row"),
    "no-metadata": ("v1", "no metaData row"),
    "commit-info": ("v1", "a commitInfo row"),
    "data-change": ("v1", "dataChange true in file actions"),
    "wrong-part-count": ("parts", "2 parts named as parts of 3"),
    "wrong-part": ("parts", "every file action in the other part"),
    "differing-schemas": ("parts", "part 2 without the domainMetadata column"),
    "on-v2-table": ("parts", "a multi-part checkpoint of a table with v2Checkpoint"),
    "last-fraction": ("v1", "_last_checkpoint with a member 0.5"),
    "no-sidecar-action": ("v2", "the top-level file lacks its sidecar action"),
    "no-checkpoint-metadata": ("v2", "the top-level file lacks checkpointMetadata"),
    "sidecar-wrong-size": ("v2", "the sidecar action's sizeInBytes one more than the file"),
    "sidecar-reserved-name": ("v2", "the sidecar named with a '+' (a reserved URI character)"),
    "sidecar-missing": ("v2", "the sidecar deleted after the top-level file was written"),
    "sidecar-plain-name": ("v2", "the sidecar named plain.parquet: legal, names carry no meaning"),
    "protocol-in-sidecar": ("v2", "the protocol row moved from the top-level file into the sidecar"),
    "count-tag-off": ("v2", "the sidecar action's tag delta-ckpt.numAdds one more than the file's adds"),
    "name-set-missing": ("v2", "the sidecar action records a name set whose file was never written"),
    "last-schema-short": ("v1", "_last_checkpoint.checkpointSchema with one field, a string 'add'"),
    "last-schema-on-json": ("v2", "_last_checkpoint.checkpointSchema for a JSON top-level file"),
    "latest-for-missing": ("v1", "asked for a version without a commit, checkpoints the newest one"),
    "any-policy": ("v1", "writes whatever delta.checkpointPolicy says"),
    "any-protocol": ("v2", "asked for V2 on a table without v2Checkpoint, writes it"),
    "late-refusal": ("v2", "asked for V2 on a table without v2Checkpoint, refuses after writing it"),
    "stray-refusal": (
        "v2",
        "asked for V2 on a table without v2Checkpoint, refuses but leaves a file outside the log",
    ),
    "commit-actions": ("v2", "copies the checkpointMetadata and sidecar actions of the commits"),
    "expired-kept": ("v1", "keeps the tombstones that expired"),
    "reuse-old": ("v2", "lists an earlier sidecar holding the same actions again, however old"),
}
_BASES = {
    "v1": {"spec": "v1", "naming": "classic", "needsV2Table": False, "explicit": True},
    "parts": {"spec": "v1", "naming": "multi-part", "needsV2Table": False, "explicit": True},
    "v2": {"spec": "v2", "naming": "uuid", "manifest": "json", "sidecars": True, "needsV2Table": True,
           "explicit": True},
}  # fmt: skip


class Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _plain(value: Any, typ: pa.DataType) -> Any:
    """An Arrow ``to_pylist`` value as the JSON value of the log (maps as objects), nulls dropped."""
    if value is None:
        return None
    if pa.types.is_map(typ):
        return {k: _plain(v, typ.item_type) for k, v in value}
    if pa.types.is_struct(typ):
        out = {f.name: _plain(value.get(f.name), f.type) for f in typ}
        return {k: v for k, v in out.items() if v is not None}
    if pa.types.is_list(typ):
        return [_plain(v, typ.value_type) for v in value]
    return value


def _optional(field: pa.Field, drop: tuple[str, ...] = ()) -> pa.Field:
    """``field`` with every nested field optional (map keys excepted), leaving out the children ``drop``."""
    t = field.type
    if pa.types.is_struct(t):
        t = pa.struct([_optional(c) for c in t if c.name not in drop])
    elif pa.types.is_list(t):
        t = pa.list_(_optional(t.value_field))
    elif pa.types.is_map(t):
        t = pa.map_(t.key_field.with_nullable(False), _optional(t.item_field))
    return pa.field(field.name, t, nullable=True)


def _write_parquet(path: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path.stat().st_size


def _uuid(table: Path, what: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{table.as_uri()}#{what}"))


def _latest(log: Path, kind: str) -> dict[str, Any]:
    """The newest ``protocol`` or ``metaData`` action of the commits."""
    latest: dict[str, Any] = {}
    for commit in sorted(log.glob("[0-9]" * 20 + ".json")):
        for line in commit.read_text().splitlines():
            if line.strip() and kind in json.loads(line):
                latest = json.loads(line)[kind]
    return latest


def write_checkpoint(table: Path, profile: str, version: int) -> None:
    from deltalake import DeltaTable

    base, _, mutation = profile.partition(".")
    log = table / "_delta_log"
    if not (log / f"{version:020d}.json").exists():  # CKPT-WRITE-001
        if mutation != "latest-for-missing":
            raise Refused("VERSION_NOT_FOUND", f"{log}: no commit {version:020d}.json")
        version = max(int(p.name[:20]) for p in log.glob("[0-9]" * 20 + ".json"))
    unknown = set(_latest(log, "protocol").get("writerFeatures") or ()) - KNOWN_WRITER_FEATURES
    if unknown:
        raise Refused("UNSUPPORTED_WRITER_FEATURE", f"unknown writer features {sorted(unknown)}")
    policy = (_latest(log, "metaData").get("configuration") or {}).get("delta.checkpointPolicy", "classic")
    if policy not in ("classic", "v2") and mutation != "any-policy":  # CKPT-FEAT-009
        raise Refused("INVALID_OPTION", f"{log}: delta.checkpointPolicy is {policy!r}")
    v2_table = "v2Checkpoint" in (_latest(log, "protocol").get("readerFeatures") or ())
    refuse_v2 = base == "v2" and not v2_table and mutation != "any-protocol"  # CKPT-FEAT-003
    if refuse_v2 and mutation == "stray-refusal":
        (table / "_checkpoint-scratch.tmp").write_bytes(b"left by a refusing writer")
    if refuse_v2 and mutation != "late-refusal":
        raise Refused("V2_FEATURE_NOT_SUPPORTED", f"{log}: version {version} lacks v2Checkpoint")
    if base == "parts" and v2_table and mutation != "on-v2-table":  # CKPT-FEAT-005
        raise Refused("MULTIPART_ON_V2_TABLE", f"{log}: version {version} has v2Checkpoint")
    DeltaTable(str(table), version=version).create_checkpoint()
    classic = log / f"{version:020d}.checkpoint.parquet"
    arrow = pq.read_table(classic)
    classic.unlink()
    (log / "_last_checkpoint").unlink()
    rows = []
    for raw in arrow.to_pylist():
        for kind, value in raw.items():
            if value is not None and kind not in ("checkpointMetadata", "sidecar"):
                action = _plain(value, arrow.schema.field(kind).type)
                if kind in ("add", "remove"):
                    action["dataChange"] = mutation == "data-change"
                if kind == "remove":
                    action.pop("stats", None), action.pop("tags", None)
                rows.append({kind: action})
    if mutation == "expired-kept":  # the commits' removes of files the checkpoint has no action for
        held = {next(iter(r.values()))["path"] for r in rows if {"add", "remove"} & set(r)}
        removes = [a["remove"] for a in _commit_actions(log, version, ("remove",))]
        rows += [{"remove": {**r, "dataChange": False}} for r in removes if r["path"] not in held]
    rows = _mutate_rows(rows, mutation)
    fields = [
        _optional(f, ("stats", "tags") if f.name == "remove" else ())
        for f in arrow.schema
        if f.name not in ("checkpointMetadata", "sidecar")
    ]
    if "commitInfo" in {k for r in rows for k in r}:
        fields.append(pa.field("commitInfo", pa.struct([pa.field("operation", pa.string())])))
    written = _WRITERS[base](table, version, rows, pa.schema(fields), mutation)
    hint: dict[str, Any] = {"version": version, "size": sum(n for _, n in written)}
    if base == "parts":
        hint["parts"] = len(written) + (mutation == "wrong-part-count")
    hint["sizeInBytes"] = sum(p.stat().st_size for p, _ in written)
    hint["numOfAddFiles"] = sum(1 for r in rows if "add" in r)
    if mutation == "last-size":
        hint["size"] += 1
    elif mutation == "last-size-in-bytes":
        hint["sizeInBytes"] += 1
    elif mutation == "last-missing-version":
        hint["version"] = version + 1
    if mutation in ("last-schema-short", "last-schema-on-json"):  # one field; or any, for a JSON top level
        field = {"name": "add", "type": "string", "nullable": True, "metadata": {}}
        hint["checkpointSchema"] = {"type": "struct", "fields": [field]}
    value = checksum(hint) if mutation != "last-bad-checksum" else checksum({"other": 1})
    if mutation == "last-fraction":
        hint["mutant.ratio"] = 0.5  # (a checksum of it would depend on how the reader prints 0.5)
    if mutation != "last-no-checksum":
        hint["checksum"] = value
    (log / "_last_checkpoint").write_text(json.dumps(hint))
    if mutation == "sidecar-missing":
        written[-1][0].unlink()
    if refuse_v2:
        raise Refused(
            "V2_FEATURE_NOT_SUPPORTED", f"{log}: version {version} lacks v2Checkpoint (refused late)"
        )


def _mutate_rows(rows: list[dict[str, Any]], mutation: str) -> list[dict[str, Any]]:
    if mutation == "duplicate-add":
        return [*rows, next(r for r in rows if "add" in r)]
    if mutation == "remove-as-add":
        index = next(i for i, r in enumerate(rows) if "remove" in r)
        remove = rows[index]["remove"]
        add = {k: remove[k] for k in ("path", "partitionValues", "size") if k in remove}
        rows[index] = {
            "add": {**add, "modificationTime": remove.get("deletionTimestamp", 0), "dataChange": False}
        }
    if mutation in ("no-protocol", "no-metadata"):
        kind = "protocol" if mutation == "no-protocol" else "metaData"
        return [r for r in rows if kind not in r]
    if mutation == "commit-info":
        return [*rows, {"commitInfo": {"operation": "CHECKPOINT"}}]
    return rows


def _v1(
    table: Path, version: int, rows: list[dict[str, Any]], schema: pa.Schema, mutation: str
) -> list[tuple[Path, int]]:
    path = table / "_delta_log" / f"{version:020d}.checkpoint.parquet"
    _write_parquet(path, rows, schema)
    return [(path, len(rows))]


def _parts(
    table: Path, version: int, rows: list[dict[str, Any]], schema: pa.Schema, mutation: str
) -> list[tuple[Path, int]]:
    count = 2
    named = count + (mutation == "wrong-part-count")
    parts: dict[int, list[dict[str, Any]]] = {n: [] for n in range(1, count + 1)}
    for row in rows:
        kind, action = next(iter(row.items()))
        part = _part_of(action["path"] if kind in ("add", "remove") else None, count)
        if mutation == "wrong-part" and kind in ("add", "remove"):
            part = count + 1 - part
        parts[part].append(row)
    out = []
    for n, chosen in parts.items():
        path = table / "_delta_log" / f"{version:020d}.checkpoint.{n:010d}.{named:010d}.parquet"
        if mutation == "differing-schemas" and n == 2:
            schema = pa.schema([f for f in schema if f.name != "domainMetadata"])
        _write_parquet(path, chosen, schema)
        out.append((path, len(chosen)))
    return out


def _v2(
    table: Path, version: int, rows: list[dict[str, Any]], schema: pa.Schema, mutation: str
) -> list[tuple[Path, int]]:
    log = table / "_delta_log"
    in_sidecar = ("add", "remove", "protocol") if mutation == "protocol-in-sidecar" else ("add", "remove")
    files = [r for r in rows if next(iter(r)) in in_sidecar]
    name = {
        "sidecar-reserved-name": f"{_uuid(table, f'sidecar-{version}')}+1.parquet",
        "sidecar-plain-name": "plain.parquet",
    }.get(mutation, f"{_uuid(table, f'sidecar-{version}')}.parquet")
    sidecar = log / "_sidecars" / name
    earlier = _sidecar_holding(log, files) if mutation == "reuse-old" else None
    if earlier is not None:
        sidecar, name, size = earlier, earlier.name, earlier.stat().st_size
    else:
        size = _write_parquet(sidecar, files, pa.schema([f for f in schema if f.name in in_sidecar]))
    action = {"path": name, "sizeInBytes": size + (mutation == "sidecar-wrong-size"),
              "modificationTime": sidecar.stat().st_mtime_ns // 1_000_000, "tags": _counts(files, mutation)}  # fmt: skip
    top: list[dict[str, Any]] = []
    if mutation != "no-checkpoint-metadata":
        top.append({"checkpointMetadata": {"version": version}})
    top += [r for r in rows if r not in files]
    if mutation == "commit-actions":
        top += _commit_actions(log, version, ("checkpointMetadata", "sidecar"))
    if mutation != "no-sidecar-action":
        top.append({"sidecar": action})
    path = log / f"{version:020d}.checkpoint.{_uuid(table, f'top-{version}')}.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in top))
    return [(path, len(top)), (sidecar, len(files))]


def _sidecar_holding(log: Path, files: list[dict[str, Any]]) -> Path | None:
    """A sidecar already in ``_sidecars/`` with the file actions ``files`` (kind and path), if any."""
    wanted = sorted((kind, action["path"]) for r in files for kind, action in r.items())
    for path in sorted((log / "_sidecars").glob("*.parquet")):
        held = [
            (k, v["path"]) for r in pq.read_table(path).to_pylist() for k, v in r.items() if v is not None
        ]
        if sorted(held) == wanted:
            return path
    return None


def _commit_actions(log: Path, version: int, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    """The actions of ``kinds`` in commits 0 to ``version``, as they are there."""
    out = []
    for commit in sorted(log.glob("[0-9]" * 20 + ".json")):
        if int(commit.name[:20]) <= version:
            actions = [json.loads(line) for line in commit.read_text().splitlines() if line.strip()]
            out += [a for a in actions if set(kinds) & set(a)]
    return out


def _counts(files: list[dict[str, Any]], mutation: str) -> dict[str, str]:
    """The sidecar action's tags: its file's add and remove rows and oldest tombstone (CKPT-INC-006)."""
    removes = [r["remove"] for r in files if "remove" in r]
    adds = sum("add" in r for r in files) + (mutation == "count-tag-off")
    tags = {"delta-ckpt.numAdds": str(adds), "delta-ckpt.numRemoves": str(len(removes))}
    if removes:
        tags["delta-ckpt.minDeletionTimestamp"] = str(min(r.get("deletionTimestamp") or 0 for r in removes))
    if mutation == "name-set-missing":  # a name set recorded, its file never written (CKPT-INC-007)
        tags["delta-ckpt.nameSet"] = f"0:{'0' * 64}"
    return tags


_WRITERS = {"v1": _v1, "parts": _parts, "v2": _v2}
_M32 = 0xFFFFFFFF


def _part_of(key: str | None, parts: int) -> int:
    """The part of an action with path ``key`` (``None``: a non-file action): ``pmod(hash(key), parts) + 1``,
    ``hash`` Spark SQL's — Murmur3 x86_32 with seed 42, a null key hashing to the seed, and for a string
    its UTF-8 bytes as Spark's ``Murmur3_x86_32.hashUnsafeBytes`` takes them: whole little-endian 4-byte
    words, then each remaining byte as a block of its own, sign-extended (spec CKPT-PART-002/-003)."""

    def block(h: int, k: int) -> int:
        k = (k * 0xCC9E2D51) & _M32
        k = ((k << 15) | (k >> 17)) * 0x1B873593 & _M32
        h ^= k
        return (((h << 13) | (h >> 19)) & _M32) * 5 + 0xE6546B64 & _M32

    h = 42
    if key is not None:
        data = key.encode("utf-8")
        whole = len(data) - len(data) % 4
        for k in [
            *struct.unpack(f"<{whole // 4}I", data[:whole]),
            *struct.unpack(f"{len(data) - whole}b", data[whole:]),
        ]:
            h = block(h, k & _M32)
        h ^= len(data)
        for shift, factor in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
            h = (h ^ (h >> shift)) * factor & _M32
        h ^= h >> 16
    signed = h - (1 << 32) if h & 0x80000000 else h
    return signed % parts + 1  # Python's % is pmod


#: Reader mutation -> what the reader gets wrong.
READER_MUTATIONS: dict[str, str] = {
    "ignores-sidecars": "reads a V2 checkpoint's top-level file only, none of its sidecars",
    "ignores-removes": "a remove in a commit does not cancel the file's add",
    "newest-commit-only": "applies only the newest commit after the checkpoint",
    "ignores-gaps": "replays the commits it finds after the checkpoint, over a missing one",
    "trusts-hint": "takes the checkpoint _last_checkpoint names without listing, and fails when it is not there",
}


def _complete_checkpoint(log: Path, target: int) -> tuple[int, list[str]] | None:
    """The newest complete checkpoint not newer than ``target`` (a multi-part one needs every part)."""
    versions = {parse_name(p.name).version for p in log.iterdir() if parse_name(p.name).kind.is_checkpoint}
    for version in sorted((v for v in versions if v is not None and v <= target), reverse=True):
        for key, names in sorted(checkpoint_names(log, version).items()):
            if not key.startswith("parts-") or len(names) == int(key.removeprefix("parts-")):
                return version, names
    return None


def _rows(path: Path) -> list[dict[str, Any]]:
    """The actions of a JSON or Parquet log file, as the log's JSON values (nulls dropped)."""
    if path.suffix == ".json":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    arrow = pq.read_table(path)
    out = []
    for raw in arrow.to_pylist():
        out += [{k: _plain(v, arrow.schema.field(k).type)} for k, v in raw.items() if v is not None]
    return out


def read_table(table: Path, version: int | None, mutation: str) -> dict[str, Any]:
    log = table / "_delta_log"
    if not log.is_dir():
        raise Refused("TABLE_NOT_FOUND", f"{log} does not exist")
    commits = {
        parse_name(p.name).version: p for p in log.iterdir() if parse_name(p.name).kind is LogFileKind.COMMIT
    }
    latest = max((v for v in commits if v is not None), default=-1)
    target = latest if version is None else version
    if target > latest or target < 0:
        raise Refused("VERSION_NOT_FOUND", f"{table}: version {target}, latest {latest}")
    checkpoint = _complete_checkpoint(log, target)
    hint = log / "_last_checkpoint"
    if mutation == "trusts-hint" and hint.is_file() and json.loads(hint.read_text())["version"] <= target:
        version = json.loads(hint.read_text())["version"]
        names = [n for group in checkpoint_names(log, version).values() for n in group]
        if not names:
            raise Refused("CHECKPOINT_CORRUPT", f"{hint} names version {version}, which has no checkpoint")
        checkpoint = (version, names)
    start = checkpoint[0] + 1 if checkpoint else 0
    missing = [v for v in range(start, target + 1) if v not in commits]
    if missing and mutation != "ignores-gaps":
        raise Refused("LOG_GAP", f"{table}: commits {missing} missing after checkpoint {checkpoint}")
    replay = [v for v in range(start, target + 1) if v in commits]
    if mutation == "newest-commit-only":
        replay = replay[-1:]
    actions: list[dict[str, Any]] = []
    for name in checkpoint[1] if checkpoint else []:
        actions += _rows(log / name)
    if mutation != "ignores-sidecars":
        sidecars = [a["sidecar"]["path"] for a in actions if "sidecar" in a]
        actions += [r for name in sidecars for r in _rows(log / "_sidecars" / unquote(name))]
    for v in replay:
        actions += _rows(commits[v])
    state: dict[str, Any] = {"protocol": None, "metaData": None}
    files: dict[tuple[str, str | None], Any] = {}
    txns: dict[str, Any] = {}
    domains: dict[str, Any] = {}
    for action in actions:
        for kind, body in action.items():
            key = (str(body.get("path")), dv_id(body.get("deletionVector")))
            if kind in state:
                state[kind] = body
            elif kind == "add":
                files[key] = body
            elif kind == "remove" and mutation != "ignores-removes":
                files.pop(key, None)
            elif kind == "txn":
                txns[body["appId"]] = body
            elif kind == "domainMetadata" and body.get("removed"):
                domains.pop(body["domain"], None)
            elif kind == "domainMetadata":
                domains[body["domain"]] = body
    if state["protocol"] is None or state["metaData"] is None:
        raise Refused("LOG_CORRUPT", f"{table}: no protocol or metaData at version {target}")
    return {"version": target, "protocol": state["protocol"], "metadata": state["metaData"],
            "files": list(files.values()), "txns": list(txns.values()), "domainMetadata": list(domains.values())}  # fmt: skip


def hello(role: str, mutation: str) -> dict[str, Any]:
    if role == "reader":
        return {"name": f"reader-{mutation or 'correct'}", "version": "0", "protocolVersion": PROTOCOL_VERSION,
                "roles": ["reader"], "unavailableFields": ["tombstones"]}  # fmt: skip
    profiles = [{"name": base, "description": f"correct {base}", **shape} for base, shape in _BASES.items()]
    profiles += [
        {
            "name": f"{base}.{mutation}",
            "description": what,
            **_BASES[base],
            **({"needsV2Table": True} if mutation == "on-v2-table" else {}),
        }
        for mutation, (base, what) in MUTATIONS.items()
    ]
    return {"name": "mutants", "version": "0", "protocolVersion": PROTOCOL_VERSION, "roles": ["writer"],
            "profiles": profiles}  # fmt: skip


def main(argv: list[str]) -> int:
    role, mutation, *_ = [*argv, "", ""]
    if role not in ("writer", "reader") or (role == "reader" and mutation not in ("", *READER_MUTATIONS)):
        print(f"usage: mutant_harness.py writer | reader [{'|'.join(READER_MUTATIONS)}]", file=sys.stderr)
        return 2
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        response: dict[str, Any] = {"ok": True, "result": {}}
        try:
            if op == "hello":
                response["result"] = hello(role, mutation)
            elif op == "read":
                state = read_table(Path(request["table"]), request["version"], mutation)
                response["result"] = {"state": state, "rows": None, "checkpoint": None}
            elif op == "write_checkpoint":
                write_checkpoint(Path(request["table"]), request["profile"], request["version"])
        except Refused as exc:
            response = {"ok": False, "error": {"code": exc.code, "message": str(exc)}}
        sys.stdout.write(json.dumps({"id": request["id"], **response}) + "\n")
        sys.stdout.flush()
        if op == "shutdown":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
