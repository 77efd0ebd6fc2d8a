"""The reference's own grammar of the names in ``_delta_log``: parse every kind, format every kind.

Spec: ``spec/checkpoints.md`` §4 File naming (``CKPT-NAME-*``); PROTOCOL.md "Delta Log Entries",
"Checkpoints", "Checkpoint Naming Scheme", "Log Compaction Files", "Version Checksum File".

Two levels of strictness, one parser:

| level | what it accepts | who uses it |
|---|---|---|
| lenient (:func:`parse_log_file_name`) | what delta-spark's ``FileNames`` regexes accept: any number of version digits, any dot-free token in a UUID-named checkpoint | readers (``CKPT-READ``), listing |
| strict (``LogFileName.conforms``) | the spec's padding (20 digits for versions, 10 for part numbers), a real UUID, ``1 <= o <= p`` and ``p > 1`` for parts | writer self-checks and the writer conformance tests |

Names that start with ``.`` (temp files such as ``.<name>.<uuid>.tmp`` and Hadoop ``.<name>.crc``)
are :attr:`~spec.vocabulary.LogFileKind.HIDDEN` and never take part in reading; the one grammar of a
sidecar's temporary (:func:`sidecar_temp_name`, :func:`is_sidecar_temp_name`) serves the writer that
creates it and the cleaner that collects an old one (``CKPT-CLEAN-027``). Sidecar names are
arbitrary (delta#4807): nothing here parses a version out of one. The kinds are the spec's
:class:`~spec.vocabulary.LogFileKind`; the grammar is this implementation's own, tested against
``spec/vectors/file_names.json`` (the conformance suite has its own, tested against the same vectors).
"""

from __future__ import annotations

import re
import uuid as uuid_mod
from dataclasses import dataclass

from reference_impl.storage.local import temp_name
from spec.vocabulary import LogFileKind, TopLevelFormat

LAST_CHECKPOINT = "_last_checkpoint"
SIDECAR_DIR = "_sidecars"
#: A sidecar's name-set file is ``<sidecar name>`` + this (``CKPT-INC-007``).
NAME_SET_SUFFIX = ".names"
DELTA_LOG = "_delta_log"
#: The reference writer's hidden staging directory in ``_delta_log``: this prefix and a UUID (spec §19.4).
STAGING_PREFIX = ".delta-ckpt-staging-"

_UUID_CHARS = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_UUID_RE = re.compile(_UUID_CHARS)
# ``CKPT-CLEAN-027``: ``.``, a name not starting with ``.``, without ``/``, ending in ``.parquet``; ``.``, a UUID, ``.tmp``.
_SIDECAR_TEMP_RE = re.compile(rf"\.[^./][^/]*\.parquet\.{_UUID_CHARS}\.tmp")
# delta-spark FileNames: whole-name matches.
_COMMIT_RE = re.compile(r"^(\d+)\.json$")
_CRC_RE = re.compile(r"^(\d+)\.crc$")
_COMPACTION_RE = re.compile(r"^(\d+)\.(\d+)\.compacted\.json$")
_CLASSIC_RE = re.compile(r"^(\d+)\.checkpoint\.parquet$")
_PART_RE = re.compile(r"^(\d+)\.checkpoint\.(\d+)\.(\d+)\.parquet$")
_UUID_CKPT_RE = re.compile(r"^(\d+)\.checkpoint\.([^.]+)\.(json|parquet)$")


@dataclass(frozen=True)
class LogFileName:
    """A parsed ``_delta_log`` entry name.

    ``version`` is the (start) version; ``end_version`` only for compactions; ``part``/``num_parts``
    only for multi-part checkpoints; ``token``/``fmt`` only for UUID-named checkpoints.
    ``conforms`` says whether the name follows the spec's strict form.
    """

    name: str
    kind: LogFileKind
    version: int | None = None
    end_version: int | None = None
    part: int | None = None
    num_parts: int | None = None
    token: str | None = None
    fmt: TopLevelFormat | None = None
    conforms: bool = True


def _padded(digits: str, width: int) -> bool:
    return len(digits) == width


def parse_log_file_name(name: str) -> LogFileName:
    """Classify a bare file name found in ``_delta_log`` (lenient, as delta-spark)."""
    if name == LAST_CHECKPOINT:
        return LogFileName(name, LogFileKind.LAST_CHECKPOINT)
    if name.startswith("."):
        return LogFileName(name, LogFileKind.HIDDEN, conforms=False)
    if m := _COMMIT_RE.match(name):
        return LogFileName(name, LogFileKind.COMMIT, version=int(m[1]), conforms=_padded(m[1], 20))
    if m := _CLASSIC_RE.match(name):
        return LogFileName(
            name,
            LogFileKind.CHECKPOINT_CLASSIC,
            version=int(m[1]),
            fmt=TopLevelFormat.PARQUET,
            conforms=_padded(m[1], 20),
        )
    if m := _PART_RE.match(name):
        part, num = int(m[2]), int(m[3])
        ok = _padded(m[1], 20) and _padded(m[2], 10) and _padded(m[3], 10) and 1 <= part <= num and num > 1
        return LogFileName(
            name,
            LogFileKind.CHECKPOINT_PART,
            version=int(m[1]),
            part=part,
            num_parts=num,
            fmt=TopLevelFormat.PARQUET,
            conforms=ok,
        )
    if m := _UUID_CKPT_RE.match(name):
        ok = _padded(m[1], 20) and _UUID_RE.fullmatch(m[2]) is not None
        return LogFileName(
            name,
            LogFileKind.CHECKPOINT_UUID,
            version=int(m[1]),
            token=m[2],
            fmt=TopLevelFormat(m[3]),
            conforms=ok,
        )
    if m := _CRC_RE.match(name):
        return LogFileName(name, LogFileKind.CRC, version=int(m[1]), conforms=_padded(m[1], 20))
    if m := _COMPACTION_RE.match(name):
        start, end = int(m[1]), int(m[2])
        ok = _padded(m[1], 20) and _padded(m[2], 20) and end > start
        return LogFileName(name, LogFileKind.COMPACTION, version=start, end_version=end, conforms=ok)
    return LogFileName(name, LogFileKind.OTHER, conforms=False)


def commit_name(version: int) -> str:
    return f"{version:020d}.json"


def crc_name(version: int) -> str:
    return f"{version:020d}.crc"


def classic_checkpoint_name(version: int) -> str:
    return f"{version:020d}.checkpoint.parquet"


def part_checkpoint_name(version: int, part: int, num_parts: int) -> str:
    """Name of part ``part`` (1-based) of a ``num_parts``-part checkpoint."""
    return f"{version:020d}.checkpoint.{part:010d}.{num_parts:010d}.parquet"


def uuid_checkpoint_name(version: int, token: uuid_mod.UUID, fmt: TopLevelFormat) -> str:
    return f"{version:020d}.checkpoint.{token}.{TopLevelFormat(fmt)}"


def hadoop_checksum_name(name: str) -> str:
    """The hidden checksum file Hadoop's local file system keeps next to ``name``."""
    return f".{name}.crc"


def checksum_owner(hidden: str) -> str | None:
    """The file a Hadoop checksum ``.<name>.crc`` belongs to (``None``: not such a checksum)."""
    if hidden.startswith(".") and hidden.endswith(".crc") and len(hidden) > 5:
        return hidden[1:-4]
    return None


def name_set_name(sidecar: str) -> str:
    """The name-set file of the sidecar ``sidecar`` (``CKPT-INC-007``, :mod:`reference_impl.write.name_sets`)."""
    return f"{sidecar}{NAME_SET_SUFFIX}"


def name_set_owner(name: str) -> str | None:
    """The sidecar a name-set file ``<sidecar>.names`` belongs to (``None``: not such a name)."""
    if name.endswith(NAME_SET_SUFFIX) and len(name) > len(NAME_SET_SUFFIX) and not name.startswith("."):
        return name[: -len(NAME_SET_SUFFIX)]
    return None


def staging_dir_name(token: uuid_mod.UUID) -> str:
    """The reference writer's staging directory in ``_delta_log`` (spec §19.4, ``CKPT-CLEAN-025``)."""
    return f"{STAGING_PREFIX}{token}"


def is_staging_dir_name(name: str) -> bool:
    """Whether ``name`` is exactly :func:`staging_dir_name` of a canonical UUID (nothing else is collected)."""
    return name.startswith(STAGING_PREFIX) and _UUID_RE.fullmatch(name[len(STAGING_PREFIX) :]) is not None


def sidecar_temp_name(name: str, token: uuid_mod.UUID) -> str:
    """The hidden name a task writes sidecar ``name`` under before it links or renames it to ``name``:
    ``.<name>.<uuid>.tmp``, delta-spark's temporary (``Checkpoints.scala`` L1098-1106).

    It is the stores' one temporary name (:func:`reference_impl.storage.local.temp_name`, which the
    storages and the task sinks write under), checked: a cleaner collects an old one
    (``CKPT-CLEAN-027``), so ``name`` must be a name it recognises there: not hidden, without ``/``,
    ending in ``.parquet``.
    """
    temp = temp_name(name, token)
    if not is_sidecar_temp_name(temp):
        raise ValueError(f"not a sidecar name a cleaner recognises in a temporary: {name!r}")
    return temp


def is_sidecar_temp_name(name: str) -> bool:
    """Whether ``name`` is exactly :func:`sidecar_temp_name` of a sidecar name and a canonical
    (lowercase) UUID (``CKPT-CLEAN-027``); no Hadoop ``.crc`` companion and no other hidden name is."""
    return _SIDECAR_TEMP_RE.fullmatch(name) is not None


def sidecar_name(version: int, part: int, num_parts: int, token: uuid_mod.UUID) -> str:
    """delta-spark's sidecar name: ``v.checkpoint.part.numParts.uuid.parquet`` (part is 1-based)."""
    return f"{version:020d}.checkpoint.{part:010d}.{num_parts:010d}.{token}.parquet"


def compaction_name(start: int, end: int) -> str:
    return f"{start:020d}.{end:020d}.compacted.json"


def version_prefix(version: int) -> str:
    """The listing prefix of every file at ``version`` (zero padding makes it sort by version)."""
    return f"{version:020d}."
