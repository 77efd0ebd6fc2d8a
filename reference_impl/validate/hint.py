"""LAST checks: ``_delta_log/_last_checkpoint`` is well formed and describes a checkpoint that exists, exactly.

Spec: ``spec/checkpoints.md`` §14 The last-checkpoint file (``CKPT-LAST-*``) and §15 The
last-checkpoint checksum (``CKPT-CKSUM-*``). The checksum is computed by the reference's own
:func:`~reference_impl.log.last_checkpoint.checksum` (delta-spark's algorithm, §15.1).

A hint naming a version without a complete checkpoint (ahead of the log, or left behind by a
cleanup) breaks ``CKPT-LAST-002``; a hint older than the newest complete checkpoint is only
stale (``CKPT-LAST-011``, SHOULD). Values are compared with the described checkpoint's files:
``size`` (rows, sidecars included), ``sizeInBytes``, ``numOfAddFiles``, ``parts``,
``v2Checkpoint`` and the shape of ``checkpointSchema``.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Sequence
from typing import Any

from reference_impl.log.last_checkpoint import checksum
from reference_impl.log.listing import CheckpointInstance
from reference_impl.log.naming import LAST_CHECKPOINT
from reference_impl.validate.context import TableView, log_path
from reference_impl.validate.finding import Finding
from reference_impl.validate.shapes import arrow_shape, describe_difference, spark_shape
from spec.schemas import validator
from spec.vocabulary import LogFileKind

WHERE = log_path(LAST_CHECKPOINT)


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


def _finding(rule: str, seen: object, message: str) -> Finding:
    return Finding("LAST", rule, WHERE, str(seen), message)


def check_last_checkpoint(view: TableView) -> Iterator[Finding]:
    """``_last_checkpoint``: JSON, schema, member order, checksum, and the checkpoint it describes."""
    raw = view.last_checkpoint_text
    if raw is None:
        return
    document = yield from _parse(raw)
    if document is None:
        return
    yield from _form(document)
    yield from _described(view, document)


def _parse(raw: bytes) -> Generator[Finding, None, dict[str, Any] | None]:
    """Findings of a document that is not one JSON object; returns the object when it is one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        yield _finding("CKPT-LAST-001", f"byte {exc.start}", "the file is not UTF-8 text")
        return None
    if not text.strip():
        yield _finding("CKPT-LAST-001", f"{len(raw)} bytes", "the file is empty")
        return None
    try:
        document = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        yield _finding("CKPT-CKSUM-002", exc.args[0], "a member appears twice in one object")
        return None
    except ValueError as exc:
        yield _finding("CKPT-LAST-001", text[:80], f"not valid JSON: {exc}")
        return None
    except RecursionError:
        yield _finding("CKPT-LAST-001", text[:80], "nested too deeply to be a _last_checkpoint document")
        return None
    if not isinstance(document, dict):
        yield _finding("CKPT-LAST-001", type(document).__name__, "not a JSON object")
        return None
    return document


def _form(document: dict[str, Any]) -> Iterator[Finding]:
    for error in sorted(
        validator("last_checkpoint.schema.json").iter_errors(document), key=lambda e: list(e.absolute_path)
    ):
        where = "/".join(map(str, error.absolute_path)) or "<root>"
        yield _finding("CKPT-LAST-001", f"{where}: {error.instance!r}"[:200], error.message[:200])
    keys = list(document)
    first = ["version", "size", *(["parts"] if "parts" in document else [])]
    if keys[: len(first)] != first:
        yield _finding(
            "CKPT-LAST-009",
            ", ".join(keys[:3]),
            f"the first members must be {', '.join(first)}, in that order",
        )
    if "checksum" not in document:
        yield _finding("CKPT-LAST-010", "no checksum", "a writer should record the checksum of §15")
    else:
        if keys[-1] != "checksum":
            yield _finding(
                "CKPT-LAST-010", f"last member {keys[-1]}", "the checksum should be the last member"
            )
        expected = checksum(document)
        if document["checksum"] != expected:
            yield _finding(
                "CKPT-CKSUM-001",
                document["checksum"],
                f"the checksum does not match the content (computed {expected})",
            )
    if _has_float(document):
        yield _finding("CKPT-CKSUM-003", "a non-integer number", "only integers should appear")


def _has_float(node: Any) -> bool:
    if isinstance(node, float):
        return True
    if isinstance(node, dict):
        return any(_has_float(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_float(v) for v in node)
    return False


def _int(document: dict[str, Any], key: str) -> int | None:
    value = document.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _described(view: TableView, document: dict[str, Any]) -> Iterator[Finding]:
    version = _int(document, "version")
    if version is None:
        return
    complete = view.listing.checkpoints
    at_version = [c for c in complete if c.version == version]
    if not at_version:
        yield _finding(
            "CKPT-LAST-002",
            f"version {version}",
            "no complete checkpoint of this version exists"
            + (
                ""
                if not complete
                else f" (complete checkpoints: {', '.join(str(c.version) for c in complete)})"
            ),
        )
        return
    newest = complete[-1].version
    if newest > version:
        yield _finding(
            "CKPT-LAST-011", f"version {version}", f"a newer complete checkpoint exists (version {newest})"
        )
    parts = document.get("parts")
    v2 = document.get("v2Checkpoint") if isinstance(document.get("v2Checkpoint"), dict) else None
    multi = [c for c in at_version if c.kind is LogFileKind.CHECKPOINT_PART]
    if parts is not None and not any(c.num_parts == parts for c in multi):
        yield _finding(
            "CKPT-LAST-013", f"parts {parts}", "no multi-part checkpoint of this version has that many parts"
        )
        return
    if v2 is not None:
        described = [
            c for c in at_version if c.kind is LogFileKind.CHECKPOINT_UUID and c.name == v2.get("path")
        ]
        if not described:
            yield _finding(
                "CKPT-LAST-006",
                f"v2Checkpoint.path {v2.get('path')!r}",
                "v2Checkpoint must name the UUID-named top-level file of the described checkpoint",
            )
            return
    elif parts is not None:
        described = [c for c in multi if c.num_parts == parts]
    else:
        # no v2Checkpoint: a classic-named file if there is one (a UUID-named one only without it)
        classic = [c for c in at_version if c.kind is LogFileKind.CHECKPOINT_CLASSIC]
        described = classic or [c for c in at_version if c.kind is LogFileKind.CHECKPOINT_UUID]
        if not described:
            yield _finding(
                "CKPT-LAST-013",
                "no parts",
                f"the checkpoint of version {version} is multi-part: parts must give its part count",
            )
            return
    instance = described[-1]
    if not view.unreadable(instance):
        yield from _counts(view, instance, document, v2)
        yield from _schema(view, instance, document)


def _counts(
    view: TableView, instance: CheckpointInstance, document: dict[str, Any], v2: dict[str, Any] | None
) -> Iterator[Finding]:
    tops = view.top_level(instance)
    refs = view.sidecar_references(instance)
    sidecars = [view.summary(r.info, sidecar=True) for r in refs if r.info is not None]
    whole = len(sidecars) == len(refs) and not any(s.error for s in sidecars)
    rows = sum(s.rows for s in tops) + sum(s.rows for s in sidecars)
    size_bytes = instance.size_in_bytes + sum(s.info.size for s in sidecars)
    adds = sum(s.actions["add"] for s in tops) + sum(s.actions["add"] for s in sidecars)
    checks = [
        ("CKPT-LAST-003", "size", rows, "the number of actions in all files of the checkpoint, sidecars included"),
        ("CKPT-LAST-004", "sizeInBytes", size_bytes, "the byte length of all files of the checkpoint, sidecars included"),
        ("CKPT-LAST-004", "numOfAddFiles", adds, "the number of add actions in the checkpoint"),
    ]  # fmt: skip
    for rule, key, actual, what in checks:
        recorded = _int(document, key)
        if whole and recorded is not None and recorded != actual:
            yield _finding(rule, f"{key} {recorded}", f"must be {what}: {actual}")
    if v2 is None:
        return
    top = tops[0]
    if _int(v2, "sizeInBytes") is not None and v2["sizeInBytes"] != top.info.size:
        yield _finding(
            "CKPT-LAST-006",
            f"v2Checkpoint.sizeInBytes {v2['sizeInBytes']}",
            f"must be the length of {instance.name}: {top.info.size}",
        )
    non_file = [a for a in top.non_file_actions if "sidecar" not in a]
    listed = v2.get("nonFileActions")
    if isinstance(listed, list) and sorted(map(_canonical, listed)) != sorted(map(_canonical, non_file)):
        yield _finding(
            "CKPT-LAST-007",
            f"{len(listed)} nonFileActions",
            f"must list the {len(non_file)} non-file actions of {instance.name} other than sidecar actions",
        )
    sidecar_files = v2.get("sidecarFiles")
    if isinstance(sidecar_files, list):
        actual_refs = sorted(_sidecar_key(r.action) for r in refs)
        if sorted(_sidecar_key(s) for s in sidecar_files if isinstance(s, dict)) != actual_refs:
            yield _finding(
                "CKPT-LAST-007",
                f"{len(sidecar_files)} sidecarFiles",
                f"must list exactly the {len(refs)} sidecar actions of {instance.name} (path, size, time)",
            )


def _sidecar_key(action: dict[str, Any]) -> tuple[str, str, str]:
    return (str(action.get("path")), str(action.get("sizeInBytes")), str(action.get("modificationTime")))


def _canonical(action: Any) -> str:
    """An action as canonical JSON: nulls, empty maps and empty lists dropped (Parquet and JSON differ there)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            kept = {k: strip(v) for k, v in node.items()}
            return {k: v for k, v in kept.items() if v not in (None, {}, [])}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return json.dumps(strip(action), sort_keys=True)


def _schema(view: TableView, instance: CheckpointInstance, document: dict[str, Any]) -> Iterator[Finding]:
    recorded = document.get("checkpointSchema")
    if recorded is None:
        return
    top = view.top_level(instance)[0]
    if top.is_json:
        yield _finding(
            "CKPT-LAST-005",
            "checkpointSchema present",
            f"{instance.name} is JSON: there is no schema to record",
        )
        return
    difference = describe_difference(spark_shape(recorded), arrow_shape(top.schema))
    if difference != "equal":
        yield _finding(
            "CKPT-LAST-005",
            difference,
            f"checkpointSchema must be the schema of {instance.name}",
        )
