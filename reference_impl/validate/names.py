"""NAME checks: every checkpoint file in ``_delta_log`` has the name writers must give it, and is whole.

Spec: ``spec/checkpoints.md`` §4 File naming (``CKPT-NAME-001``..``003``) and §17.3 Atomicity
(``CKPT-WRITE-006``: a top-level file is never seen partially written).

A name a lenient reader still recognises (9 version digits, a token that is no UUID) breaks the
writers' rule; a 0-byte checkpoint file is one that was published before it was written (readers
ignore it, ``CKPT-READ-003``, but the table still holds a broken file).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from reference_impl.log.naming import parse_log_file_name
from reference_impl.validate.context import TableView, log_path
from reference_impl.validate.finding import Finding
from spec.vocabulary import LogFileKind


def check_names(view: TableView) -> Iterator[Finding]:
    """Strict names (padding, UUID token, part numbers) and no 0-byte checkpoint files."""
    for info in view.log_files:
        parsed = parse_log_file_name(info.name)
        if not parsed.kind.is_checkpoint or not view.in_scope(parsed.version):
            continue
        where = log_path(info.name)
        if info.size == 0:
            yield Finding(
                "NAME",
                "CKPT-WRITE-006",
                where,
                "0 bytes",
                "an empty checkpoint file: it was published before it was written (readers ignore it)",
            )
        if parsed.conforms:
            continue
        if parsed.kind is LogFileKind.CHECKPOINT_PART and not (
            parsed.num_parts is not None and parsed.part is not None and 1 <= parsed.part <= parsed.num_parts
            and parsed.num_parts > 1
        ):  # fmt: skip
            yield Finding(
                "NAME",
                "CKPT-NAME-002",
                where,
                f"part {parsed.part} of {parsed.num_parts}",
                "a part number must be 1..p with a part count p of at least 2",
            )
        elif (
            parsed.kind is LogFileKind.CHECKPOINT_UUID
            and parsed.token is not None
            and not _is_uuid(parsed.token)
        ):
            yield Finding(
                "NAME",
                "CKPT-NAME-003",
                where,
                parsed.token,
                "the token of a UUID-named checkpoint must be a canonical lowercase RFC 4122 UUID",
            )
        else:
            yield Finding(
                "NAME",
                "CKPT-NAME-001",
                where,
                info.name,
                "versions must have exactly 20 digits and part numbers exactly 10",
            )


def _is_uuid(token: str) -> bool:
    try:
        return str(uuid.UUID(token)) == token
    except ValueError:
        return False
