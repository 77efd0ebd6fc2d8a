"""The one error hierarchy of the project, with stable error codes.

Spec: ``spec/checkpoints.md`` § Error codes. The conformance suite compares error *codes*, never
messages, so a code, once published, is never renamed or reused.

Every error carries:

* ``code`` — the stable code (class attribute);
* ``path`` — the file (or table) the error is about, when there is one;
* ``rule`` — the requirement ID (``CKPT-<AREA>-<NNN>``) the input violates, when there is one.

``str(error)`` is one line: ``CODE: message [file: …] [rule: …]``. The CLI prints exactly that and
exits non-zero.
"""

from __future__ import annotations

from typing import ClassVar


class CheckpointError(Exception):
    """Base class of every error this project raises on purpose."""

    code: ClassVar[str] = "INTERNAL_ERROR"

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

    code = "TABLE_NOT_FOUND"


class VersionNotFound(CheckpointError):
    """Raised when the requested version cannot be reconstructed from the files present."""

    code = "VERSION_NOT_FOUND"


class LogGap(CheckpointError):
    """Raised when the commits after the chosen checkpoint are not contiguous."""

    code = "LOG_GAP"


class LogCorrupt(CheckpointError):
    """Raised when a commit file cannot be parsed or breaks a log invariant."""

    code = "LOG_CORRUPT"


class CheckpointCorrupt(CheckpointError):
    """Raised when a checkpoint file cannot be read and no fallback exists."""

    code = "CHECKPOINT_CORRUPT"


class MissingProtocol(CheckpointError):
    """Raised when the reconstructed state has no ``protocol`` action."""

    code = "MISSING_PROTOCOL"


class MissingMetadata(CheckpointError):
    """Raised when the reconstructed state has no ``metaData`` action."""

    code = "MISSING_METADATA"


class DuplicateProtocol(CheckpointError):
    """Raised when a checkpoint holds more than one ``protocol`` action."""

    code = "DUPLICATE_PROTOCOL"


class DuplicateMetadata(CheckpointError):
    """Raised when a checkpoint holds more than one ``metaData`` action."""

    code = "DUPLICATE_METADATA"


class V2CheckpointMetadataMissing(CheckpointError):
    """Raised when a UUID-named top-level file has no ``checkpointMetadata`` action."""

    code = "V2_CHECKPOINT_METADATA_MISSING"


class V2CheckpointMetadataDuplicate(CheckpointError):
    """Raised when a V2 top-level file has more than one ``checkpointMetadata`` action."""

    code = "V2_CHECKPOINT_METADATA_DUPLICATE"


class V2MixedFileActions(CheckpointError):
    """Raised when a V2 top-level file has inline file actions *and* sidecars."""

    code = "V2_MIXED_FILE_ACTIONS"


class SidecarMissing(CheckpointError):
    """Raised when a referenced sidecar file does not exist."""

    code = "SIDECAR_MISSING"


class SidecarSizeMismatch(CheckpointError):
    """Raised when a sidecar's recorded ``sizeInBytes`` differs from its real length."""

    code = "SIDECAR_SIZE_MISMATCH"


class SidecarPathInvalid(CheckpointError):
    """Raised when a ``sidecar.path`` is not a bare file name."""

    code = "SIDECAR_PATH_INVALID"


class SidecarWithoutCheckpointMetadata(CheckpointError):
    """Raised when a classic-named checkpoint has sidecars but no ``checkpointMetadata``."""

    code = "SIDECAR_WITHOUT_CHECKPOINT_METADATA"


class MultipartOnV2Table(CheckpointError):
    """Raised when a multi-part checkpoint is requested on a table that supports ``v2Checkpoint``."""

    code = "MULTIPART_ON_V2_TABLE"


class V2FeatureNotSupported(CheckpointError):
    """Raised when a V2 checkpoint is requested on a table without the ``v2Checkpoint`` feature."""

    code = "V2_FEATURE_NOT_SUPPORTED"


class UnsupportedReaderFeature(CheckpointError):
    """Raised when the table needs a reader feature this implementation does not implement."""

    code = "UNSUPPORTED_READER_FEATURE"


class UnsupportedWriterFeature(CheckpointError):
    """Raised when a cleaner meets a writer feature it does not support; nothing is deleted."""

    code = "UNSUPPORTED_WRITER_FEATURE"


class InvalidOption(CheckpointError):
    """Raised when an option or argument value is illegal."""

    code = "INVALID_OPTION"


class SelfCheckFailed(CheckpointError):
    """Raised when a written checkpoint fails verification before publication."""

    code = "SELF_CHECK_FAILED"


class StorageError(CheckpointError):
    """Raised when the storage refuses an operation (unwritable location, rename failure, …)."""

    code = "STORAGE_ERROR"


class CleanupInvariantViolated(CheckpointError):
    """Raised when a cleanup plan would change what a reader sees; nothing is deleted."""

    code = "CLEANUP_INVARIANT_VIOLATED"


class DeltaJarsUnavailable(CheckpointError):
    """Raised when delta-spark's jars cannot be resolved (oracle only; never the reference path)."""

    code = "STORAGE_ERROR"


class InternalError(CheckpointError):
    """Raised on a broken internal invariant: this is a bug in delta-checkpoint-conformance."""

    code = "INTERNAL_ERROR"


class LastCheckpointCorrupt(CheckpointError):
    """Raised when ``_last_checkpoint`` is empty, not JSON, ill-typed or fails its checksum.

    Readers never surface it: a corrupt hint means "list the log instead".
    """

    code = "LAST_CHECKPOINT_CORRUPT"


ALL_ERRORS: tuple[type[CheckpointError], ...] = (
    TableNotFound,
    VersionNotFound,
    LogGap,
    LogCorrupt,
    CheckpointCorrupt,
    MissingProtocol,
    MissingMetadata,
    DuplicateProtocol,
    DuplicateMetadata,
    V2CheckpointMetadataMissing,
    V2CheckpointMetadataDuplicate,
    V2MixedFileActions,
    SidecarMissing,
    SidecarSizeMismatch,
    SidecarPathInvalid,
    SidecarWithoutCheckpointMetadata,
    MultipartOnV2Table,
    V2FeatureNotSupported,
    UnsupportedReaderFeature,
    UnsupportedWriterFeature,
    InvalidOption,
    SelfCheckFailed,
    StorageError,
    CleanupInvariantViolated,
    LastCheckpointCorrupt,
    InternalError,
)

ERROR_CODES: frozenset[str] = frozenset(e.code for e in ALL_ERRORS)
