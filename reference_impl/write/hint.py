"""``_last_checkpoint``: the document describing a just-written checkpoint, and writing it.

Spec: ``spec/checkpoints.md`` §14 The last-checkpoint file (``CKPT-LAST-*``; ``CKPT-LAST-011``: never
replace a hint that names a newer version), §19.3 Writing ``_last_checkpoint``; delta-spark's
thresholds for the optional parts (``checkpointSchema``, ``v2Checkpoint.nonFileActions`` and
``sidecarFiles``).
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import types as T

from reference_impl.log.last_checkpoint import (
    CHECKPOINT_SCHEMA_THRESHOLD,
    NON_FILE_ACTIONS_THRESHOLD,
    SIDECARS_THRESHOLD,
    LastCheckpoint,
    LastCheckpointV2,
    SidecarRef,
    read_last_checkpoint,
    trimmed,
)
from reference_impl.log.naming import LAST_CHECKPOINT
from reference_impl.progress import Progress
from reference_impl.storage import Location, Storage
from reference_impl.write.options import CheckpointPlan
from reference_impl.write.result import FileRole, WrittenFile
from spec.vocabulary import CheckpointSpec


def schema_json(schema: T.StructType) -> dict[str, Any]:
    value: dict[str, Any] = schema.jsonValue()
    return value


def schema_within_threshold(schema: T.StructType) -> dict[str, Any] | None:
    """The schema's JSON, or ``None`` when it is longer than delta-spark's 20,000-character threshold."""
    value = schema_json(schema)
    return value if len(json.dumps(value, separators=(",", ":"))) <= CHECKPOINT_SCHEMA_THRESHOLD else None


def last_checkpoint_document(
    plan: CheckpointPlan,
    version: int,
    files: list[WrittenFile],
    schema: T.StructType | None,
    non_file: list[dict[str, Any]],
    adds: int,
) -> LastCheckpoint:
    """The ``_last_checkpoint`` of the checkpoint made of ``files`` (``schema``: its top-level Parquet schema)."""
    top = [f for f in files if f.role is not FileRole.SIDECAR]
    sidecars = [f for f in files if f.role is FileRole.SIDECAR]
    uuid_v2 = plan.spec is CheckpointSpec.V2 and plan.uuid_named
    checkpoint_schema = None
    if schema is not None:
        checkpoint_schema = schema_json(schema) if uuid_v2 else schema_within_threshold(schema)
    v2 = None
    if uuid_v2:
        v2 = LastCheckpointV2(
            path=top[0].name,
            size_in_bytes=top[0].size_in_bytes,
            modification_time=top[0].modification_time,
            non_file_actions=trimmed(non_file, NON_FILE_ACTIONS_THRESHOLD),
            sidecar_files=trimmed(
                [SidecarRef(s.base_name, s.size_in_bytes, s.modification_time) for s in sidecars],
                SIDECARS_THRESHOLD,
            ),
        )
    return LastCheckpoint(
        version=version,
        size=sum(f.rows for f in files),
        parts=len(top) if plan.spec is CheckpointSpec.V1 and plan.multi_part else None,
        size_in_bytes=sum(f.size_in_bytes for f in files),
        num_of_add_files=adds,
        checkpoint_schema=checkpoint_schema,
        v2_checkpoint=v2,
    )


def write_hint(
    storage: Storage, log_dir: Location, hint: LastCheckpoint, progress: Progress
) -> tuple[dict[str, Any] | None, str | None]:
    """Write ``_last_checkpoint`` unless a valid hint already names a newer version (CKPT-LAST-011).

    Returns the written document, or ``None`` and why nothing was written.
    """
    existing, _ = read_last_checkpoint(storage, log_dir)
    if existing is not None and existing.version > hint.version:
        return None, f"_last_checkpoint names the newer version {existing.version}; left unchanged"
    document = hint.to_document()
    with progress.phase("write _last_checkpoint"):
        storage.write_replace(
            log_dir / LAST_CHECKPOINT, json.dumps(document, separators=(",", ":")).encode("utf-8")
        )
    return document, None
