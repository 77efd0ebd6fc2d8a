"""Translate other implementations' error messages into the spec's error codes.

delta-spark and deltalake raise exceptions with messages, not our codes; the adapters map them here
so the suite can compare codes. A message no pattern matches becomes ``UNMAPPED`` — the test then
fails and shows the message, which is how a new pattern gets added (or a real bug found).
"""

from __future__ import annotations

import re

UNMAPPED = "UNMAPPED"

#: (pattern, code), first match wins. Patterns are matched case-insensitively anywhere in the message.
_PATTERNS: tuple[tuple[str, str], ...] = (
    # V2 structure
    (r"More than 1 CheckpointMetadata", "V2_CHECKPOINT_METADATA_DUPLICATE"),
    (
        r"has no CheckpointMetadata|CheckpointMetadata action.*(missing|not found)",
        "V2_CHECKPOINT_METADATA_MISSING",
    ),
    (
        r"sidecar files present in checkpoint even when checkpoint metadata is missing",
        "SIDECAR_WITHOUT_CHECKPOINT_METADATA",
    ),
    (r"_sidecars/_sidecars|sidecar.*(path|name).*invalid", "SIDECAR_PATH_INVALID"),
    (
        r"_sidecars/.*(does not exist|not found|No such file)|sidecar.*(does not exist|not found|missing)",
        "SIDECAR_MISSING",
    ),
    # missing actions (delta-spark: DELTA_STATE_RECOVER_ERROR names the action)
    (
        r"DELTA_STATE_RECOVER_ERROR.*The metadata|DELTA_ACTION_NOT_FOUND.*(metadata|metaData)|"
        r"No (table )?metadata found|missing metadata",
        "MISSING_METADATA",
    ),
    (
        r"DELTA_STATE_RECOVER_ERROR.*The protocol|DELTA_ACTION_NOT_FOUND.*protocol|No protocol found|"
        r"missing protocol",
        "MISSING_PROTOCOL",
    ),
    # versions and gaps
    (
        r"DELTA_TRUNCATED_TRANSACTION_LOG|Gap between checkpoint version|not contiguous|"
        r"DELTA_VERSIONS_NOT_CONTIGUOUS|gap in (the )?(delta )?log",
        "LOG_GAP",
    ),
    (
        r"DELTA_VERSION_NOT_FOUND|DELTA_LOG_FILE_NOT_FOUND|Cannot time travel|VersionNotFound|"
        r"Invalid table version|No files in log segment|earliest available version|"
        r"LogSegment end version \d+ not the same as the specified end version|"
        r"Trying to load a non-existent version",
        "VERSION_NOT_FOUND",
    ),
    # table properties (delta-spark's CheckpointPolicy.fromName: "Invalid policy <value>")
    (r"Invalid policy ", "INVALID_OPTION"),
    (
        r"DELTA_TABLE_NOT_FOUND|DELTA_MISSING_DELTA_TABLE|is not a Delta table|TableNotFound|no log files",
        "TABLE_NOT_FOUND",
    ),
    # unreadable files
    (r"DELTA_MISSING_PART_FILES|Couldn't find all part files", "CHECKPOINT_CORRUPT"),
    (
        r"FAILED_READ_FILE|metadata requires \d+ bytes|not a Parquet file|is not a parquet file|Corrupt footer|"
        r"EOFException|Parquet error|Required field .* is missing",
        "CHECKPOINT_CORRUPT",
    ),
    (
        r"reader features|readerFeatures|Unsupported.*feature|DELTA_UNSUPPORTED_FEATURES_FOR_READ",
        "UNSUPPORTED_READER_FEATURE",
    ),
)
_COMPILED = tuple((re.compile(p, re.IGNORECASE | re.DOTALL), code) for p, code in _PATTERNS)


def classify(message: str) -> str:
    """The spec error code a foreign error message means, or :data:`UNMAPPED`."""
    for pattern, code in _COMPILED:
        if pattern.search(message):
            return code
    return UNMAPPED
