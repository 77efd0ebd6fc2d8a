"""SCHEMA and CONTENT checks: each checkpoint's top-level file or parts, read whole, hold what the spec allows.

Spec: ``spec/checkpoints.md`` §5 Checkpoint file schemas (``CKPT-SCHEMA-001``, ``-002``, ``-003``,
``-005``, ``-006``, ``-007``), §6 Checkpoint content (``CKPT-CONTENT-002``, ``-010``), §7 Feature gating
(``CKPT-FEAT-002``, ``-004``), §8 V1 (``CKPT-V1-001``), §11 V2 (``CKPT-V2-002``, ``-004``, ``-005``,
``-010``..``-012``) §17 (``CKPT-WRITE-004``, ``-006``: a file that cannot be read was published
before it was whole) and §16.4 (``CKPT-READ-026``: a stale Hadoop ``.crc`` makes a file unreadable).

Findings carry the error code a reader reports for the same problem (§21), so an invalid table's
expected error shows in the report as the code of a finding.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from reference_impl.errors import CheckpointCorrupt
from reference_impl.log.listing import CheckpointInstance
from reference_impl.log.naming import SIDECAR_DIR, hadoop_checksum_name, parse_log_file_name
from reference_impl.read.hadoop_checksum import verify_hadoop_checksum
from reference_impl.validate.context import UNREADABLE, TableView, log_path, sidecar_path, supports_v2
from reference_impl.validate.field_types import required_fields, type_mismatches
from reference_impl.validate.files import FILE_ACTION_COLUMNS, FileSummary
from reference_impl.validate.finding import Finding
from spec.error_codes import ErrorCode
from spec.vocabulary import LogFileKind

_MAX_LINES = 3


def unreadable_rule(kind: LogFileKind) -> str:
    """The writer rule a file that cannot be read breaks: atomic publication for top-level files, order for parts."""
    return "CKPT-WRITE-004" if kind is LogFileKind.CHECKPOINT_PART else "CKPT-WRITE-006"


def file_findings(summary: FileSummary, where: str, *, rule_if_unreadable: str) -> Iterator[Finding]:
    """Findings of one checkpoint file on its own: readable, one action per row, no ``remove`` statistics."""
    if summary.error:
        yield Finding(
            "SCHEMA",
            rule_if_unreadable,
            where,
            summary.error,
            "the file cannot be read as a checkpoint file",
            UNREADABLE,
        )
        return
    if summary.rows_not_one_action:
        yield Finding(
            "SCHEMA",
            "CKPT-V2-005" if summary.is_json else "CKPT-SCHEMA-001",
            where,
            f"{summary.rows_not_one_action} row(s)",
            "every row must hold exactly one action",
        )
    for line in summary.invalid_lines[:_MAX_LINES]:
        yield Finding(
            "SCHEMA",
            "CKPT-V2-005",
            where,
            line,
            "each line must be valid against checkpoint_action.schema.json",
        )
    if summary.schema is not None:
        mismatches = list(type_mismatches(summary.schema))
        if mismatches:
            yield Finding(
                "SCHEMA",
                "CKPT-SCHEMA-002",
                where,
                "; ".join(mismatches[:_MAX_LINES])
                + (f" (+{len(mismatches) - _MAX_LINES} more)" if len(mismatches) > _MAX_LINES else ""),
                "each action field must have the Parquet type PROTOCOL maps its Delta type to",
            )
        required = list(required_fields(summary.schema))
        if required:
            yield Finding(
                "SCHEMA",
                "CKPT-SCHEMA-003",
                where,
                ", ".join(required[:_MAX_LINES])
                + (f" (+{len(required) - _MAX_LINES} more)" if len(required) > _MAX_LINES else ""),
                "every field should be optional (nullable), map keys excepted",
            )
    if summary.removes_with_stats_or_tags:
        yield Finding(
            "SCHEMA",
            "CKPT-SCHEMA-006" if summary.is_json else "CKPT-SCHEMA-005",
            where,
            f"{summary.removes_with_stats_or_tags} remove row(s) with stats or tags",
            "remove.stats and remove.tags must be null in Parquet files, and should be left out everywhere",
        )


def check_checkpoint_files(view: TableView) -> Iterator[Finding]:
    """Every file of every complete checkpoint, on its own."""
    for instance in view.checkpoints:
        for summary in view.top_level(instance):
            yield from file_findings(
                summary, log_path(summary.name), rule_if_unreadable=unreadable_rule(instance.kind)
            )


def check_checkpoint_content(view: TableView) -> Iterator[Finding]:
    """The actions of each readable complete checkpoint: one protocol and metaData, the V1/V2 structure, features."""
    for instance in view.checkpoints:
        if not view.unreadable(instance):
            yield from _content(view, instance)


def _count(view: TableView, instance: CheckpointInstance) -> Counter[str]:
    total: Counter[str] = Counter()
    for summary in view.top_level(instance):
        total.update(summary.actions)
    return total


def _content(view: TableView, instance: CheckpointInstance) -> Iterator[Finding]:
    where = log_path(instance.name)
    counts = _count(view, instance)
    for kind, missing, duplicate in (
        ("protocol", ErrorCode.MISSING_PROTOCOL, ErrorCode.DUPLICATE_PROTOCOL),
        ("metaData", ErrorCode.MISSING_METADATA, ErrorCode.DUPLICATE_METADATA),
    ):
        if counts[kind] != 1:
            yield Finding(
                "CONTENT",
                "CKPT-CONTENT-002",
                where,
                f"{counts[kind]} {kind} action(s)",
                f"a checkpoint must hold exactly one {kind} action",
                missing if counts[kind] == 0 else duplicate,
            )
    for kind in ("commitInfo", "cdc"):
        if counts[kind]:
            yield Finding(
                "CONTENT",
                "CKPT-CONTENT-010",
                where,
                f"{counts[kind]} {kind} action(s)",
                f"no {kind} in a checkpoint",
            )
    metadata, sidecars = counts["checkpointMetadata"], counts["sidecar"]
    file_actions = sum(counts[c] for c in FILE_ACTION_COLUMNS)
    if instance.kind is LogFileKind.CHECKPOINT_PART:
        if metadata or sidecars:
            yield Finding(
                "CONTENT",
                "CKPT-V1-001",
                where,
                f"{metadata} checkpointMetadata, {sidecars} sidecar",
                "a multi-part checkpoint follows the V1 spec: no checkpointMetadata or sidecar action",
            )
    elif instance.kind is LogFileKind.CHECKPOINT_UUID and metadata == 0:
        yield Finding(
            "CONTENT",
            "CKPT-V2-010",
            where,
            "no checkpointMetadata",
            "a UUID-named checkpoint must hold one checkpointMetadata action",
            ErrorCode.V2_CHECKPOINT_METADATA_MISSING,
        )
    elif instance.kind is LogFileKind.CHECKPOINT_CLASSIC and sidecars and metadata == 0:
        yield Finding(
            "CONTENT",
            "CKPT-V2-012",
            where,
            f"{sidecars} sidecar action(s), no checkpointMetadata",
            "sidecars make a checkpoint V2, which needs its checkpointMetadata action",
            ErrorCode.SIDECAR_WITHOUT_CHECKPOINT_METADATA,
        )
    if metadata > 1:
        yield Finding(
            "CONTENT",
            "CKPT-V2-011",
            where,
            f"{metadata} checkpointMetadata actions",
            "a V2 checkpoint holds exactly one checkpointMetadata action",
            ErrorCode.V2_CHECKPOINT_METADATA_DUPLICATE,
        )
    is_v2 = view.is_v2(instance)
    if is_v2 and sidecars and file_actions:
        yield Finding(
            "CONTENT",
            "CKPT-V2-004",
            where,
            f"{file_actions} inline file action(s) and {sidecars} sidecar(s)",
            "a top-level file with sidecar actions must hold no add or remove action",
            ErrorCode.V2_MIXED_FILE_ACTIONS,
        )
    for action in view.non_file_actions(instance):
        body = action.get("checkpointMetadata")
        if isinstance(body, dict) and body.get("version") != instance.version:
            yield Finding(
                "CONTENT",
                "CKPT-V2-002",
                where,
                f"checkpointMetadata.version {body.get('version')}",
                f"must equal the version in the file name ({instance.version})",
            )
    yield from _features(view, instance, where, is_v2)


def _features(view: TableView, instance: CheckpointInstance, where: str, is_v2: bool) -> Iterator[Finding]:
    protocol = view.protocol(instance)
    if protocol is None:
        return
    if is_v2 and not supports_v2(protocol):
        yield Finding(
            "CONTENT",
            "CKPT-FEAT-002",
            where,
            _features_text(protocol),
            "a V2 checkpoint needs the v2Checkpoint feature",
        )
    if instance.kind is LogFileKind.CHECKPOINT_PART and supports_v2(protocol):
        yield Finding(
            "CONTENT",
            "CKPT-FEAT-004",
            where,
            _features_text(protocol),
            "no multi-part checkpoint for a version whose protocol supports v2Checkpoint",
        )
    for key, threshold in (
        ("readerFeatures", ("minReaderVersion", 3)),
        ("writerFeatures", ("minWriterVersion", 7)),
    ):
        version_key, minimum = threshold
        version = protocol.get(version_key)
        listed = protocol.get(key) is not None
        wanted = isinstance(version, int) and version >= minimum
        if listed != wanted:
            yield Finding(
                "CONTENT",
                "CKPT-SCHEMA-007",
                where,
                f"{version_key} {version}, {key} {'present' if listed else 'null'}",
                f"{key} must be a list exactly when {version_key} is at least {minimum}",
            )


def _features_text(protocol: dict[str, object]) -> str:
    return f"readerFeatures {protocol.get('readerFeatures')}, writerFeatures {protocol.get('writerFeatures')}"


def check_hadoop_checksums(view: TableView) -> Iterator[Finding]:
    """Checkpoint files and sidecars whose Hadoop ``.<name>.crc`` no longer matches them: Hadoop-based
    readers fail every read of such a file, so they must treat it as unreadable (``CKPT-READ-026``)."""
    # the checksums are looked up in the whole listing: with a version, the sidecars in scope are only
    # those its checkpoints reference, and their hidden .crc files are not among them
    for directory, files, listed, path_of in (
        (view.log_dir, view.log_files, view.log_files, log_path),
        (view.log_dir / SIDECAR_DIR, view.sidecars_in_scope, view.sidecar_files, sidecar_path),
    ):
        names = {f.name for f in listed}
        for info in files:
            parsed = parse_log_file_name(info.name)
            is_target = (
                parsed.kind.is_checkpoint and view.in_scope(parsed.version)
                if directory == view.log_dir
                else not info.name.startswith(".")
            )
            if not is_target or hadoop_checksum_name(info.name) not in names:
                continue
            try:
                verify_hadoop_checksum(view.table.storage, directory / info.name)
            except CheckpointCorrupt as exc:
                yield Finding(
                    "SCHEMA",
                    "CKPT-READ-026",
                    path_of(info.name),
                    f"stale {hadoop_checksum_name(info.name)}",
                    f"{exc.message}: readers must treat the file as unreadable",
                    ErrorCode.CHECKPOINT_CORRUPT,
                )
