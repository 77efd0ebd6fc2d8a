"""Reader conformance: every reader × every expectation of every golden table in ``fixtures/``.

Valid and foreign fixtures: the reader reports the expected ``TableState`` (on the fields it can
report), the expected visible rows (if it reads data) and the expected checkpoint (if it reports
one). Invalid fixtures: the reader reports the expected error code — or, where the spec makes
readers tolerant, the expected state. Each test cites the requirement IDs of its fixture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapter import AdapterError, Implementation
from conformance.compare import assert_states_equal
from conformance.decode.paths import table_root_uri
from conformance.plugin import FixtureExpectation

#: Fields whose content depends on the clock: compared only by readers that honour ``nowMs``.
CLOCK_FIELDS = ("tombstones", "txns")


def test_reader_fixture(
    reader: Implementation, fixture_expectation: FixtureExpectation, tmp_path: Path
) -> None:
    """A reader reproduces the fixture's expected state (or expected error) for one version.

    Spec: the requirements listed in the fixture's fixture.json (added as markers at collection).
    """
    fx = fixture_expectation
    table = tmp_path / "table"
    fx.copy_table(table)
    exp = fx.expectation
    version = exp["version"]
    info = reader.info
    now = fx.descriptor["nowMs"] if info.honours_clock else None
    where = f"{fx.path} (version {'latest' if version is None else version}) read by {info.name}"
    if "error" in exp:
        code = exp["error"]["code"]
        try:
            result = reader.read(table, version=version, now_ms=now)
        except AdapterError as exc:
            assert exc.code == code, (
                f"{where}: expected error {code}, the reader reported {exc.code}: {exc.message}"
            )
            return
        pytest.fail(
            f"{where}: expected error {code}, the reader returned version {result.state.version}",
            pytrace=False,
        )
    try:
        result = reader.read(table, version=version, now_ms=now)
    except AdapterError as exc:
        pytest.fail(
            f"{where}: expected a state, the reader reported {exc.code}: {exc.message}", pytrace=False
        )
    expected = fx.expected_state(table)
    ignore = set(info.unavailable_fields)
    if not info.honours_clock and any("clock" in note for note in fx.descriptor["notes"]):
        ignore |= set(CLOCK_FIELDS)
    assert_states_equal(
        expected, result.state, context=where, ignore=sorted(ignore), root=table_root_uri(table)
    )
    rows = result.visible_rows() if exp.get("rows") is not None else None
    if rows is not None:
        assert rows == exp["rows"], f"{where}: {rows} visible rows, expected {exp['rows']}"
    if exp.get("checkpoint") and info.reports_checkpoint:
        assert result.checkpoint == exp["checkpoint"], (
            f"{where}: used checkpoint {result.checkpoint}, expected {exp['checkpoint']}"
        )
