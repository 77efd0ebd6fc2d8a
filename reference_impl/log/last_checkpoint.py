"""``_delta_log/_last_checkpoint``: parse, validate, serialize, and the checksum delta-spark computes.

Spec: ``spec/checkpoints.md`` §14 The last-checkpoint file (``CKPT-LAST-*``) and §15 The
last-checkpoint checksum (``CKPT-CKSUM-*``); PROTOCOL.md "Last Checkpoint File Schema", "JSON checksum".

The checksum is an MD5 over a canonical form of the JSON document:

1. every scalar leaf becomes ``path=value``; a path joins object keys (percent-encoded, quoted) and
   array indexes (bare decimals) with ``+``; empty objects and arrays contribute nothing;
2. strings are percent-encoded (UTF-8 bytes; ``A-Za-z0-9-._~`` kept, everything else ``%XX``
   upper-case) and quoted; ``true``/``false``/``null`` and numbers are written as they are;
3. the top-level ``checksum`` pair is dropped; the pairs are sorted and joined with ``,``.

**Divergence.** PROTOCOL.md sorts by *path*; delta-spark (``LastCheckpointInfo.treeNodeToChecksum``)
sorts the whole ``path=value`` string. They differ when one path is a prefix of another, which
happens for arrays of 11 or more scalars (``writerFeatures`` of many tables). delta-spark rejects a
checksum made the PROTOCOL way, so :func:`checksum` follows delta-spark; :func:`checksum_by_path`
is the literal PROTOCOL reading, kept for the spec's worked examples.

Field order on write follows delta-spark's ``@JsonPropertyOrder``: ``version``, ``size``, ``parts``
first (so old readers get them in one read), then ``sizeInBytes``, ``numOfAddFiles``,
``checkpointSchema``, ``tags``, ``v2Checkpoint``, and ``checksum`` last.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from reference_impl.errors import LastCheckpointCorrupt
from reference_impl.log.naming import LAST_CHECKPOINT
from reference_impl.storage import Location, Storage

#: delta-spark's ``lastCheckpoint.nonFileActions.threshold`` / ``lastCheckpoint.sidecars.threshold``.
NON_FILE_ACTIONS_THRESHOLD = 30
SIDECARS_THRESHOLD = 30
#: delta-spark's ``checkpointSchema.writeThresholdLength``.
CHECKPOINT_SCHEMA_THRESHOLD = 20000

_FIELD_ORDER = (
    "version", "size", "parts", "sizeInBytes", "numOfAddFiles", "checkpointSchema", "tags", "v2Checkpoint",
)  # fmt: skip
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _encode(text: str) -> str:
    out = "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode("utf-8"))
    return f'"{out}"'


def java_double_to_string(value: float) -> str:
    """Render a float as Java's ``Double.toString`` does (what Jackson's ``asText`` prints).

    ``_last_checkpoint`` files hold only integers; this exists so that the checksum of any JSON
    document matches delta-spark's.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    parsed = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(str(d) for d in parsed.digits)
    exponent = int(parsed.exponent)
    stripped = digits.rstrip("0") or "0"
    exponent += len(digits) - len(stripped)
    sci = len(stripped) - 1 + exponent  # decimal exponent of the first digit
    if 1e-3 <= abs(value) < 1e7:
        if sci >= 0:
            whole = stripped[: sci + 1].ljust(sci + 1, "0")
            fraction = stripped[sci + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-sci - 1) + stripped
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{stripped[0]}.{stripped[1:] or '0'}E{sci}"


def _leaf(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _encode(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double_to_string(value)
    raise TypeError(f"not a JSON scalar: {value!r}")


def canonical_pairs(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``(path, value)`` pairs of the canonical form, in document order, ``checksum`` dropped."""
    pairs: list[tuple[str, str]] = []

    def walk(node: Any, prefix: list[str]) -> None:
        if isinstance(node, Mapping):
            for key, child in node.items():
                walk(child, [*prefix, _encode(key)])
        elif isinstance(node, list):
            for index, child in enumerate(node):
                walk(child, [*prefix, str(index)])
        else:
            pairs.append(("+".join(prefix), _leaf(node)))

    walk(document, [])
    return [(p, v) for p, v in pairs if p != '"checksum"']


def canonical_string(document: Mapping[str, Any]) -> str:
    """delta-spark's canonical string: ``path=value`` entries sorted as whole strings."""
    return ",".join(sorted(f"{p}={v}" for p, v in canonical_pairs(document)))


def checksum(document: Mapping[str, Any]) -> str:
    """The ``_last_checkpoint`` checksum exactly as delta-spark computes and validates it."""
    return hashlib.md5(canonical_string(document).encode("utf-8")).hexdigest()


def checksum_by_path(document: Mapping[str, Any]) -> str:
    """The literal PROTOCOL.md reading (pairs sorted by path bytes) — differs for long arrays."""
    ordered = sorted(canonical_pairs(document), key=lambda pv: pv[0].encode("utf-8"))
    return hashlib.md5(",".join(f"{p}={v}" for p, v in ordered).encode("utf-8")).hexdigest()


def _reject_duplicates(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


@dataclass(frozen=True)
class SidecarRef:
    """A sidecar as listed in ``v2Checkpoint.sidecarFiles`` (and in ``sidecar`` actions)."""

    path: str
    size_in_bytes: int
    modification_time: int

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sizeInBytes": self.size_in_bytes,
            "modificationTime": self.modification_time,
        }


@dataclass(frozen=True)
class LastCheckpointV2:
    """The ``v2Checkpoint`` object: the UUID-named top-level file and, optionally, its content."""

    path: str
    size_in_bytes: int
    modification_time: int
    non_file_actions: tuple[dict[str, Any], ...] | None = None
    sidecar_files: tuple[SidecarRef, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "sizeInBytes": self.size_in_bytes,
            "modificationTime": self.modification_time,
        }
        if self.non_file_actions is not None:
            out["nonFileActions"] = list(self.non_file_actions)
        if self.sidecar_files is not None:
            out["sidecarFiles"] = [s.to_json() for s in self.sidecar_files]
        return out


@dataclass(frozen=True)
class LastCheckpoint:
    """A parsed (or to-be-written) ``_last_checkpoint``. ``raw`` is the document as read."""

    version: int
    size: int
    parts: int | None = None
    size_in_bytes: int | None = None
    num_of_add_files: int | None = None
    checkpoint_schema: dict[str, Any] | None = None
    tags: dict[str, str] | None = None
    v2_checkpoint: LastCheckpointV2 | None = None
    checksum: str | None = None
    raw: dict[str, Any] | None = None

    def to_document(self, *, with_checksum: bool = True) -> dict[str, Any]:
        """The JSON object in delta-spark's field order, nulls omitted, checksum last."""
        values: dict[str, Any] = {
            "version": self.version,
            "size": self.size,
            "parts": self.parts,
            "sizeInBytes": self.size_in_bytes,
            "numOfAddFiles": self.num_of_add_files,
            "checkpointSchema": self.checkpoint_schema,
            "tags": self.tags,
            "v2Checkpoint": self.v2_checkpoint.to_json() if self.v2_checkpoint else None,
        }
        document = {k: values[k] for k in _FIELD_ORDER if values[k] is not None}
        if with_checksum:
            document["checksum"] = checksum(document)
        return document

    def to_json_text(self, *, with_checksum: bool = True) -> str:
        return json.dumps(self.to_document(with_checksum=with_checksum), separators=(",", ":"))


def _int_field(doc: Mapping[str, Any], key: str, *, required: bool, minimum: int | None = None) -> int | None:
    value = doc.get(key)
    if value is None:
        if required:
            raise ValueError(f"missing required field {key!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"field {key!r} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"field {key!r} must be >= {minimum}, got {value}")
    return value


def _parse_v2(obj: Any) -> LastCheckpointV2:
    if not isinstance(obj, Mapping):
        raise ValueError("v2Checkpoint must be an object")
    path = obj.get("path")
    if not isinstance(path, str) or not path:
        raise ValueError("v2Checkpoint.path must be a non-empty string")
    size = _int_field(obj, "sizeInBytes", required=True, minimum=0)
    mtime = _int_field(obj, "modificationTime", required=True)
    actions = obj.get("nonFileActions")
    if actions is not None and (
        not isinstance(actions, list) or not all(isinstance(a, Mapping) and len(a) == 1 for a in actions)
    ):
        raise ValueError("v2Checkpoint.nonFileActions must be a list of single-action objects")
    sidecars_raw = obj.get("sidecarFiles")
    sidecars: tuple[SidecarRef, ...] | None = None
    if sidecars_raw is not None:
        if not isinstance(sidecars_raw, list):
            raise ValueError("v2Checkpoint.sidecarFiles must be a list")
        refs = []
        for item in sidecars_raw:
            if not isinstance(item, Mapping) or not isinstance(item.get("path"), str):
                raise ValueError("each v2Checkpoint.sidecarFiles entry needs a string path")
            refs.append(
                SidecarRef(
                    item["path"],
                    _int_field(item, "sizeInBytes", required=True, minimum=0) or 0,
                    _int_field(item, "modificationTime", required=True) or 0,
                )
            )
        sidecars = tuple(refs)
    assert size is not None and mtime is not None
    return LastCheckpointV2(
        path=path,
        size_in_bytes=size,
        modification_time=mtime,
        non_file_actions=tuple(dict(a) for a in actions) if actions is not None else None,
        sidecar_files=sidecars,
    )


def parse_last_checkpoint(text: str, *, path: str = "_last_checkpoint") -> LastCheckpoint:
    """Parse and validate a ``_last_checkpoint`` document.

    Raises :class:`LastCheckpointCorrupt` (naming ``path``) when the text is empty, not a JSON
    object, has duplicate keys, lacks ``version``/``size``, has ill-typed fields, or carries a
    ``checksum`` that does not match (delta-spark's algorithm). A missing checksum is accepted.
    """
    if not text.strip():
        raise LastCheckpointCorrupt("the file is empty", path=path, rule="CKPT-READ-010")
    try:
        document = json.loads(text, object_pairs_hook=_reject_duplicates)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply (CKPT-READ-010)
        raise LastCheckpointCorrupt(f"not valid JSON: {exc}", path=path) from exc
    if not isinstance(document, dict):
        raise LastCheckpointCorrupt("not a JSON object", path=path)
    try:
        version = _int_field(document, "version", required=True, minimum=0)
        size = _int_field(document, "size", required=True, minimum=-1)
        parts = _int_field(document, "parts", required=False, minimum=1)
        size_in_bytes = _int_field(document, "sizeInBytes", required=False, minimum=0)
        num_add = _int_field(document, "numOfAddFiles", required=False, minimum=0)
        schema = document.get("checkpointSchema")
        if schema is not None and not isinstance(schema, dict):
            raise ValueError("checkpointSchema must be an object")
        tags = document.get("tags")
        if tags is not None and not (
            isinstance(tags, dict) and all(isinstance(v, str) for v in tags.values())
        ):
            raise ValueError("tags must be a string map")
        v2 = _parse_v2(document["v2Checkpoint"]) if document.get("v2Checkpoint") is not None else None
        stored = document.get("checksum")
        if stored is not None and not isinstance(stored, str):
            raise ValueError("checksum must be a string")
    except ValueError as exc:
        raise LastCheckpointCorrupt(str(exc), path=path) from exc
    if stored is not None:
        actual = checksum(document)
        if stored != actual:
            raise LastCheckpointCorrupt(
                f"checksum mismatch: stored {stored}, computed {actual}", path=path, rule="CKPT-CKSUM-005"
            )
    assert version is not None and size is not None
    return LastCheckpoint(
        version=version,
        size=size,
        parts=parts,
        size_in_bytes=size_in_bytes,
        num_of_add_files=num_add,
        checkpoint_schema=schema,
        tags=tags,
        v2_checkpoint=v2,
        checksum=stored,
        raw=document,
    )


def trimmed(items: Sequence[Any] | None, threshold: int) -> tuple[Any, ...] | None:
    """delta-spark's trimming: drop an optional list entirely when it has more than ``threshold`` items."""
    if items is None or len(items) > threshold:
        return None
    return tuple(items)


def read_last_checkpoint(storage: Storage, log_dir: Location) -> tuple[LastCheckpoint | None, str | None]:
    """Read ``_last_checkpoint``: ``(parsed, None)``, ``(None, None)`` if absent, or ``(None, why)``."""
    path = log_dir / LAST_CHECKPOINT
    if storage.stat(path) is None:
        return None, None
    try:
        return parse_last_checkpoint(
            storage.read_bytes(path).decode("utf-8", errors="replace"), path=str(path)
        ), None
    except LastCheckpointCorrupt as exc:
        return None, exc.message
