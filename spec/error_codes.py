"""The stable error codes of the specification: one source for the reference, the adapters and the suite.

Spec: ``spec/checkpoints.md`` §21 Error codes. Implementations report failures as one
of these codes; the conformance suite compares codes, never messages. A code, once published, is
never renamed or reused. ``tests/spec/test_error_codes.py`` checks this enum against the table of
§21, and every code a fixture or an adapter uses against this enum.
"""

from __future__ import annotations

import enum


class ErrorCode(enum.StrEnum):
    """Every code of spec §21, in the order of its table."""

    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    VERSION_NOT_FOUND = "VERSION_NOT_FOUND"
    LOG_GAP = "LOG_GAP"
    LOG_CORRUPT = "LOG_CORRUPT"
    CHECKPOINT_CORRUPT = "CHECKPOINT_CORRUPT"
    MISSING_PROTOCOL = "MISSING_PROTOCOL"
    MISSING_METADATA = "MISSING_METADATA"
    DUPLICATE_PROTOCOL = "DUPLICATE_PROTOCOL"
    DUPLICATE_METADATA = "DUPLICATE_METADATA"
    V2_CHECKPOINT_METADATA_MISSING = "V2_CHECKPOINT_METADATA_MISSING"
    V2_CHECKPOINT_METADATA_DUPLICATE = "V2_CHECKPOINT_METADATA_DUPLICATE"
    V2_MIXED_FILE_ACTIONS = "V2_MIXED_FILE_ACTIONS"
    SIDECAR_MISSING = "SIDECAR_MISSING"
    SIDECAR_SIZE_MISMATCH = "SIDECAR_SIZE_MISMATCH"
    SIDECAR_PATH_INVALID = "SIDECAR_PATH_INVALID"
    SIDECAR_WITHOUT_CHECKPOINT_METADATA = "SIDECAR_WITHOUT_CHECKPOINT_METADATA"
    MULTIPART_ON_V2_TABLE = "MULTIPART_ON_V2_TABLE"
    V2_FEATURE_NOT_SUPPORTED = "V2_FEATURE_NOT_SUPPORTED"
    UNSUPPORTED_READER_FEATURE = "UNSUPPORTED_READER_FEATURE"
    UNSUPPORTED_WRITER_FEATURE = "UNSUPPORTED_WRITER_FEATURE"
    INVALID_OPTION = "INVALID_OPTION"
    SELF_CHECK_FAILED = "SELF_CHECK_FAILED"
    STORAGE_ERROR = "STORAGE_ERROR"
    CLEANUP_INVARIANT_VIOLATED = "CLEANUP_INVARIANT_VIOLATED"
    INTERNAL_ERROR = "INTERNAL_ERROR"
