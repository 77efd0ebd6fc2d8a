"""Run every registered check over one table: :func:`validate_table`.

Spec: ``spec/checkpoints.md`` §21 Error codes (a table that cannot be validated at all is one
error: ``TABLE_NOT_FOUND``, ``STORAGE_ERROR``). Read-only: the checks list and read files through
the table's :class:`~reference_impl.storage.base.Storage`, on any store it serves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from reference_impl.errors import TableNotFound
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
) -> Report:
    """Check every checkpoint and ``_last_checkpoint`` of ``table``; nothing is written.

    ``session`` starts Spark for the state check (and for stores reached through Spark); without
    one, or with ``state=False``, the checks that need Spark are skipped and listed as skipped.

    Raises :class:`~reference_impl.errors.TableNotFound` (no ``_delta_log``, or no commit and no
    checkpoint in it, ``CKPT-READ-009``) and the store's ``StorageError``\\ s.
    """
    opened = open_table(table, storage_options, session=session)
    view = TableView.scan(opened, session if state else None)
    if not view.listing.commits and not view.listing.checkpoints and not view.listing.incomplete:
        raise TableNotFound(
            "_delta_log has no commit and no checkpoint", path=str(opened.log_dir), rule="CKPT-READ-009"
        )
    report = Report(table=str(opened.root))
    for check in checks:
        if check.needs_spark and view.session is None:
            report.skipped.append(check.name)
            continue
        report.checks.append(check.name)
        report.findings.extend(check.run(view))
    report.checked = {
        "commits": len(view.listing.commits),
        "checkpoints": len(view.listing.checkpoints),
        "sidecarFiles": len(view.sidecar_files),
        "lastCheckpoint": int(view.listing.last_checkpoint_file is not None),
        "statesCompared": view.states_compared,
    }
    return report
