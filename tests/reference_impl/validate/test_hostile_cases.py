"""``delta-ckpt validate`` on every hostile reader case of the suite (``conformance/tables/hostile_cases.py``).

Each case is built as the suite builds it (the table, another table's sidecars and decoys beside
it). Validate never raises, changes nothing inside or outside the table, and reports:

* a sidecar path or sidecar file the reader must refuse — a MUST finding whose code is one of the
  codes the case allows a reader (``SIDECAR_MISSING``, ``SIDECAR_PATH_INVALID``, ``CHECKPOINT_CORRUPT``);
* a hostile ``_last_checkpoint`` — a MUST finding on ``_delta_log/_last_checkpoint``;
* a link or directory among the log's entries — nothing read through it: every finding names a
  file directly in ``_delta_log/`` or ``_delta_log/_sidecars/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.tables.hostile_cases import READER_CASES, HostileCase, build_hostile_table, snapshot
from fixtures import FIXTURES_DIR
from reference_impl.validate import validate_table
from tests.reference_impl.validate.helpers import describe


@pytest.mark.parametrize("case", READER_CASES, ids=lambda c: c.name)
def test_hostile_case_is_reported_and_nothing_changes(case: HostileCase, tmp_path: Path) -> None:
    """The case's expected kind of finding; no change inside or outside the table; no exception."""
    built = build_hostile_table(case, FIXTURES_DIR, tmp_path)
    inside = built.table / "_nothing_excluded_"
    before = snapshot(built.table, exclude=inside)  # contents, link targets, directories (links not followed)
    report = validate_table(built.table, state=False)
    assert not built.outside_changes(), f"{built.label}: {built.outside_changes()}"
    assert snapshot(built.table, exclude=inside) == before, f"{built.label}: the table changed"
    must = [f for f in report.findings if f.level == "MUST"]
    if case.kind in ("sidecar-path", "sidecar-file"):
        codes = {str(f.code) for f in must if f.code}
        assert codes & case.outcome.codes, (
            f"{built.label}: expected a code of {sorted(case.outcome.codes)}, found {sorted(codes)}:\n"
            + describe(report)
        )
    elif case.kind == "hint":
        assert any(f.file == "_delta_log/_last_checkpoint" for f in must), (
            f"{built.label}:\n{describe(report)}"
        )
    # every finding names a file directly in _delta_log/ or _delta_log/_sidecars/ (one name segment)
    for finding in report.findings:
        rest = finding.file.removeprefix("_delta_log/").removeprefix("_sidecars/")
        assert finding.file.startswith("_delta_log") and "/" not in rest, f"{built.label}: {finding}"
