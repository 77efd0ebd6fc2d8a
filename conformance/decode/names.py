"""The suite's own reading of the names under ``_delta_log``, written from the spec's table, not the reference's code.

Spec: ``spec/checkpoints.md`` §4 File naming (``CKPT-NAME-*``). :func:`parse_name` matches the
*lenient* pattern of each kind (what readers accept, §4.2) and says whether the name also
matches the *strict* pattern writers must produce (§4.1; for multi-part names also ``1 ≤ o ≤ p``
and ``p ≥ 2``, ``CKPT-NAME-002``). Names that start with ``.`` are hidden; sidecar names are never
parsed. Kinds are the spec's :class:`~spec.vocabulary.LogFileKind`. The suite judges other
implementations with this grammar, so it does not reuse the reference implementation's
(``reference_impl.log.naming``); both are tested against ``spec/vectors/file_names.json``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spec.vocabulary import LogFileKind, TopLevelFormat

DELTA_LOG = "_delta_log"
SIDECAR_DIR = "_sidecars"
LAST_CHECKPOINT = "_last_checkpoint"

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
#: (kind, lenient pattern, strict pattern) in the order of the spec's table; the UUID-named
#: pattern comes after the classic and multi-part ones (their names also match it leniently).
_PATTERNS: tuple[tuple[LogFileKind, re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (kind, re.compile(lenient), re.compile(strict))
    for kind, lenient, strict in (
        (LogFileKind.COMMIT, r"^(?P<v>[0-9]+)\.json$", r"^[0-9]{20}\.json$"),
        (
            LogFileKind.CHECKPOINT_CLASSIC,
            r"^(?P<v>[0-9]+)\.checkpoint\.parquet$",
            r"^[0-9]{20}\.checkpoint\.parquet$",
        ),
        (
            LogFileKind.CHECKPOINT_PART,
            r"^(?P<v>[0-9]+)\.checkpoint\.(?P<o>[0-9]+)\.(?P<p>[0-9]+)\.parquet$",
            r"^[0-9]{20}\.checkpoint\.[0-9]{10}\.[0-9]{10}\.parquet$",
        ),
        (
            LogFileKind.CHECKPOINT_UUID,
            r"^(?P<v>[0-9]+)\.checkpoint\.(?P<u>[^.]+)\.(?P<f>json|parquet)$",
            rf"^[0-9]{{20}}\.checkpoint\.{_UUID}\.(json|parquet)$",
        ),
        (LogFileKind.CRC, r"^(?P<v>[0-9]+)\.crc$", r"^[0-9]{20}\.crc$"),
        (
            LogFileKind.COMPACTION,
            r"^(?P<v>[0-9]+)\.(?P<y>[0-9]+)\.compacted\.json$",
            r"^[0-9]{20}\.[0-9]{20}\.compacted\.json$",
        ),
    )
)


@dataclass(frozen=True)
class LogName:
    """A name under ``_delta_log`` as the spec reads it."""

    name: str
    kind: LogFileKind
    version: int | None = None
    end_version: int | None = None  # compactions
    part: int | None = None  # multi-part checkpoints
    parts: int | None = None
    token: str | None = None  # UUID-named checkpoints
    format: TopLevelFormat | None = None  # UUID-named checkpoints
    strict: bool = False  # the name writers must produce (§4.1)


def parse_name(name: str) -> LogName:
    """The kind and numbers of a bare file name found directly in ``_delta_log``."""
    if name == LAST_CHECKPOINT:
        return LogName(name, LogFileKind.LAST_CHECKPOINT, strict=True)
    if name.startswith("."):
        return LogName(name, LogFileKind.HIDDEN)
    for kind, lenient, strict in _PATTERNS:
        match = lenient.match(name)
        if match is None:
            continue
        groups = match.groupdict()
        part = int(groups["o"]) if groups.get("o") else None
        parts = int(groups["p"]) if groups.get("p") else None
        ok = strict.match(name) is not None
        if part is not None and parts is not None:
            ok = ok and 1 <= part <= parts and parts >= 2
        return LogName(
            name,
            kind,
            version=int(groups["v"]),
            end_version=int(groups["y"]) if groups.get("y") else None,
            part=part,
            parts=parts,
            token=groups.get("u"),
            format=TopLevelFormat(groups["f"]) if groups.get("f") else None,
            strict=ok,
        )
    return LogName(name, LogFileKind.OTHER)


def checksum_owner(hidden: str) -> str | None:
    """The file a Hadoop checksum ``.<name>.crc`` belongs to (``None``: not such a checksum)."""
    if hidden.startswith(".") and hidden.endswith(".crc") and len(hidden) > 5:
        return hidden[1:-4]
    return None


def hadoop_checksum_name(name: str) -> str:
    """The hidden checksum file Hadoop's local file system keeps next to ``name``."""
    return f".{name}.crc"


def commit_name(version: int) -> str:
    """The strict name of the commit of ``version``."""
    return f"{version:020d}.json"
