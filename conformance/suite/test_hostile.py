"""Hostile tables: every reader and every cleaner against names, links and hints that lead out of the table.

Spec: §19.1 Sidecar paths, §16.3, §16.4, §18.2 and divergence D22; the cases and how each is built are in
:mod:`conformance.tables.hostile_cases` (one table of cases). Each case is built afresh in the test's own
directory, with decoys outside the table — valid sidecars of the wrong content wherever a hostile path
could lead, and ``decoy.txt``. One test function per rule, each a thin wrapper around :func:`_read` or
:func:`_clean`, parametrised over that rule's cases. A reader must answer the base's state or one of the case's error codes
(never a state built from a decoy); a cleaner may answer anything. After every run, nothing outside the
table may have changed.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from conformance.adapter import AdapterError, Implementation
from conformance.compare import assert_states_equal
from conformance.decode.paths import table_root_uri
from conformance.plugin import fixtures_dir
from conformance.tables.cleanup_cases import CleanupCase, build_cleanup_case
from conformance.tables.hostile_cases import (
    HOSTILE_CASES,
    LATEST,
    READER_BASE,
    HostileCase,
    build_hostile_cleanup,
    build_hostile_table,
)
from spec.table_state import TableState


def _cases(rule: str) -> list[HostileCase]:
    return [c for c in HOSTILE_CASES if c.rule == rule]


def _ids(case: HostileCase) -> str:
    return case.name


def _read(reader: Implementation, case: HostileCase, factory: pytest.TempPathFactory, fixtures: Path) -> None:
    """Build ``case``, read it, check the answer and that nothing outside the table changed.

    The case directory has a neutral name (``caseN``), so no word of the test's name appears in the paths
    of an implementation's error messages (adapters map messages to codes).
    """
    built = build_hostile_table(case, fixtures, factory.mktemp("case") / "case")
    descriptor = json.loads((fixtures / READER_BASE / "fixture.json").read_text())
    info = reader.info
    where = f"{built.label} read by {info.name}"
    expected = case.outcome.describe()
    try:
        result = reader.read(
            built.table, version=None, now_ms=descriptor["nowMs"] if info.honours_clock else None
        )
    except AdapterError as exc:
        assert exc.code in case.outcome.codes, f"{where}: expected {expected}, the reader reported {exc}"
    else:
        assert case.outcome.state, (
            f"{where}: expected {expected}, the reader returned version {result.state.version} with "
            f"{len(result.state.files)} file(s)"
        )
        state_file = fixtures / READER_BASE / f"expected/v{LATEST}/table_state.json"
        state = TableState.from_json(json.loads(state_file.read_text()))
        assert_states_equal(
            state,
            result.state,
            context=where,
            ignore=sorted(info.unavailable_fields),
            root=table_root_uri(built.table),
        )
    changed = built.outside_changes()
    assert not changed, f"{where}: changed outside the table: {changed}"


@pytest.mark.requirement("CKPT-SIDE-016")
@pytest.mark.parametrize("case", _cases("CKPT-SIDE-016"), ids=_ids)
def test_sidecar_path_never_leads_out_of_sidecars(
    reader: Implementation,
    case: HostileCase,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> None:
    """A ``sidecar.path`` without a scheme — encoded, double-encoded, with backslashes or ``../``, absolute,
    with NUL or invalid UTF-8, too long, a dot segment, or a directory — gives ``SIDECAR_MISSING`` or
    ``SIDECAR_PATH_INVALID``, never the decoy's files.

    Spec: CKPT-SIDE-016
    "A reader MUST NOT take actions from any file but one directly inside the table's own
    `_delta_log/_sidecars/` for a `sidecar.path` without a scheme, whatever the path holds before or after
    percent-decoding (…); when no such file exists it MUST fail with `SIDECAR_MISSING` or
    `SIDECAR_PATH_INVALID`."
    """
    _read(reader, case, tmp_path_factory, fixtures_dir(request.config))


@pytest.mark.requirement("CKPT-SIDE-014")
@pytest.mark.parametrize("case", _cases("CKPT-SIDE-014"), ids=_ids)
def test_sidecar_uri_outside_own_sidecars_is_refused(
    reader: Implementation,
    case: HostileCase,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> None:
    """A ``sidecar.path`` URI of another table, host or scheme, or one that leaves the own ``_sidecars/`` by
    dot segments, gives ``SIDECAR_PATH_INVALID`` (or ``SIDECAR_MISSING``), never the decoy's files.

    Spec: CKPT-SIDE-014
    "A reader SHOULD treat a checkpoint as invalid, with error code `SIDECAR_PATH_INVALID`, when one of
    its sidecar paths neither is a bare file name nor resolves to a file directly inside the table's
    own `_delta_log/_sidecars/` directory."
    """
    _read(reader, case, tmp_path_factory, fixtures_dir(request.config))


@pytest.mark.requirement("CKPT-SIDE-017")
@pytest.mark.parametrize("case", _cases("CKPT-SIDE-017"), ids=_ids)
def test_links_do_not_carry_sidecars_out_of_the_table(
    reader: Implementation,
    case: HostileCase,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> None:
    """A sidecar that is a symbolic link out of ``_sidecars/`` (to another table, to ``_delta_log/``, to a
    directory, to nothing), or ``_sidecars`` linked into another table: an error, never the decoy's files.

    Spec: CKPT-SIDE-017
    "a reader SHOULD treat a sidecar that is a symbolic link to a file outside the table's own
    `_delta_log/_sidecars/`, or any sidecar when `_delta_log/_sidecars` itself is a symbolic link leading
    out of `_delta_log/`, as `SIDECAR_PATH_INVALID`"
    """
    _read(reader, case, tmp_path_factory, fixtures_dir(request.config))


@pytest.mark.requirement("CKPT-READ-025")
@pytest.mark.parametrize("case", _cases("CKPT-READ-025"), ids=_ids)
def test_links_and_directories_in_the_log_are_absent(
    reader: Implementation,
    case: HostileCase,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> None:
    """A checkpoint, a commit or ``_last_checkpoint`` that is a link out of ``_delta_log/`` (to a copy without
    a sidecar, a commit removing every file, a sidecar, a hint of version 99) or a directory: the reader
    ignores it and reports the state of version 4 from the rest of the log.

    Spec: CKPT-READ-025
    "A reader SHOULD treat a name in `_delta_log/` that is a directory, or a symbolic link whose target is
    not directly inside `_delta_log/`, as absent"
    """
    _read(reader, case, tmp_path_factory, fixtures_dir(request.config))


@pytest.mark.requirement("CKPT-READ-010")
@pytest.mark.parametrize("case", _cases("CKPT-READ-010"), ids=_ids)
def test_hostile_hints_are_ignored(
    reader: Implementation,
    case: HostileCase,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> None:
    """``_last_checkpoint`` with a negative, huge, overflowing, string or fractional version, absurd
    ``parts``, a ``v2Checkpoint.path`` or ``sidecarFiles`` leading out of the table, NUL bytes, invalid UTF-8
    or 5,000 nested arrays: the reader lists the log and reports the state of version 4.

    A hint naming a version or a checkpoint that is not there is dangling (CKPT-READ-016): the same answer.

    Spec: CKPT-READ-010
    "A reader MUST treat a `_last_checkpoint` that is empty, is not a JSON object, lacks `version` or
    `size`, has a member of the wrong type, or is corrupt by CKPT-CKSUM-005 exactly as if the file did not
    exist."
    """
    _read(reader, case, tmp_path_factory, fixtures_dir(request.config))


_BASE: dict[str, CleanupCase] = {}


def _clean(cleaner: Implementation, case: HostileCase, root: Path, factory: pytest.TempPathFactory) -> None:
    """Build ``case`` on the ``v2-sidecars`` cleanup table, clean it (any result), check nothing outside changed."""
    if "v2-sidecars" not in _BASE:
        _BASE["v2-sidecars"] = build_cleanup_case("v2-sidecars", factory.mktemp("hostile-base") / "table")
    base = _BASE["v2-sidecars"]
    (checkpoint2,) = base.checkpoints[2]
    sidecar2 = sorted(base.sidecars[2])[0].rsplit("/", 1)[-1]
    built = build_hostile_cleanup(case, base.path, checkpoint2, sidecar2, root)
    where = f"{built.label} cleaned by {cleaner.info.name}"
    with contextlib.suppress(AdapterError):  # refusing is fine; deleting outside is not
        cleaner.cleanup(built.table, now_ms=base.now_ms if cleaner.info.honours_clock else None)
    changed = built.outside_changes()
    assert not changed, f"{where}: changed outside the table: {changed}"


@pytest.mark.requirement("CKPT-CLEAN-024")
@pytest.mark.parametrize("case", _cases("CKPT-CLEAN-024"), ids=_ids)
def test_cleaner_deletes_nothing_outside_through_links(
    cleaner: Implementation, case: HostileCase, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``_sidecars`` linked to a directory outside (with an old decoy), and expired commits, checkpoints,
    sidecars and ``_last_checkpoint`` that are links to copies outside: whatever the cleaner does, every
    file, link and directory outside the table is still there, unchanged.

    Spec: CKPT-CLEAN-024
    "A cleaner MUST NOT delete a file outside `_delta_log/` through a symbolic link or a hostile name"
    """
    _clean(cleaner, case, tmp_path / "case", tmp_path_factory)


@pytest.mark.requirement("CKPT-CLEAN-028")
@pytest.mark.parametrize("case", _cases("CKPT-CLEAN-028"), ids=_ids)
def test_cleaner_deletes_nothing_outside_by_hostile_names(
    cleaner: Implementation, case: HostileCase, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """An expired checkpoint names a decoy outside the table as its sidecar (``file://`` URI, ``../``,
    ``..%2F``), and old files with non-UTF-8 and 255-byte names lie in ``_delta_log/`` and ``_sidecars/``:
    nothing outside the table changes.

    Spec: CKPT-CLEAN-028
    "A cleaner MUST NOT delete `_last_checkpoint`, any file outside `_delta_log/`, …"
    """
    _clean(cleaner, case, tmp_path / "case", tmp_path_factory)
