"""MULTI checks: every multi-part checkpoint is a complete set of parts.

Spec: ``spec/checkpoints.md`` §9 Multi-part checkpoints (``CKPT-NAME-002``: parts ``1..p``, one
file per number; ``CKPT-PART-006``: readers skip an incomplete set). An incomplete set is what a
writer that died between parts, or a cleaner that deleted some parts, leaves behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

from reference_impl.log.naming import parse_log_file_name
from reference_impl.validate.context import TableView, log_path
from reference_impl.validate.finding import Finding


def check_multipart_sets(view: TableView) -> Iterator[Finding]:
    """Each ``(version, part count)`` group of parts holds exactly the parts ``1..p``."""
    parsed = sorted(
        (parse_log_file_name(n) for n in view.listing.incomplete),
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
