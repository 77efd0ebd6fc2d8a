"""SIDE checks: each sidecar a checkpoint references exists inside ``_sidecars/``, has the recorded size and holds file actions only.

Spec: ``spec/checkpoints.md`` §12 Sidecar files (``CKPT-SIDE-001``, ``-002``, ``-004``, ``-007``,
``-010``, ``-011``, ``-015``), §11 (``CKPT-V2-006``: the well-known tags of ``checkpointMetadata``)
and §18 (``CKPT-CLEAN-017``: unreferenced sidecars). References are resolved by the reader's own
:func:`~reference_impl.read.sidecars.resolve_sidecar`, so a reference the reader refuses (a path
outside ``_sidecars/``, a traversal, a link out of the table) is refused here with the same code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from typing import Any

from reference_impl.errors import CheckpointError
from reference_impl.log.listing import CheckpointInstance
from reference_impl.log.naming import SIDECAR_DIR, name_set_owner
from reference_impl.read.sidecars import reference_names
from reference_impl.validate.content import file_findings
from reference_impl.validate.context import SidecarReference, TableView, log_path, sidecar_path
from reference_impl.validate.files import FILE_ACTION_COLUMNS, FileSummary
from reference_impl.validate.finding import Finding
from reference_impl.validate.shapes import arrow_shape, describe_difference, spark_shape
from spec.error_codes import ErrorCode

_SAFE_NAME = re.compile(r"^[A-Za-z0-9._~-]+$")


def check_sidecar_references(view: TableView) -> Iterator[Finding]:
    """Every sidecar reference of every readable complete checkpoint, and the files they name."""
    if view.sidecars_linked_out:
        real = view.table.storage.real(view.log_dir / SIDECAR_DIR)
        yield Finding(
            "SIDE",
            "CKPT-SIDE-001",
            f"_delta_log/{SIDECAR_DIR}",
            f"a symbolic link to {real}",
            "sidecars must be files directly inside the table's own _delta_log/_sidecars/: nothing is read through it",
            ErrorCode.SIDECAR_PATH_INVALID,
        )
    for instance in view.checkpoints:
        if view.unreadable(instance) or not view.is_v2(instance):
            continue
        refs = view.sidecar_references(instance)
        where = log_path(instance.name)
        summaries: list[FileSummary] = []
        for ref in refs:
            found = yield from _reference(view, ref, where)
            if found is not None:
                summaries.append(found)
        if refs and len(summaries) == len(refs):
            yield from _tags(view, instance, summaries, where)
            yield from _one_schema(summaries, where)


def _reference(
    view: TableView, ref: SidecarReference, where: str
) -> Generator[Finding, None, FileSummary | None]:
    """Findings of one reference; returns the sidecar's summary when the file exists and reads."""
    raw = str(ref.action.get("path"))
    if ref.error is not None:
        yield _refused(ref.error, raw, where)
        return None
    assert ref.resolved is not None
    name = ref.resolved.name
    if "/" in raw or "\\" in raw or ":" in raw:
        yield Finding("SIDE", "CKPT-SIDE-010", where, raw, "a sidecar path must be the bare file name")
    if not _SAFE_NAME.match(name):
        yield Finding(
            "SIDE", "CKPT-SIDE-011", sidecar_path(name), name, "sidecar names use only A-Z a-z 0-9 - . _ ~"
        )
    if ref.info is None:
        yield Finding(
            "SIDE",
            "CKPT-SIDE-007",
            sidecar_path(name),
            "absent",
            f"referenced by {where}",
            ErrorCode.SIDECAR_MISSING,
        )
        return None
    recorded = ref.action.get("sizeInBytes")
    if recorded != ref.info.size:
        yield Finding(
            "SIDE",
            "CKPT-SIDE-004",
            sidecar_path(name),
            f"sizeInBytes {recorded}",
            f"the file has {ref.info.size} bytes",
            ErrorCode.SIDECAR_SIZE_MISMATCH,
        )
    summary = view.summary(ref.info, sidecar=True)
    yield from file_findings(summary, sidecar_path(name), rule_if_unreadable="CKPT-WRITE-004")
    if summary.error:
        return None
    others = sum(n for kind, n in summary.actions.items() if kind not in FILE_ACTION_COLUMNS)
    if others:
        yield Finding(
            "SIDE",
            "CKPT-SIDE-002",
            sidecar_path(name),
            f"{others} other action(s)",
            "a sidecar holds add and remove actions only",
        )
    return summary


def _refused(error: CheckpointError, raw: str, where: str) -> Finding:
    """A reference the reader refuses: a link out of ``_sidecars/`` is a sidecar not inside it (SIDE-001);
    anything else is a path that is not a sidecar's bare file name (SIDE-010)."""
    code = error.code if isinstance(error.code, ErrorCode) else None
    rule = "CKPT-SIDE-001" if error.rule == "CKPT-SIDE-017" else "CKPT-SIDE-010"
    reason = f"the reader refuses this sidecar path ({error.rule}): {error.message}"
    return Finding("SIDE", rule, where, raw, reason, code)


def _tags(
    view: TableView, instance: CheckpointInstance, sidecars: list[FileSummary], where: str
) -> Iterator[Finding]:
    metadata = next(
        (a["checkpointMetadata"] for a in view.non_file_actions(instance) if "checkpointMetadata" in a), None
    )
    tags: dict[str, Any] = (metadata or {}).get("tags") or {}
    adds = sum(s.actions["add"] for s in [*view.top_level(instance), *sidecars])
    actual = {
        "sidecarNumActions": sum(s.rows for s in sidecars),
        "sidecarSizeInBytes": sum(s.info.size for s in sidecars),
        "numOfAddFiles": adds,
    }
    for key, value in actual.items():
        if key in tags and str(tags[key]) != str(value):
            yield Finding("SIDE", "CKPT-V2-006", where, f"tags.{key} {tags[key]}", f"must be {value}")
    recorded = tags.get("sidecarFileSchema")
    if isinstance(recorded, str):
        try:
            shape = spark_shape(json.loads(recorded))
        except ValueError:
            shape = ()
        difference = describe_difference(shape, arrow_shape(sidecars[0].schema))
        if difference != "equal":
            yield Finding(
                "SIDE",
                "CKPT-V2-006",
                where,
                f"tags.sidecarFileSchema: {difference}",
                "must be the sidecars' schema",
            )


def _one_schema(summaries: list[FileSummary], where: str) -> Iterator[Finding]:
    first = summaries[0]
    for other in summaries[1:]:
        if other.schema is not None and first.schema is not None and not other.schema.equals(first.schema):
            difference = describe_difference(arrow_shape(first.schema), arrow_shape(other.schema))
            yield Finding(
                "SIDE",
                "CKPT-SIDE-015",
                sidecar_path(other.name),
                f"schema differs from {first.name}: {difference}",
                f"all sidecars of {where} should share one Parquet schema",
            )


def check_orphan_sidecars(view: TableView) -> Iterator[Finding]:
    """Files in ``_sidecars/`` that no complete checkpoint references (what cleanup should collect), but
    not the name set of a referenced sidecar."""
    referenced: set[str] = set()
    for instance in view.listing.checkpoints:
        if view.unreadable(instance):
            return  # an unreadable checkpoint's references are unknown: call nothing an orphan
        for ref in view.sidecar_references(instance):
            # a refused path still names a file: every bare name it may denote, as the cleaner reads it
            names = (
                {ref.resolved.name}
                if ref.resolved is not None
                else reference_names(str(ref.action.get("path")))
            )
            referenced |= names
    for info in view.sidecar_files:
        # a referenced sidecar's name set (CKPT-INC-007) is needed while its sidecar may be listed again
        if info.name.startswith(".") or info.name in referenced or name_set_owner(info.name) in referenced:
            continue
        yield Finding(
            "SIDE",
            "CKPT-CLEAN-017",
            sidecar_path(info.name),
            f"{info.size} bytes, modified at {info.mtime_ms} ms",
            "no complete checkpoint references this sidecar: metadata cleanup should delete it once it is old enough",
        )
