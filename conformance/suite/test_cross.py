"""Cross conformance: every writer profile × every reader × every source shape (Arrow-style matrix).

The writer checkpoints the latest version of a freshly built table; the commits before the
checkpoint are deleted (the one at its version is kept), so a reader can only get the state from
the checkpoint; the reader must then report the state the table builder knows by construction.
"""

from __future__ import annotations

import pytest

from conformance.adapter import AdapterError, Implementation
from conformance.compare import assert_states_equal
from conformance.decode.paths import table_root_uri
from conformance.suite.conftest import WrittenTable


@pytest.mark.requirement("CKPT-WRITE-003", "CKPT-CONTENT-001", "CKPT-READ-001", "CKPT-READ-002")
@pytest.mark.scores("reader")  # the writer's rules are judged by test_writer_output, independently
def test_reader_reads_writers_checkpoint(written: WrittenTable, reader: Implementation) -> None:
    """Any reader reads any writer's checkpoint, with the earlier commits gone, as the original state.

    Spec: CKPT-WRITE-003
    > Writing a checkpoint MUST NOT change the table state that a conforming reader reports for any
    > version.
    Spec: CKPT-CONTENT-001
    > A checkpoint named for version n MUST describe exactly the table state obtained by reconciling the
    > actions of all commits from version 0 through version n.
    Spec: CKPT-READ-001
    > Whenever the log contains a gap-free sequence of commits from version 0 through version v, the
    > table state a reader reports for v MUST equal the state obtained by reconciling the actions of those
    > commits, apart from expired tombstones and expired transaction identifiers …, whichever checkpoints
    > the log also contains.
    """
    assert written.readable is not None
    info = reader.info
    where = f"{written.label} read by {info.name} (commits before v{written.shape.version} deleted)"
    try:
        result = reader.read(written.readable, now_ms=written.shape.now_ms if info.honours_clock else None)
    except AdapterError as exc:
        pytest.fail(f"{where}: {exc.code}: {exc.message}", pytrace=False)
    assert_states_equal(
        written.shape.state,
        result.state,
        context=where,
        ignore=sorted(info.unavailable_fields),
        root=table_root_uri(written.readable),
    )
    rows = result.visible_rows() if written.shape.rows is not None else None
    if rows is not None:
        assert rows == written.shape.rows, f"{where}: {rows} rows, expected {written.shape.rows}"
    if info.reports_checkpoint:
        assert result.checkpoint == written.checkpoint[0], (
            f"{where}: used {result.checkpoint}, not the new checkpoint {written.checkpoint[0]}"
        )
