"""What to write: :class:`CheckpointOptions` (the caller's request) and :class:`CheckpointPlan` (resolved).

Spec: ``spec/checkpoints.md`` §5 Checkpoint specs, naming schemes and table features
(``CKPT-FEAT-*``), §8 Statistics, §10 Multi-part checkpoints (``CKPT-PART-005``), §12 Sidecar files,
§7 Parquet layout (``CKPT-SCHEMA-008``: the codec).

| table | default checkpoint |
|---|---|
| ``delta.checkpointPolicy=v2`` and ``v2Checkpoint`` supported | V2, UUID-named, JSON top-level file, sidecars sized by :mod:`~reference_impl.write.sizing` (about 50,000 file actions each at most, from the log's size) |
| otherwise | V1, one classic file |

:func:`resolve_plan` applies the table's defaults and validates every option before anything is
written; errors name the option field (``parts``, ``actions_per_sidecar``, …) — the command line
maps its flags to those fields.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from reference_impl.errors import InvalidOption, MultipartOnV2Table, V2FeatureNotSupported
from reference_impl.hooks import NO_HOOKS, Hooks
from reference_impl.progress import Progress, silent
from reference_impl.write.sizing import MAX_SMALL_SIDECARS
from spec.vocabulary import CheckpointNaming, CheckpointPolicy, CheckpointSpec, StatsMode, TopLevelFormat

if TYPE_CHECKING:
    from reference_impl.read.snapshot import Snapshot

DEFAULT_COMPRESSION = "zstd"  # spec CKPT-SCHEMA-008 (delta-spark uses snappy: divergence D10)
COMPRESSION_CODECS: frozenset[str] = frozenset({"zstd", "snappy", "gzip", "lz4", "none", "uncompressed"})
#: The namings a writer can be asked for (a multi-part checkpoint is asked for with ``parts``).
REQUESTABLE_NAMINGS: tuple[CheckpointNaming, ...] = (CheckpointNaming.CLASSIC, CheckpointNaming.UUID)


@dataclass(frozen=True)
class CheckpointOptions:
    """What to write. ``None`` means "as the table says" (see the module docs).

    Enum fields also accept their string values (``spec="v2"``, as on the command line), typed so;
    :func:`resolve_plan` validates them and names the field of a value that is not one.
    """

    spec: CheckpointSpec | str | None = None
    naming: CheckpointNaming | str | None = None
    top_level_format: TopLevelFormat | str = TopLevelFormat.JSON
    actions_per_sidecar: int | None = None
    sidecars: bool = True
    #: V2 with sidecars: record the append layout and list the base checkpoint's sidecars no commit
    #: since touched again (:mod:`reference_impl.write.incremental`).
    incremental: bool = False
    #: With ``incremental``: compact when this many small base sidecars would be reused.
    max_small_sidecars: int = MAX_SMALL_SIDECARS
    parts: int | None = None
    stats: StatsMode | str | None = None
    compression: str | None = None
    now_ms: int | None = None
    write_last_checkpoint: bool = True
    #: Set every written file's modification time to this (ms since epoch): deterministic fixtures.
    file_time_ms: int | None = None
    #: The token of every sidecar and UUID-named file name (seeded only for deterministic fixtures), drawn on
    #: the driver. Each call must give a UUID no other writer of the table uses: a sidecar task that finds
    #: its name taken keeps that file as an earlier attempt's, and a writer that fails or loses a race
    #: deletes the sidecars it wrote by name (``CKPT-WRITE-006``; spec note under ``CKPT-WRITE-008``).
    uuid_factory: Callable[[], uuid.UUID] = uuid.uuid4
    hooks: Hooks = NO_HOOKS
    progress: Progress = field(default_factory=silent)


@dataclass(frozen=True)
class CheckpointPlan:
    """The options resolved against the table: every choice made, every value valid."""

    spec: CheckpointSpec
    naming: CheckpointNaming
    top_level_format: TopLevelFormat
    sidecars: bool
    actions_per_sidecar: int | None  # None: sized by actions, bytes and cores (reference_impl.write.sizing)
    incremental: bool
    parts: int
    stats_json: bool
    stats_struct: bool
    compression: str

    @property
    def uuid_named(self) -> bool:
        return self.naming is CheckpointNaming.UUID

    @property
    def multi_part(self) -> bool:
        return self.parts > 1


_E = TypeVar("_E", CheckpointSpec, CheckpointNaming, TopLevelFormat, StatsMode)


def _parse(enum_type: type[_E], value: str, field_name: str, allowed: tuple[_E, ...] | None = None) -> _E:
    """``value`` (an enum member or its string) as ``enum_type``; ``INVALID_OPTION`` naming the field."""
    choices = allowed or tuple(enum_type)
    try:
        parsed = enum_type(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed not in choices:
        raise InvalidOption(f"{field_name} must be one of {', '.join(choices)}; got {value!r}")
    return parsed


def resolve_plan(options: CheckpointOptions, snap: Snapshot) -> CheckpointPlan:
    """Defaults from the table, then every option validated (bad input fails before any write)."""
    table = str(snap.table)
    spec = None if options.spec is None else _parse(CheckpointSpec, options.spec, "spec")
    naming = (
        None
        if options.naming is None
        else _parse(CheckpointNaming, options.naming, "naming", REQUESTABLE_NAMINGS)
    )
    top_level_format = _parse(TopLevelFormat, options.top_level_format, "top_level_format")
    stats = None if options.stats is None else _parse(StatsMode, options.stats, "stats")
    policy = snap.properties.writer_checkpoint_policy(table)
    v2_supported = snap.supports_v2_checkpoints
    parts = options.parts
    if parts is not None:
        if parts < 2:
            raise InvalidOption(
                f"parts must be at least 2 (a multi-part checkpoint has p > 1 parts), got {parts}",
                path=table,
                rule="CKPT-PART-005",
            )
        if v2_supported:
            raise MultipartOnV2Table(
                f"version {snap.version} supports v2Checkpoint; multi-part checkpoints are forbidden there",
                path=table,
                rule="CKPT-FEAT-005",
            )
        if spec is CheckpointSpec.V2:
            raise InvalidOption(
                "parts makes a multi-part V1 checkpoint; it cannot be combined with spec v2",
                path=table,
                rule="CKPT-FEAT-001",
            )
    if spec is None:
        wants_v2 = policy is CheckpointPolicy.V2 and v2_supported and parts is None
        spec = CheckpointSpec.V2 if wants_v2 else CheckpointSpec.V1
    if spec is CheckpointSpec.V2 and not v2_supported:
        raise V2FeatureNotSupported(
            f"version {snap.version} does not support the v2Checkpoint table feature "
            f"(readerFeatures={snap.reader_features}, writerFeatures={snap.writer_features})",
            path=table,
            rule="CKPT-FEAT-003",
        )
    if naming is None:
        naming = CheckpointNaming.UUID if spec is CheckpointSpec.V2 else CheckpointNaming.CLASSIC
    if naming is CheckpointNaming.UUID and spec is CheckpointSpec.V1:
        raise InvalidOption(
            "UUID-named checkpoints follow the V2 spec; ask for spec v2 or naming classic",
            path=table,
            rule="CKPT-FEAT-001",
        )
    per_sidecar = options.actions_per_sidecar  # None: automatic; 0 is an invalid value, not "unset"
    if per_sidecar is not None and per_sidecar <= 0:
        raise InvalidOption(f"actions_per_sidecar must be positive, got {per_sidecar}", path=table)
    if options.max_small_sidecars <= 0:
        raise InvalidOption(
            f"max_small_sidecars must be positive, got {options.max_small_sidecars}", path=table
        )
    if options.incremental and (spec is not CheckpointSpec.V2 or not options.sidecars):
        raise InvalidOption(
            "incremental checkpoints reuse sidecars: they need spec v2 with sidecars",
            path=table,
            rule="CKPT-INC-001",
        )
    if stats is None:
        stats_json, stats_struct = snap.properties.write_stats_as_json, snap.properties.write_stats_as_struct
    else:
        stats_json, stats_struct = stats.writes_json, stats.writes_struct
    compression = (options.compression or snap.properties.parquet_compression or DEFAULT_COMPRESSION).lower()
    if compression not in COMPRESSION_CODECS:
        raise InvalidOption(f"unsupported Parquet compression codec {compression!r}")
    return CheckpointPlan(
        spec=spec,
        naming=naming,
        top_level_format=top_level_format,
        sidecars=options.sidecars,
        actions_per_sidecar=per_sidecar,
        incremental=options.incremental,
        parts=parts or 1,
        stats_json=stats_json,
        stats_struct=stats_struct,
        compression=compression,
    )
