"""Step 1 of the writer: the checks of a checkpoint request that need no Spark.

Spec: ``spec/checkpoints.md`` §17.2–17.3 (``CKPT-WRITE-006``: a store that cannot publish safely
gets no checkpoint; ``CKPT-WRITE-011``: nor does a read-only ``_delta_log``), ``CKPT-WRITE-001`` (the
version's commit is there) and ``CKPT-READ-009`` (a table has a ``_delta_log``).

No pyspark here: ``delta-ckpt checkpoint`` runs these checks first, so bad input is one error and no
JVM, and only then launches the driver JVM in the background while the writer's modules load
(issue #12).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from reference_impl.errors import CheckpointError, StorageError, TableNotFound, VersionNotFound
from reference_impl.log.naming import commit_name
from reference_impl.log.table import Table, open_table
from reference_impl.storage import Location, SessionSource


def with_rule(exc: CheckpointError, rule: str) -> CheckpointError:
    """``exc`` naming the rule a checkpoint request breaks, unless it names one already."""
    if exc.rule is None:
        exc.rule = rule
    return exc


def require_checkpointable_table(
    table: str | os.PathLike[str] | Location | Table,
    storage_options: Mapping[str, str] | None = None,
    *,
    session: SessionSource | None = None,
) -> Table:
    """The table; ``TABLE_NOT_FOUND`` (rule CKPT-READ-009) when it has no ``_delta_log``."""
    try:
        return open_table(table, storage_options, session=session)
    except TableNotFound as exc:
        raise with_rule(exc, "CKPT-READ-009") from None


@dataclass(frozen=True)
class CheckpointRequest:
    """A table and the version to checkpoint (``None``: the latest).

    ``checked`` is true only for a request :func:`checked_request` made, after :func:`check_preconditions`
    passed: the writer takes such a request without running the checks again (``delta-ckpt checkpoint``
    runs them before Spark starts). A request built any other way — by hand, or ``dataclasses.replace``
    of a checked one (``checked`` is no constructor argument, so it is not copied) — is checked by the
    writer like a path, so no caller can skip the checks.
    """

    table: Table
    version: int | None
    checked: bool = field(default=False, init=False, compare=False)


def checked_request(table: Table, version: int | None) -> CheckpointRequest:
    """:func:`check_preconditions`, then the request the writer takes (``write_checkpoint``)."""
    check_preconditions(table, version)
    request = CheckpointRequest(table, version)
    object.__setattr__(request, "checked", True)  # frozen: set here only, once the checks passed
    return request


def check_preconditions(table: Table, version: int | None) -> None:
    """The store can publish safely, the log is writable, the version's commit is there."""
    storage, log_dir = table.storage, table.log_dir
    if not storage.guarantees.atomic_create:
        raise StorageError(
            f"this store ({log_dir.scheme}://) cannot create a file only if it is absent, so no checkpoint can be "
            "published safely"
            + (" (write through s3:// instead: conditional PUTs)" if log_dir.scheme == "s3a" else ""),
            path=str(log_dir),
            rule="CKPT-WRITE-006",
        )
    if not storage.can_write(log_dir):
        raise StorageError(
            "the _delta_log directory is not writable, so no checkpoint can be published there",
            path=str(log_dir),
            rule="CKPT-WRITE-011",
        )
    if version is not None and storage.stat(log_dir / commit_name(version)) is None:
        raise VersionNotFound(
            f"the commit file of version {version} is not in the log; a checkpoint needs it",
            path=str(log_dir / commit_name(version)),
            rule="CKPT-WRITE-001",
        )
