"""Every check of ``delta-ckpt validate``, registered in one table.

Spec: ``spec/checkpoints.md`` (each check module names its sections). A check is a function of a
:class:`~reference_impl.validate.context.TableView` that yields
:class:`~reference_impl.validate.finding.Finding`\\ s; it never writes, and never raises for a
problem of the table (a problem is a finding). Adding a check is one row here. A ``whole_table``
check looks at the log as a whole (the commit run, orphans): ``--version N`` leaves it out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reference_impl.validate.content import (
    check_checkpoint_content,
    check_checkpoint_files,
    check_hadoop_checksums,
)
from reference_impl.validate.context import TableView
from reference_impl.validate.finding import Area, Finding
from reference_impl.validate.hint import check_last_checkpoint
from reference_impl.validate.log import check_commit_run, check_reader_features
from reference_impl.validate.multipart import check_multipart_sets, check_part_schemas
from reference_impl.validate.names import check_names
from reference_impl.validate.sidecars import check_orphan_sidecars, check_sidecar_references
from reference_impl.validate.state import check_state


@dataclass(frozen=True)
class Check:
    name: str
    area: Area
    run: Callable[[TableView], Iterable[Finding]]
    needs_spark: bool = False
    whole_table: bool = False


#: The checks, in report order.
CHECKS: tuple[Check, ...] = (
    Check("file names", "NAME", check_names),
    Check("_last_checkpoint", "LAST", check_last_checkpoint),
    Check("checkpoint files", "SCHEMA", check_checkpoint_files),
    Check("Hadoop checksums", "SCHEMA", check_hadoop_checksums),
    Check("checkpoint content", "CONTENT", check_checkpoint_content),
    Check("sidecar references", "SIDE", check_sidecar_references),
    Check("orphan sidecars", "SIDE", check_orphan_sidecars, whole_table=True),
    Check("multi-part sets", "MULTI", check_multipart_sets),
    Check("multi-part schemas", "MULTI", check_part_schemas),
    Check("commit run", "LOG", check_commit_run, whole_table=True),
    Check("reader features", "LOG", check_reader_features, whole_table=True),
    Check("checkpoint state equals commit state", "STATE", check_state, needs_spark=True),
)
