"""The contract's words as types: every closed set of strings the specification names.

Spec: ``spec/checkpoints.md`` §4 File naming (file kinds), §5 Checkpoint specs, naming schemes
and table features, §8 Statistics, §2 Conformance terms (roles and levels). Each enum's values
are the strings the spec, the JSON documents and the command line use, so ``json.dumps`` writes
them unchanged and ``Enum(value)`` parses them.

| enum | values | where the strings appear |
|---|---|---|
| :class:`CheckpointSpec` | ``v1``, ``v2`` | writer options, writer profiles, ``snapshot`` output |
| :class:`CheckpointNaming` | ``classic``, ``multi-part``, ``uuid`` | writer options and profiles, ``checkpoint --json`` |
| :class:`TopLevelFormat` | ``json``, ``parquet`` | the format of a UUID-named top-level file (``--manifest`` on the command line) |
| :class:`CheckpointPolicy` | ``classic``, ``v2`` | the table property ``delta.checkpointPolicy`` |
| :class:`StatsMode` | ``json``, ``struct``, ``both`` | how a checkpoint stores file statistics |
| :class:`LogFileKind` | ``commit``, ``classic``, ``multi-part``, ``uuid``, ``crc``, ``compaction``, … | the one taxonomy of the names under ``_delta_log`` |
| :class:`Role` | ``writer``, ``reader``, ``cleaner`` | requirement roles, adapter roles |
| :class:`Level` | ``MUST``, ``SHOULD``, ``MAY`` | requirement levels |

Only values live here: each implementation parses names with its own grammar
(``reference_impl.log.naming``, ``conformance.decode.names``), tested against the same
``spec/vectors/file_names.json``.
"""

from __future__ import annotations

import enum


class CheckpointSpec(enum.StrEnum):
    """Which checkpoint specification a checkpoint follows (spec §5)."""

    V1 = "v1"
    V2 = "v2"


class CheckpointNaming(enum.StrEnum):
    """How a checkpoint's top-level file(s) are named (spec §4)."""

    CLASSIC = "classic"
    MULTI_PART = "multi-part"
    UUID = "uuid"


class TopLevelFormat(enum.StrEnum):
    """The format of a UUID-named top-level file (spec §11)."""

    JSON = "json"
    PARQUET = "parquet"


class CheckpointPolicy(enum.StrEnum):
    """The values of the table property ``delta.checkpointPolicy`` (spec §5.1)."""

    CLASSIC = "classic"
    V2 = "v2"


class StatsMode(enum.StrEnum):
    """How a checkpoint stores file statistics: ``stats`` (JSON), ``stats_parsed`` (struct), or both (spec §8)."""

    JSON = "json"
    STRUCT = "struct"
    BOTH = "both"

    @property
    def writes_json(self) -> bool:
        return self in (StatsMode.JSON, StatsMode.BOTH)

    @property
    def writes_struct(self) -> bool:
        return self in (StatsMode.STRUCT, StatsMode.BOTH)


class LogFileKind(enum.StrEnum):
    """What an entry under ``_delta_log`` is (spec §4). Parsers live with each implementation."""

    COMMIT = "commit"
    CHECKPOINT_CLASSIC = "classic"
    CHECKPOINT_PART = "multi-part"
    CHECKPOINT_UUID = "uuid"
    CRC = "crc"
    COMPACTION = "compaction"
    LAST_CHECKPOINT = "last_checkpoint"
    HIDDEN = "hidden"
    OTHER = "other"
    #: A file in ``_delta_log/_sidecars/`` (its name says nothing: sidecar names are arbitrary).
    SIDECAR = "sidecar"
    #: A directory directly in ``_delta_log`` (``_sidecars``, commit directories, …).
    DIRECTORY = "directory"
    #: The reference writer's staging directory ``.delta-ckpt-staging-<uuid>/`` (spec §19.4, ``CKPT-CLEAN-025``).
    STAGING = "staging"

    @property
    def is_checkpoint(self) -> bool:
        return self in (
            LogFileKind.CHECKPOINT_CLASSIC,
            LogFileKind.CHECKPOINT_PART,
            LogFileKind.CHECKPOINT_UUID,
        )


class Role(enum.StrEnum):
    """Who a requirement binds, and what an implementation under test does (spec §2.1, in its order)."""

    WRITER = "writer"
    READER = "reader"
    CLEANER = "cleaner"


class Level(enum.StrEnum):
    """A requirement's level (spec §2.2); a prohibition is ``MUST`` with "MUST NOT" in its text."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"
