"""MULTI checks: every multi-part checkpoint is a complete set of parts with one schema.

Spec: ``spec/checkpoints.md`` §9 Multi-part checkpoints (``CKPT-NAME-002``: parts ``1..p``, one
file per number; ``CKPT-PART-006``: readers skip an incomplete set; ``CKPT-PART-010``: one schema). An incomplete set is what a
writer that died between parts, or a cleaner that deleted some parts, leaves behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

from reference_impl.log.naming import parse_log_file_name
from reference_impl.validate.context import TableView, log_path
from reference_impl.validate.finding import Finding
from reference_impl.validate.shapes import arrow_shape, describe_difference


def check_multipart_sets(view: TableView) -> Iterator[Finding]:
    """Each ``(version, part count)`` group of parts holds exactly the parts ``1..p``."""
    parsed = sorted(
        (p for p in map(parse_log_file_name, view.listing.incomplete) if view.in_scope(p.version)),
        key=lambda p: (p.version or 0, p.num_parts or 0),
    )
    for (version, num_parts), group in groupby(parsed, key=lambda p: (p.version, p.num_parts)):
        members = list(group)
        present = sorted(p.part or 0 for p in members)
        missing = sorted(set(range(1, (num_parts or 0) + 1)) - set(present))
        yield Finding(
            "MULTI",
            "CKPT-NAME-002",
            log_path(members[0].name),
            f"parts {', '.join(map(str, present))} of {num_parts}",
            f"the {num_parts}-part checkpoint of version {version} is incomplete"
            + (f" (missing part {', '.join(map(str, missing))})" if missing else ""),
        )


def check_part_schemas(view: TableView) -> Iterator[Finding]:
    """The parts of each readable complete multi-part checkpoint share one Parquet schema."""
    for instance in view.checkpoints:
        parts = view.top_level(instance)
        if len(parts) < 2 or any(p.error for p in parts):
            continue
        first = parts[0]
        for other in parts[1:]:
            if not other.schema.equals(first.schema):
                yield Finding(
                    "MULTI",
                    "CKPT-PART-010",
                    log_path(other.name),
                    f"schema differs from {first.name}: {describe_difference(arrow_shape(first.schema), arrow_shape(other.schema))}",
                    "all parts of one multi-part checkpoint should share one Parquet schema",
                )
