"""Cleaner conformance: every cleaner on the same tables, then every reader on what is left (spec §18).

Each cleaner cleans its own copy of each :mod:`~conformance.tables.cleanup_cases` table once per session,
with the table's retention (8 days) and the suite's clock. The tests then inspect the files that
remain — the MUST rules of §18.2 hold whatever the cleaner chose to delete — and every reader reads
each remaining version, which must still be the state the table builder knows by construction.
The SHOULD rules (what should have been deleted, the compatibility checkpoint) are separate tests.

Cleaners that delete the same files (or none) leave byte-identical copies of a case: same names, bytes
and modification times (:func:`~conformance.decode.files.digest`). A reader reads such files once per
version, and its result stands for every identical copy (:func:`_read`): the same input, not a new one
(9 of the 25 cleaned tables of the bundled cleaners, measured on 5f256b0).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.adapter import AdapterError, Implementation, ReadResult
from conformance.adapters.command import ProtocolViolation
from conformance.compare import assert_states_equal
from conformance.decode.checkpoint import decode_checkpoint, sidecar_actions, sidecar_file
from conformance.decode.files import digest
from conformance.decode.names import DELTA_LOG, SIDECAR_DIR, checksum_owner, parse_name
from conformance.decode.paths import table_root_uri
from conformance.suite.conftest import Failure, Listing, attempt, fail_with, from_template, listing
from conformance.tables.cleanup_cases import CUTOFF_COMMIT, LATEST, CleanupCase, build_cleanup_case
from spec.vocabulary import LogFileKind

_CHECKPOINT_KINDS = {LogFileKind.CHECKPOINT_CLASSIC, LogFileKind.CHECKPOINT_PART, LogFileKind.CHECKPOINT_UUID}
_DELETABLE = {LogFileKind.COMMIT, LogFileKind.CRC, LogFileKind.COMPACTION} | _CHECKPOINT_KINDS


@dataclass
class CleanedTable:
    cleaner: str
    case: CleanupCase
    path: Path
    before: Listing
    after: Listing
    data_before: Listing
    data_after: Listing
    error: Failure | None
    digest: str  # of every file of the cleaned copy (conformance.decode.files.digest)

    @property
    def log_dir(self) -> Path:
        return self.path / DELTA_LOG

    @property
    def label(self) -> str:
        return f"{self.case.name} cleaned by {self.cleaner} ({self.path})"

    @property
    def deleted(self) -> set[str]:
        return set(self.before) - set(self.after)

    def versions(self, kinds: set[LogFileKind], names: set[str]) -> list[int]:
        """Versions of the files among ``names`` (top-level ``_delta_log`` names) of one of ``kinds``."""
        parsed = [parse_name(n) for n in names if "/" not in n]
        return sorted({p.version for p in parsed if p.kind in kinds and p.version is not None})

    @property
    def remaining_commits(self) -> list[int]:
        return self.versions({LogFileKind.COMMIT}, set(self.after))


_CLEANED: dict[tuple[str, str], CleanedTable] = {}
#: (reader, digest of a cleaned copy, version) -> the first copy with those files read, and what the read gave
_READS: dict[tuple[str, str, int], tuple[Path, ReadResult | Failure]] = {}


@pytest.fixture
def cleaned(
    cleaner: Implementation, cleanup_case_name: str, tmp_path_factory: pytest.TempPathFactory
) -> CleanedTable:
    key = (cleaner.info.name, cleanup_case_name)
    if key not in _CLEANED:
        path = tmp_path_factory.mktemp(f"{cleaner.info.name}-{cleanup_case_name}") / "table"
        case = from_template(  # built once per process; copy2 keeps the stamped modification times
            ("cleanup", cleanup_case_name),
            lambda template: build_cleanup_case(cleanup_case_name, template),
            path,
            tmp_path_factory,
        )
        before, data_before = listing(path), listing(path, outside_log=True)
        error = attempt(
            lambda: cleaner.cleanup(path, now_ms=case.now_ms if cleaner.info.honours_clock else None)
        )
        _CLEANED[key] = CleanedTable(
            cleaner.info.name,
            case,
            path,
            before,
            listing(path),
            data_before,
            listing(path, outside_log=True),
            error,
            digest(path),
        )
    result = _CLEANED[key]
    failure = result.error
    if failure is not None and not (
        isinstance(failure, AdapterError) and failure.code == result.case.expected_error
    ):
        fail_with(result.label, "cleaner", failure)
    return result


@pytest.mark.requirement("CKPT-CLEAN-011")
def test_unsupported_writer_feature_is_refused(cleaned: CleanedTable) -> None:
    """``unknown-writer-feature``: the protocol lists a writer feature no cleaner knows, so the cleaner fails
    with ``UNSUPPORTED_WRITER_FEATURE`` and deletes nothing (n.a. for the other cases).

    Spec: CKPT-CLEAN-011
    > A cleaner MUST NOT delete any file of a table whose protocol lists a writer feature that the cleaner
    > does not support, and MUST fail with `UNSUPPORTED_WRITER_FEATURE` instead.
    """
    expected = cleaned.case.expected_error
    if expected is None:
        pytest.skip(f"n.a.: {cleaned.case.name} lists no unsupported writer feature")
    assert not cleaned.deleted, f"{cleaned.label}: deleted {sorted(cleaned.deleted)}"
    assert isinstance(cleaned.error, AdapterError), (
        f"{cleaned.label}: the cleaner reported success, expected {expected}"
    )
    assert cleaned.error.code == expected, (
        f"{cleaned.label}: failed with {cleaned.error}, expected {expected}"
    )


@pytest.mark.requirement("CKPT-CLEAN-001", "CKPT-CLEAN-002")
def test_remaining_commits_start_at_a_checkpoint(cleaned: CleanedTable) -> None:
    """The remaining commits run without a gap to the latest version and, if any was deleted, start at
    the version of a complete checkpoint.

    Spec: CKPT-CLEAN-001
    > After a cleanup that deleted any commit file, the oldest remaining commit file MUST be at the version
    > of a complete checkpoint, …
    Spec: CKPT-CLEAN-002
    > A cleaner MUST NOT delete a commit file while keeping a commit file of a lower version, so that the
    > remaining commits have no gap.
    """
    commits = cleaned.remaining_commits
    assert commits == list(range(commits[0], LATEST + 1)) if commits else False, (
        f"{cleaned.label}: remaining commits {commits}, expected a gap-free run ending at {LATEST}"
    )
    if commits[0] > 0:
        files = cleaned.case.checkpoints.get(commits[0], ())
        missing = [f for f in files if f not in cleaned.after]
        assert files and not missing, (
            f"{cleaned.label}: oldest remaining commit {commits[0]} has no complete checkpoint "
            f"(written there: {list(files)}, missing now: {missing})"
        )


@pytest.mark.requirement("CKPT-CLEAN-003", "CKPT-CLEAN-004", "CKPT-CLEAN-006", "CKPT-CLEAN-028")
def test_only_expired_log_files_are_deleted(cleaned: CleanedTable) -> None:
    """Every deleted file is a commit, checksum, checkpoint, compaction or sidecar file (or Hadoop's
    ``.crc`` of one) of a version at or before the cutoff commit 5; nothing outside ``_delta_log`` changed;
    ``_last_checkpoint`` and its checkpoint remain; with no checkpoint at or before the cutoff commit
    (``checkpoint-after-cutoff``: the only checkpoint is at 6, right after it), no commit, checksum or
    checkpoint is deleted.

    Spec: CKPT-CLEAN-003
    > A cleaner MUST NOT delete any commit file whose timestamp, … is later than the cutoff timestamp, nor
    > any checkpoint or checksum file of such a commit's version.
    Spec: CKPT-CLEAN-004
    > A cleaner that finds no complete checkpoint at or before the cutoff commit MUST NOT delete any commit,
    > checkpoint, checksum or log compaction file.
    Spec: CKPT-CLEAN-006
    > A cleaner MUST NOT leave `_last_checkpoint` describing a checkpoint whose files it deleted.
    Spec: CKPT-CLEAN-028
    > A cleaner MUST NOT delete `_last_checkpoint`, any file outside `_delta_log/`, …
    """
    where = cleaned.label
    problems = []
    for name in sorted(cleaned.deleted):
        base = name.rsplit("/", 1)[-1]
        if name.startswith(f"{SIDECAR_DIR}/"):
            continue  # sidecars: CKPT-CLEAN-013 (test_referenced_sidecars_remain)
        parsed = parse_name(checksum_owner(base) or base)
        if "/" in name or parsed.kind not in _DELETABLE:
            problems.append(f"{name}: not a file a cleaner may delete")
        elif parsed.version is None or parsed.version > CUTOFF_COMMIT:
            problems.append(f"{name}: version {parsed.version} is after the cutoff commit {CUTOFF_COMMIT}")
        elif cleaned.case.cutoff_checkpoint is None:
            problems.append(f"{name}: deleted although no checkpoint is at or before the cutoff commit")
    assert not problems, f"{where}: " + "; ".join(problems)
    assert cleaned.data_after == cleaned.data_before, f"{where}: files outside _delta_log changed"
    assert "_last_checkpoint" in cleaned.after, f"{where}: _last_checkpoint was deleted"
    hinted = cleaned.case.checkpoints[max(cleaned.case.checkpoints)]
    assert all(f in cleaned.after for f in hinted), (
        f"{where}: the checkpoint in _last_checkpoint {hinted} is gone"
    )


@pytest.mark.requirement("CKPT-CLEAN-013")
def test_referenced_sidecars_remain(cleaned: CleanedTable) -> None:
    """Every sidecar that a remaining top-level checkpoint file references (including a compatibility
    checkpoint the cleaner wrote) still exists.

    Spec: CKPT-CLEAN-013
    > A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint remaining after
    > the cleanup references, …
    """
    references = _sidecar_references(cleaned)
    missing = [f"{target} (referenced by {name})" for target, name in references if not target.is_file()]
    assert not missing, f"{cleaned.label}: referenced sidecars deleted: {missing}"
    if cleaned.case.sidecars.get(max(cleaned.case.checkpoints)):
        assert references, f"{cleaned.label}: no remaining checkpoint references a sidecar"


def _sidecar_references(cleaned: CleanedTable) -> list[tuple[Path, str]]:
    """(sidecar file, name of the top-level checkpoint file referencing it) for every remaining
    classic-named or UUID-named checkpoint of the cleaned table."""
    top_level = {LogFileKind.CHECKPOINT_CLASSIC, LogFileKind.CHECKPOINT_UUID}
    return [
        (sidecar_file(cleaned.log_dir, action), name)
        for name in sorted(cleaned.after)
        if "/" not in name and parse_name(name).kind in top_level
        for action in sidecar_actions(cleaned.log_dir, name)
    ]


@pytest.mark.requirement("CKPT-CLEAN-021")
def test_protected_history_goes_whole_or_not_at_all(cleaned: CleanedTable) -> None:
    """``v2-dropped`` (``checkpointProtection``, *P* = 5): of the commit and checkpoint files of versions
    below 5, the cleaner deletes all or none (n.a. for the cases without the feature).

    Spec: CKPT-CLEAN-021
    > A cleaner MUST NOT delete a commit or checkpoint file of a version less than *P* unless the same run
    > deletes every commit and checkpoint file of a version less than *P*; when its plan would delete only
    > part of that history, it MUST delete none of it.
    """
    protected = cleaned.case.protected_before
    if protected is None:
        pytest.skip(f"n.a.: {cleaned.case.name} does not list checkpointProtection")
    kinds = {LogFileKind.COMMIT} | _CHECKPOINT_KINDS
    history = {
        n
        for n in cleaned.before
        if "/" not in n and parse_name(n).kind in kinds and (parse_name(n).version or 0) < protected
    }
    kept = sorted(history - cleaned.deleted)
    assert not (history & cleaned.deleted) or not kept, (
        f"{cleaned.label}: deleted {sorted(history & cleaned.deleted)} of the history before "
        f"P = {protected} but kept {kept}"
    )


@pytest.mark.requirement("CKPT-CLEAN-023")
def test_sidecars_are_collected_after_v2_checkpoint_is_dropped(cleaned: CleanedTable) -> None:
    """``v2-dropped``: the latest protocol no longer lists ``v2Checkpoint``, the UUID-named checkpoint 2
    expired, and every sidecar dates from version 2, before the sidecar cutoff: whatever the
    cleaner deleted, no file in ``_sidecars/`` is left that no remaining checkpoint references (n.a. for
    the cases whose latest protocol lists the feature or that never had sidecars).

    Spec: CKPT-CLEAN-023
    > A cleaner SHOULD collect unreferenced files in `_delta_log/_sidecars/` (…) also when the latest
    > protocol no longer supports `v2Checkpoint`.
    """
    case = cleaned.case
    latest = case.states[LATEST].protocol
    if "v2Checkpoint" in latest.get("readerFeatures", ()) or not any(case.sidecars.values()):
        pytest.skip(f"n.a.: in {case.name} the latest protocol lists v2Checkpoint or no sidecar was written")
    referenced = {target.name for target, _ in _sidecar_references(cleaned)}
    prefix = f"{SIDECAR_DIR}/"
    left = sorted(n for n in cleaned.after if n.startswith(prefix) and n[len(prefix) :] not in referenced)
    assert not left, f"{cleaned.label}: unreferenced sidecars left after the drop: {left}"


@pytest.mark.requirement("CKPT-CLEAN-028")
def test_hidden_files_in_sidecars_are_kept(cleaned: CleanedTable) -> None:
    """Of the hidden files in ``_sidecars/`` (``v2-sidecars``: the Hadoop ``.crc`` of each sidecar, and the
    planted temporaries), only the case's old sidecar temporary and the ``.crc`` of a deleted file may go:
    the temporary modified after every cleaner's one-day floor, the one without a UUID and the ``.crc`` of
    every remaining sidecar stay (n.a. when the case has no hidden file there).

    Spec: CKPT-CLEAN-028
    "… except the files of an abandoned writer staging directory as CKPT-CLEAN-025 allows and the writer
    temporaries in `_delta_log/_sidecars/` that CKPT-CLEAN-027 allows; a file in `_delta_log/_sidecars/`
    whose name begins with `.` is not a sidecar file."
    """
    prefix = f"{SIDECAR_DIR}/."
    hidden = {n for n in cleaned.before if n.startswith(prefix)}
    if not hidden:
        pytest.skip(f"n.a.: {cleaned.case.name} has no hidden file in {SIDECAR_DIR}/")
    companions = {
        f"{SIDECAR_DIR}/.{n.split('/', 1)[1]}.crc" for n in cleaned.deleted if n.startswith(SIDECAR_DIR)
    }
    wrong = sorted((hidden & cleaned.deleted) - cleaned.case.old_temporaries - companions)
    assert not wrong, (
        f"{cleaned.label}: deleted hidden files that are neither an old sidecar temporary nor the .crc of a deleted file: {wrong}"
    )


@pytest.mark.requirement("CKPT-CLEAN-027")
def test_old_sidecar_temporaries_are_collected(cleaned: CleanedTable) -> None:
    """``v2-sidecars``: the sidecar temporary stamped as version 2, before every cleaner's sidecar cutoff, is
    deleted (n.a. for the cases without one, and where nothing may be deleted).

    Spec: CKPT-CLEAN-027
    "A cleaner MAY delete a file directly in `_delta_log/_sidecars/` whose name is a sidecar temporary
    name and that no remaining checkpoint references, together with its Hadoop checksum file, when its
    modification time is before the sidecar cutoff."
    """
    old = cleaned.case.old_temporaries
    if not old:
        pytest.skip(f"n.a.: {cleaned.case.name} has no old sidecar temporary")
    left = sorted(old - cleaned.deleted)
    assert not left, f"{cleaned.label}: old sidecar temporaries kept: {left}"


@pytest.mark.requirement("CKPT-CLEAN-001", "CKPT-CLEAN-013", "CKPT-READ-001")
def test_reader_reads_every_remaining_version(cleaned: CleanedTable, reader: Implementation) -> None:
    """Every reader reads the oldest remaining version and the latest of the cleaned table as the states the
    table had before the cleanup.

    Spec: CKPT-CLEAN-001
    > … so that the commit at the cutoff checkpoint's version is always kept.
    Spec: CKPT-READ-001
    > Whenever the log contains a gap-free sequence of commits from version 0 through version v, the table
    > state a reader reports for v MUST equal the state obtained by reconciling the actions of those commits
    > …
    """
    info = reader.info
    oldest = cleaned.remaining_commits[0]
    for version in sorted({oldest, LATEST}):
        where = f"{cleaned.label}, version {version} read by {info.name}"
        table, result = _read(reader, cleaned, version)
        if table != cleaned.path:
            where += f" (read in {table}, a byte-identical copy)"
        if not isinstance(result, ReadResult):
            fail_with(where, "reader", result)
        assert_states_equal(
            cleaned.case.states[version],
            result.state,
            context=where,
            ignore=sorted(info.unavailable_fields),
            root=table_root_uri(table),
        )


def _read(reader: Implementation, cleaned: CleanedTable, version: int) -> tuple[Path, ReadResult | Failure]:
    """``reader``'s read of ``version`` of ``cleaned``, and the table it read: made once per reader for the
    cleaned copies of a case that hold the same files (same :attr:`CleanedTable.digest`), the first of
    them, whose result, coded error or breach of the subprocess protocol stands for the others (the same
    bytes, the same verdict; :func:`~conformance.suite.conftest.attempt`). Any other failure is not kept."""
    key = (reader.info.name, cleaned.digest, version)
    if key not in _READS:
        now_ms = cleaned.case.now_ms if reader.info.honours_clock else None
        outcome: ReadResult | Failure
        try:
            outcome = reader.read(cleaned.path, version=version, now_ms=now_ms)
        except (AdapterError, ProtocolViolation) as exc:
            outcome = exc
        _READS[key] = (cleaned.path, outcome)
    return _READS[key]


@pytest.mark.requirement("CKPT-CLEAN-009", "CKPT-CLEAN-017")
def test_expired_files_are_deleted(cleaned: CleanedTable) -> None:
    """With the cutoff checkpoint at 4 (5 in ``v2-dropped``): commits and checkpoints below it are deleted,
    and so are the sidecars only the deleted checkpoints referenced; nothing else from its version on.

    Spec: CKPT-CLEAN-009
    > A cleaner SHOULD keep the newest complete checkpoint whose version is not greater than the cutoff
    > commit's version, and SHOULD delete the commits, checkpoint files and checksum files of all lower
    > versions.
    Spec: CKPT-CLEAN-017
    > A cleaner SHOULD delete every file in `_delta_log/_sidecars/` that no remaining checkpoint references
    > and whose modification time is before the sidecar cutoff.
    """
    case = cleaned.case
    keep = case.cutoff_checkpoint
    if keep is None or case.expected_error is not None:
        pytest.skip(
            f"n.a.: in {case.name} nothing may be deleted (no checkpoint at or before the cutoff "
            "commit, or a writer feature the cleaner must refuse)"
        )
    where = cleaned.label
    deleted_commits = cleaned.versions({LogFileKind.COMMIT}, cleaned.deleted)
    assert deleted_commits == list(range(keep)), (
        f"{where}: deleted commits {deleted_commits}, expected 0..{keep - 1}"
    )
    deleted_checkpoints = cleaned.versions(_CHECKPOINT_KINDS, cleaned.deleted)
    expected = [v for v in case.checkpoints if v < keep]
    assert deleted_checkpoints == expected, (
        f"{where}: deleted checkpoints of {deleted_checkpoints}, expected {expected}"
    )
    live = set().union(*(s for v, s in case.sidecars.items() if v >= keep))
    orphaned = set().union(*(s for v, s in case.sidecars.items() if v < keep)) - live
    assert orphaned <= cleaned.deleted, (
        f"{where}: unreferenced old sidecars kept: {sorted(orphaned - cleaned.deleted)}"
    )


def _compatibility_checkpoints(cleaned: CleanedTable) -> tuple[int, list[str], list[str]]:
    """(newest checkpoint version, its UUID-named files, classic-named files of it the cleaner wrote);
    skips (n.a.) when the newest checkpoint is not UUID-named or the case expires nothing."""
    case = cleaned.case
    newest = max(case.checkpoints)
    uuid_named = [n for n in case.checkpoints[newest] if parse_name(n).kind is LogFileKind.CHECKPOINT_UUID]
    if not uuid_named or case.cutoff_checkpoint is None or case.expected_error is not None:
        pytest.skip(f"n.a.: {case.name} has no UUID-named newest checkpoint, or nothing expires")
    written = [
        n
        for n in sorted(set(cleaned.after) - set(cleaned.before))
        if "/" not in n
        and parse_name(n).kind is LogFileKind.CHECKPOINT_CLASSIC
        and parse_name(n).version == newest
    ]
    return newest, uuid_named, written


@pytest.mark.requirement("CKPT-COMPAT-004")
def test_compatibility_checkpoint_is_written(cleaned: CleanedTable) -> None:
    """``v2-sidecars``: the newest checkpoint (7) is UUID-named and the cleanup deletes files, so a
    classic-named checkpoint of version 7 must appear.

    Spec: CKPT-COMPAT-004
    > Before deleting any file, a cleaner SHOULD write a compatibility checkpoint at the version of the
    > newest complete checkpoint when that checkpoint is UUID-named and no complete classic-named or
    > multi-part checkpoint of that version exists.
    """
    newest, _, written = _compatibility_checkpoints(cleaned)
    assert written, f"{cleaned.label}: no classic-named checkpoint of version {newest} was written"


@pytest.mark.requirement("CKPT-COMPAT-002")
def test_compatibility_checkpoint_has_the_state(cleaned: CleanedTable) -> None:
    """A compatibility checkpoint the cleaner wrote, decoded by the suite (pyarrow, its own decoders): one
    ``protocol`` and one ``metaData`` action, and the state of its version (n.a. when the cleaner wrote
    none).

    Spec: CKPT-COMPAT-002
    > A compatibility checkpoint MUST describe the same table state as the UUID-named checkpoint of its
    > version.
    """
    from conformance.compare import diff_states

    newest, _, written = _compatibility_checkpoints(cleaned)
    if not written:
        pytest.skip(f"n.a.: {cleaned.cleaner} wrote no compatibility checkpoint")
    expected = cleaned.case.states[newest]
    decoded = decode_checkpoint(cleaned.path / DELTA_LOG, written)
    where = f"{cleaned.label}: compatibility checkpoint {written[0]} of version {newest}"
    protocols, metadatas = decoded.actions("protocol"), decoded.actions("metaData")
    assert len(protocols) == 1 and len(metadatas) == 1, (
        f"{where}: {len(protocols)} protocol and {len(metadatas)} metaData actions"
    )
    ignore = [] if decoded.has_json_stats else ["files.stats"]
    diffs = diff_states(
        expected, decoded.state(fallback=expected), ignore=ignore, root=table_root_uri(cleaned.path)
    )
    assert not diffs, f"{where}: {len(diffs)} difference(s) from the state:" + "".join(
        f"\n  - {diff}" for diff in diffs
    )
