"""Run every registered check over one table: :func:`validate_table`.

Spec: ``spec/checkpoints.md`` §21 Error codes (a table that cannot be validated at all is one
error: ``TABLE_NOT_FOUND``, ``STORAGE_ERROR``, and ``VERSION_NOT_FOUND`` for a ``version`` without a
checkpoint file). Read-only: the checks list and read files through
the table's :class:`~reference_impl.storage.base.Storage`, on any store it serves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from reference_impl.errors import TableNotFound, VersionNotFound
from reference_impl.log.naming import parse_log_file_name
from reference_impl.log.table import Table, open_table
from reference_impl.storage import Location, SessionSource
from reference_impl.validate.context import TableView
from reference_impl.validate.finding import Report
from reference_impl.validate.registry import CHECKS, Check


def validate_table(
    table: str | os.PathLike[str] | Location | Table,
    storage_options: Mapping[str, str] | None = None,
    *,
    session: SessionSource | None = None,
    checks: tuple[Check, ...] = CHECKS,
    state: bool = True,
    version: int | None = None,
) -> Report:
    """Check every checkpoint and ``_last_checkpoint`` of ``table``; nothing is written.

    ``session`` starts Spark for the state check (and for stores reached through Spark); without
    one, or with ``state=False``, the checks that need Spark are skipped and listed as skipped.
    With ``version`` only the checkpoint files of that version (and the sidecars they reference)
    and ``_last_checkpoint`` are checked; the whole-table checks are listed as skipped.

    Raises :class:`~reference_impl.errors.TableNotFound` (no ``_delta_log``, or no commit and no
    checkpoint in it, ``CKPT-READ-009``), :class:`~reference_impl.errors.VersionNotFound` (no
    checkpoint file of ``version``) and the store's ``StorageError``\\ s.
    """
    opened = open_table(table, storage_options, session=session)
    view = TableView.scan(opened, session if state else None, version)
    if not view.listing.commits and not view.listing.checkpoints and not view.listing.incomplete:
        raise TableNotFound(
            "_delta_log has no commit and no checkpoint", path=str(opened.log_dir), rule="CKPT-READ-009"
        )
    if version is not None and not any(
        parsed.kind.is_checkpoint and parsed.version == version
        for parsed in (parse_log_file_name(f.name) for f in view.log_files)
    ):
        raise VersionNotFound(f"no checkpoint file of version {version}", path=str(opened.log_dir))
    report = Report(table=str(opened.root), version=version)
    for check in checks:
        if check.whole_table and version is not None:
            report.skipped.append(check.name)
            continue
        if check.needs_spark and view.session is None:
            report.skipped.append(check.name)
            continue
        report.checks.append(check.name)
        report.findings.extend(check.run(view))
    report.checked = {
        "commits": len(view.listing.commits),
        "checkpoints": len(view.checkpoints),
        "sidecarFiles": view.sidecar_file_count,
        "lastCheckpoint": int(view.listing.last_checkpoint_file is not None),
        "statesCompared": view.states_compared,
    }
    return report
