"""The one error hierarchy of the reference implementation, with the spec's stable error codes.

Spec: ``spec/checkpoints.md`` §21 Error codes. Each class carries one
:class:`~spec.error_codes.ErrorCode`; the conformance suite compares codes, never messages.

Every error carries:

* ``code`` — the stable code (class attribute);
* ``path`` — the file (or table) the error is about, when there is one;
* ``rule`` — the requirement ID (``CKPT-<AREA>-<NNN>``) the input violates, when there is one.

``str(error)`` is one line: ``CODE: message [file: …] [rule: …]``. The CLI prints exactly that and
exits non-zero.
"""

from __future__ import annotations

import enum
from typing import ClassVar

from spec.error_codes import ErrorCode


class PrivateCode(enum.StrEnum):
    """Codes of errors this implementation raises and handles itself: never reported to a caller."""

    #: A corrupt ``_last_checkpoint`` means "list the log instead" (spec CKPT-READ-010).
    LAST_CHECKPOINT_CORRUPT = "LAST_CHECKPOINT_CORRUPT"


class CheckpointError(Exception):
    """Base class of every error the reference implementation raises on purpose."""

    code: ClassVar[ErrorCode | PrivateCode] = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, *, path: str | None = None, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.rule = rule

    def __str__(self) -> str:
        parts = [f"{self.code}: {self.message}"]
        if self.path:
            parts.append(f"[file: {self.path}]")
        if self.rule:
            parts.append(f"[rule: {self.rule}]")
        return " ".join(parts)

    def to_json(self) -> dict[str, str | None]:
        """The machine-readable form used by ``--json`` outputs and the subprocess protocol."""
        return {"code": self.code, "message": self.message, "path": self.path, "rule": self.rule}


class TableNotFound(CheckpointError):
    """Raised when the location has no ``_delta_log`` directory or no commit at all."""

    code = ErrorCode.TABLE_NOT_FOUND


class VersionNotFound(CheckpointError):
    """Raised when the requested version cannot be reconstructed from the files present."""

    code = ErrorCode.VERSION_NOT_FOUND


class LogGap(CheckpointError):
    """Raised when the commits after the chosen checkpoint are not contiguous."""

    code = ErrorCode.LOG_GAP


class LogCorrupt(CheckpointError):
    """Raised when a commit file cannot be parsed or breaks a log invariant."""

    code = ErrorCode.LOG_CORRUPT


class CheckpointCorrupt(CheckpointError):
    """Raised when a checkpoint file cannot be read and no fallback exists, or a writer finds the classic
    name it publishes taken by an empty or unreadable file (:mod:`~reference_impl.write.publish`)."""

    code = ErrorCode.CHECKPOINT_CORRUPT


class MissingProtocol(CheckpointError):
    """Raised when the reconstructed state has no ``protocol`` action."""

    code = ErrorCode.MISSING_PROTOCOL


class MissingMetadata(CheckpointError):
    """Raised when the reconstructed state has no ``metaData`` action."""

    code = ErrorCode.MISSING_METADATA


class DuplicateProtocol(CheckpointError):
    """Raised when a checkpoint holds more than one ``protocol`` action."""

    code = ErrorCode.DUPLICATE_PROTOCOL


class DuplicateMetadata(CheckpointError):
    """Raised when a checkpoint holds more than one ``metaData`` action."""

    code = ErrorCode.DUPLICATE_METADATA


class V2CheckpointMetadataMissing(CheckpointError):
    """Raised when a UUID-named top-level file has no ``checkpointMetadata`` action."""

    code = ErrorCode.V2_CHECKPOINT_METADATA_MISSING


class V2CheckpointMetadataDuplicate(CheckpointError):
    """Raised when a V2 top-level file has more than one ``checkpointMetadata`` action."""

    code = ErrorCode.V2_CHECKPOINT_METADATA_DUPLICATE


class V2MixedFileActions(CheckpointError):
    """Raised when a V2 top-level file has inline file actions *and* sidecars."""

    code = ErrorCode.V2_MIXED_FILE_ACTIONS


class SidecarMissing(CheckpointError):
    """Raised when a referenced sidecar file does not exist."""

    code = ErrorCode.SIDECAR_MISSING


class SidecarSizeMismatch(CheckpointError):
    """Raised when a sidecar's recorded ``sizeInBytes`` differs from its real length."""

    code = ErrorCode.SIDECAR_SIZE_MISMATCH


class SidecarPathInvalid(CheckpointError):
    """Raised when a ``sidecar.path`` is not a bare file name."""

    code = ErrorCode.SIDECAR_PATH_INVALID


class SidecarWithoutCheckpointMetadata(CheckpointError):
    """Raised when a classic-named checkpoint has sidecars but no ``checkpointMetadata``."""

    code = ErrorCode.SIDECAR_WITHOUT_CHECKPOINT_METADATA


class MultipartOnV2Table(CheckpointError):
    """Raised when a multi-part checkpoint is requested on a table that supports ``v2Checkpoint``."""

    code = ErrorCode.MULTIPART_ON_V2_TABLE


class V2FeatureNotSupported(CheckpointError):
    """Raised when a V2 checkpoint is requested on a table without the ``v2Checkpoint`` feature."""

    code = ErrorCode.V2_FEATURE_NOT_SUPPORTED


class UnsupportedReaderFeature(CheckpointError):
    """Raised when the table needs a reader feature this implementation does not implement."""

    code = ErrorCode.UNSUPPORTED_READER_FEATURE


class UnsupportedWriterFeature(CheckpointError):
    """Raised when a cleaner meets a writer feature it does not support; nothing is deleted."""

    code = ErrorCode.UNSUPPORTED_WRITER_FEATURE


class InvalidOption(CheckpointError):
    """Raised when an option or argument value is illegal."""

    code = ErrorCode.INVALID_OPTION


class SelfCheckFailed(CheckpointError):
    """Raised when a written checkpoint fails verification before publication."""

    code = ErrorCode.SELF_CHECK_FAILED


class ReusedSidecarGone(SelfCheckFailed):
    """Raised when a sidecar an incremental checkpoint lists again is missing or has another size
    (``CKPT-INC-005``); the writer handles it by writing the checkpoint in full."""


class CheckpointConflict(CheckpointError):
    """Raised when another writer published the classic-named file or part this writer was about to
    publish after this writer listed the log (a lost create-if-absent, ``CKPT-WRITE-006``); the other
    writer's file is kept and no file of this writer's is referenced but the multi-part parts it
    published before it lost, which hold the same actions (``CKPT-WRITE-009``)."""

    code = ErrorCode.CHECKPOINT_CONFLICT


class StorageError(CheckpointError):
    """Raised when the storage refuses an operation (unwritable location, rename failure, …)."""

    code = ErrorCode.STORAGE_ERROR


class CleanupInvariantViolated(CheckpointError):
    """Raised when a cleanup plan would change what a reader sees; nothing is deleted."""

    code = ErrorCode.CLEANUP_INVARIANT_VIOLATED


class InternalError(CheckpointError):
    """Raised on a broken internal invariant: this is a bug in delta-checkpoint-conformance."""

    code = ErrorCode.INTERNAL_ERROR


class LastCheckpointCorrupt(CheckpointError):
    """Raised when ``_last_checkpoint`` is empty, not JSON, ill-typed or fails its checksum.

    Readers never surface it: a corrupt hint means "list the log instead".
    """

    code = PrivateCode.LAST_CHECKPOINT_CORRUPT
