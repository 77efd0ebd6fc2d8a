"""Every check of ``delta-ckpt validate``, registered in one table.

Spec: ``spec/checkpoints.md`` (each check module names its sections). A check is a function of a
:class:`~reference_impl.validate.context.TableView` that yields
:class:`~reference_impl.validate.finding.Finding`\\ s; it never writes, and never raises for a
problem of the table (a problem is a finding). Adding a check is one row here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reference_impl.validate.context import TableView
from reference_impl.validate.finding import Area, Finding
from reference_impl.validate.hint import check_last_checkpoint
from reference_impl.validate.multipart import check_multipart_sets
from reference_impl.validate.names import check_names


@dataclass(frozen=True)
class Check:
    name: str
    area: Area
    run: Callable[[TableView], Iterable[Finding]]


#: The checks, in report order.
CHECKS: tuple[Check, ...] = (
    Check("file names", "NAME", check_names),
    Check("_last_checkpoint", "LAST", check_last_checkpoint),
    Check("multi-part sets", "MULTI", check_multipart_sets),
)
