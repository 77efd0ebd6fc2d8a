"""The pure part of the cleaner (:mod:`reference_impl.cleanup.plan`) on synthetic logs: no Spark.

Each test lays out a ``_delta_log`` of empty-ish files with chosen modification times and checks
the decisions: cutoffs, the cutoff commit and checkpoint, what is deleted and why.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from reference_impl.cleanup.cleaner import cleanup
from reference_impl.cleanup.invariants import only_log_files_are_deleted, structural_checks
from reference_impl.cleanup.plan import (
    LogPlan,
    SidecarPlan,
    commit_timestamps,
    format_ms,
    log_cutoff,
    plan_log,
    plan_sidecars,
    read_in_commit_timestamp,
    sidecar_floor,
)
from reference_impl.cli.cleanup import parse_now
from reference_impl.errors import InvalidOption, LogCorrupt
from reference_impl.log.listing import list_log
from reference_impl.log.naming import (
    classic_checkpoint_name,
    commit_name,
    compaction_name,
    crc_name,
    part_checkpoint_name,
    sidecar_temp_name,
)
from reference_impl.log.table_properties import MS_PER_DAY
from reference_impl.storage import FileInfo, Location
from reference_impl.storage.local import LocalStorage
from spec.vocabulary import LogFileKind

DAY = MS_PER_DAY
HOUR = 3_600_000
T0 = 1_700_000_000_000 // DAY * DAY  # a midnight UTC

STORAGE = LocalStorage()


def _touch(path: Path, ms: int, data: bytes = b"x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


def _log(tmp_path: Path, versions: int, checkpoints: dict[int, list[str]] | None = None) -> Path:
    """Commits 0..versions-1 one day apart (at T0 + v days + 6 h), each with a .crc and a Hadoop .crc."""
    log_dir = tmp_path / "t" / "_delta_log"
    for v in range(versions):
        at = T0 + v * DAY + 6 * HOUR
        _touch(log_dir / commit_name(v), at)
        _touch(log_dir / crc_name(v), at + 1000)
        _touch(log_dir / f".{commit_name(v)}.crc", at)
    for v, names in (checkpoints or {}).items():
        for name in names:
            _touch(log_dir / name, T0 + v * DAY + 6 * HOUR + 2000)
    return log_dir


def _plan(log_dir: Path, now: int, retention_days: int, hint: int | None = None):  # type: ignore[no-untyped-def]
    listing = list_log(STORAGE, Location.parse(log_dir))
    files = STORAGE.list_dir(Location.parse(log_dir))
    cutoff = log_cutoff(now, retention_days * DAY)
    times = commit_timestamps(listing.commits, stop_after_ms=cutoff)
    dirs = [e.name for e in os.scandir(log_dir) if e.is_dir()]
    return listing, plan_log(listing, files, dirs, cutoff_ms=cutoff, commit_times=times, hint_version=hint)


@pytest.mark.requirement("CKPT-CLEAN-008")
def test_cutoff_is_midnight_utc_of_now_minus_retention() -> None:
    """CKPT-CLEAN-008: "compute the cutoff timestamp as the current time minus
    delta.logRetentionDuration (30 days when unset), truncated to midnight UTC".

    Spec: CKPT-CLEAN-008
    "A cleaner SHOULD compute the cutoff timestamp as the current time minus
    `delta.logRetentionDuration` (30 days when unset), truncated to midnight UTC."
    """
    now = T0 + 13 * HOUR + 5
    assert log_cutoff(now, 30 * DAY) == T0 - 30 * DAY
    assert log_cutoff(now, 14 * HOUR) == T0 - DAY  # 23:00 the day before -> that day's midnight
    assert log_cutoff(T0, 0) == T0
    assert sidecar_floor(now) == T0 - DAY
    assert format_ms(T0).endswith("T00:00:00.000Z")


def test_now_accepts_milliseconds_and_iso_8601() -> None:
    assert parse_now("1700000000000") == 1_700_000_000_000
    assert parse_now("2024-05-01T00:00:00Z") == 1_714_521_600_000
    assert parse_now("2024-05-01T02:00:00+02:00") == 1_714_521_600_000
    assert parse_now("2024-05-01 00:00:00") == 1_714_521_600_000  # naive means UTC
    with pytest.raises(InvalidOption):
        parse_now("yesterday")


@pytest.mark.requirement("CKPT-CLEAN-003")
def test_commit_timestamps_are_made_strictly_increasing() -> None:
    """§18.1 step 2: "a commit not newer than its predecessor counts as one millisecond newer".

    Spec: CKPT-CLEAN-003
    "A cleaner MUST NOT delete any commit file whose timestamp, as defined in …, is later than the
    cutoff timestamp, nor any checkpoint or checksum file of such a commit's version."
    """
    commits = {
        0: FileInfo("0", 1, 100),
        1: FileInfo("1", 1, 100),
        2: FileInfo("2", 1, 50),
        3: FileInfo("3", 1, 400),
    }
    times = commit_timestamps(commits)
    assert [t.timestamp_ms for t in times] == [100, 101, 102, 400]
    assert [t.adjusted for t in times] == [False, True, True, False]
    assert len(commit_timestamps(commits, stop_after_ms=101)) == 3  # stops after the first later one
    ict = commit_timestamps(commits, ict_from_version=2, read_ict=lambda v: 1000 + v)
    assert [(t.timestamp_ms, t.source) for t in ict][2:] == [
        (1002, "inCommitTimestamp"),
        (1003, "inCommitTimestamp"),
    ]


@pytest.mark.requirement(
    "CKPT-CLEAN-009", "CKPT-CLEAN-001", "CKPT-CLEAN-002", "CKPT-CLEAN-003", "CKPT-CLEAN-010"
)
def test_plan_keeps_the_newest_checkpoint_before_the_cutoff_commit(tmp_path: Path) -> None:
    """CKPT-CLEAN-009: "keep the newest complete checkpoint whose version is not greater than the
    cutoff commit's version, and … delete the commits, checkpoint files and checksum files of all
    lower versions"; CKPT-CLEAN-010: delete "every log compaction file whose start version is not
    greater than the cutoff checkpoint's version".

    Spec: CKPT-CLEAN-009
    "A cleaner SHOULD keep the newest complete checkpoint whose version is not greater than the cutoff
    commit's version, and SHOULD delete the commits, checkpoint files and checksum files of all lower
    versions."
    """
    log_dir = _log(
        tmp_path,
        8,
        {2: [classic_checkpoint_name(2)], 4: [classic_checkpoint_name(4)], 6: [classic_checkpoint_name(6)]},
    )
    _touch(log_dir / compaction_name(1, 3), T0 + 3 * DAY + 7 * HOUR)
    _touch(log_dir / compaction_name(4, 5), T0 + 5 * DAY + 7 * HOUR)
    _touch(log_dir / compaction_name(5, 6), T0 + 6 * DAY + 7 * HOUR)
    # now = day 10 noon, retention 5 days -> cutoff = midnight of day 5 -> cutoff commit 4 (day 4 06:00).
    listing, plan = _plan(log_dir, T0 + 10 * DAY + 12 * HOUR, 5)
    assert plan.cutoff_commit is not None and plan.cutoff_commit.version == 4
    assert plan.cutoff_checkpoint is not None and plan.cutoff_checkpoint.version == 4
    deleted = [d.name for d in plan.deletions]
    expected_old = [
        crc_name(0),
        commit_name(0),
        compaction_name(1, 3),
        crc_name(1),
        commit_name(1),
        classic_checkpoint_name(2),
        crc_name(2),
        commit_name(2),
        crc_name(3),
        commit_name(3),
        compaction_name(4, 5),
    ]
    assert deleted == expected_old, "deleted in version order: compaction, checkpoint, checksum, commit"
    by_name = {d.name: d for d in plan.files}
    assert by_name[commit_name(0)].companions == (f".{commit_name(0)}.crc",)
    assert not by_name[commit_name(4)].delete and "D11" in by_name[commit_name(4)].reason
    assert not by_name[compaction_name(5, 6)].delete
    checks = structural_checks(
        plan, plan_sidecars([], {}, cutoff_ms=0, floor_ms=0, cutoff_source="-"), listing, {}
    )
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]


@pytest.mark.requirement("CKPT-CLEAN-004")
def test_no_checkpoint_before_the_cutoff_commit_deletes_nothing(tmp_path: Path) -> None:
    """CKPT-CLEAN-004: "A cleaner that finds no complete checkpoint at or before the cutoff commit
    MUST NOT delete any commit, checkpoint, checksum or log compaction file".

    Spec: CKPT-CLEAN-004
    "A cleaner that finds no complete checkpoint at or before the cutoff commit MUST NOT delete any
    commit, checkpoint, checksum or log compaction file."
    """
    log_dir = _log(tmp_path, 6, {4: [classic_checkpoint_name(4)]})
    _touch(log_dir / compaction_name(0, 1), T0 + DAY + 7 * HOUR)
    _, plan = _plan(log_dir, T0 + 10 * DAY + 12 * HOUR, 7)  # cutoff commit 2
    assert plan.cutoff_commit is not None and plan.cutoff_commit.version == 2
    assert plan.cutoff_checkpoint is None and plan.deletions == []
    assert plan.stop_reason and "no complete checkpoint" in plan.stop_reason
    _, plan = _plan(log_dir, T0 + 10 * DAY + 12 * HOUR, 30)  # no commit before the cutoff at all
    assert plan.cutoff_commit is None and plan.deletions == []


@pytest.mark.requirement("CKPT-CLEAN-005")
def test_incomplete_checkpoints_are_never_the_cutoff_checkpoint(tmp_path: Path) -> None:
    """CKPT-CLEAN-005: "MUST NOT use as cutoff checkpoint a checkpoint that is incomplete, including a
    multi-part checkpoint with a missing part and a checkpoint file of zero bytes".

    Spec: CKPT-CLEAN-005
    "A cleaner MUST NOT use as cutoff checkpoint a checkpoint that is incomplete, including a
    multi-part checkpoint with a missing part and a checkpoint file of zero bytes."
    """
    log_dir = _log(tmp_path, 8, {2: [classic_checkpoint_name(2)]})
    _touch(log_dir / classic_checkpoint_name(4), T0 + 4 * DAY + 7 * HOUR, b"")  # 0 bytes
    _touch(log_dir / part_checkpoint_name(5, 1, 2), T0 + 5 * DAY + 7 * HOUR)  # part 2 of 2 missing
    _, plan = _plan(log_dir, T0 + 10 * DAY + 12 * HOUR, 4)  # cutoff commit 5
    assert plan.cutoff_commit is not None and plan.cutoff_commit.version == 5
    assert plan.cutoff_checkpoint is not None and plan.cutoff_checkpoint.version == 2
    assert {d.name for d in plan.deletions} == {crc_name(0), commit_name(0), crc_name(1), commit_name(1)}


@pytest.mark.requirement("CKPT-CLEAN-006")
def test_last_checkpoint_caps_the_cutoff_checkpoint(tmp_path: Path) -> None:
    """CKPT-CLEAN-006: "MUST NOT leave _last_checkpoint describing a checkpoint whose files it deleted".

    Spec: CKPT-CLEAN-006
    "A cleaner MUST NOT leave `_last_checkpoint` describing a checkpoint whose files it deleted."
    """
    log_dir = _log(tmp_path, 8, {2: [classic_checkpoint_name(2)], 4: [classic_checkpoint_name(4)]})
    _, plan = _plan(log_dir, T0 + 10 * DAY + 12 * HOUR, 4, hint=2)  # hint is stale: names 2, not 4
    assert plan.cutoff_checkpoint is not None and plan.cutoff_checkpoint.version == 2
    assert plan.capped_by_hint
    assert all(d.version is not None and d.version < 2 for d in plan.deletions)


@pytest.mark.requirement("CKPT-CLEAN-028")
def test_only_log_files_are_candidates(tmp_path: Path) -> None:
    """CKPT-CLEAN-028: nothing but commit, checkpoint, checksum and log compaction files (and their
    Hadoop checksums) is a candidate in ``_delta_log`` itself; temporaries there are kept.

    Spec: CKPT-CLEAN-028
    "A cleaner MUST NOT delete `_last_checkpoint`, any file outside `_delta_log/`, or any file in
    `_delta_log/` other than commit, checkpoint, checksum and log compaction files, staged commits,
    sidecar files and the Hadoop checksum file `.<name>.crc` of a file it deletes, …"
    """
    log_dir = _log(tmp_path, 6, {3: [classic_checkpoint_name(3)]})
    old = T0
    for name in ("_last_checkpoint", "notes.txt", ".00000000000000000000.json.abc.tmp", "0.json.bak"):
        _touch(log_dir / name, old)
    _touch(log_dir / ".delta-ckpt-staging-x" / "part-00000.parquet", old)
    _touch(log_dir / "_staged_commits" / f"{0:020d}.abc.json", old)
    _, plan = _plan(log_dir, T0 + 10 * DAY + 12 * HOUR, 5)
    assert plan.cutoff_checkpoint is not None and plan.cutoff_checkpoint.version == 3
    deleted = {d.name for d in plan.deletions}
    assert deleted == {crc_name(v) for v in range(3)} | {commit_name(v) for v in range(3)}
    kept = {d.name: d for d in plan.files if not d.delete}
    for name in (
        "_last_checkpoint",
        "notes.txt",
        ".00000000000000000000.json.abc.tmp",
        "0.json.bak",
        ".delta-ckpt-staging-x/",
        "_staged_commits/",
    ):
        assert name in kept and kept[name].rule == "CKPT-CLEAN-028", name


@pytest.mark.requirement("CKPT-CLEAN-013", "CKPT-CLEAN-014", "CKPT-CLEAN-017")
def test_sidecar_decisions() -> None:
    """CKPT-CLEAN-013 (never delete a referenced sidecar), CKPT-CLEAN-014 (never one modified at or
    after the one-day floor), CKPT-CLEAN-017 (delete the unreferenced ones before the cutoff).

    Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint remaining
    after the cleanup references …"
    """
    floor, cutoff = T0 - DAY, T0 - 3 * DAY
    entries = [
        FileInfo("shared.parquet", 10, T0 - 9 * DAY),
        FileInfo("orphan-old.parquet", 10, T0 - 9 * DAY),
        FileInfo("orphan-young.parquet", 10, cutoff + 1),
        FileInfo("orphan-fresh.parquet", 10, floor + 1),
        FileInfo(".orphan-old.parquet.crc", 1, T0 - 9 * DAY),
        FileInfo(".writing.parquet.tmp", 1, T0 - 9 * DAY),
    ]
    plan = plan_sidecars(
        entries,
        {"shared.parquet": ["a.json", "b.json"]},
        cutoff_ms=cutoff,
        floor_ms=floor,
        cutoff_source="test",
    )
    decisions = {d.name.split("/", 1)[1]: d for d in plan.files}
    assert [d.name for d in plan.deletions] == ["_sidecars/orphan-old.parquet"]
    assert plan.deletions[0].companions == ("_sidecars/.orphan-old.parquet.crc",)
    assert decisions["shared.parquet"].referenced_by == ("a.json", "b.json")
    assert decisions["orphan-young.parquet"].rule == "CKPT-CLEAN-015"
    assert decisions["orphan-fresh.parquet"].rule == "CKPT-CLEAN-014"
    assert not decisions[".writing.parquet.tmp"].delete and ".orphan-old.parquet.crc" not in decisions
    skipped = plan_sidecars(
        entries, {}, cutoff_ms=cutoff, floor_ms=floor, cutoff_source="t", skipped_reason="x"
    )
    assert skipped.deletions == []
    with pytest.raises(InvalidOption):
        plan_sidecars(entries, {}, cutoff_ms=floor + 1, floor_ms=floor, cutoff_source="t")


TEMP_TOKEN = uuid.UUID("0f0e0d0c-0b0a-4908-8706-050403020100")
SIDECAR = "00000000000000000002.checkpoint.0000000001.0000000001.5b1c1f1e-2d3c-4b5a-8f9e-0a1b2c3d4e5f.parquet"


@pytest.mark.requirement("CKPT-CLEAN-027")
def test_old_sidecar_temporaries_are_deleted() -> None:
    """CKPT-CLEAN-027: a writer's temporary ``.<sidecar>.<uuid>.tmp`` modified before the sidecar cutoff
    goes, with its Hadoop checksum; one modified at or after it stays, and so does every temporary when
    sidecar collection is skipped. Each decision names the cutoff.

    Spec: CKPT-CLEAN-027
    "A cleaner MAY delete a file directly in `_delta_log/_sidecars/` whose name is a sidecar temporary
    name and that no remaining checkpoint references, together with its Hadoop checksum file, when its
    modification time is before the sidecar cutoff."
    """
    floor, cutoff = T0 - DAY, T0 - 3 * DAY
    old, young = sidecar_temp_name(SIDECAR, TEMP_TOKEN), sidecar_temp_name(SIDECAR, uuid.uuid4())
    fresh = sidecar_temp_name("part-00000.parquet", uuid.uuid4())
    entries = [
        FileInfo(old, 10, cutoff - 1),
        FileInfo(f".{old}.crc", 1, cutoff - 1),
        FileInfo(young, 10, cutoff),
        FileInfo(fresh, 10, floor + 1),
    ]
    plan = plan_sidecars(entries, {}, cutoff_ms=cutoff, floor_ms=floor, cutoff_source="test")
    decisions = {d.name.split("/", 1)[1]: d for d in plan.files}
    (deleted,) = plan.deletions
    assert deleted.name == f"_sidecars/{old}", [d.name for d in plan.deletions]
    assert deleted.companions == (f"_sidecars/.{old}.crc",), deleted
    assert (deleted.rule, deleted.label) == ("CKPT-CLEAN-027", "temporary"), deleted
    assert f"before the sidecar cutoff {format_ms(cutoff)}" in deleted.reason, deleted.reason
    for name in (young, fresh):
        kept = decisions[name]
        assert not kept.delete and kept.rule == "CKPT-CLEAN-027", kept
        assert f"not before the sidecar cutoff {format_ms(cutoff)}" in kept.reason, kept.reason
    assert f".{old}.crc" not in decisions, "a deleted temporary's checksum is its companion, not a decision"
    skipped = plan_sidecars(
        entries, {}, cutoff_ms=cutoff, floor_ms=floor, cutoff_source="t", skipped_reason="stopped"
    )
    assert skipped.deletions == [], [d.name for d in skipped.deletions]


@pytest.mark.requirement("CKPT-CLEAN-028")
def test_other_hidden_files_in_sidecars_are_kept() -> None:
    """CKPT-CLEAN-028: in ``_sidecars/``, an old hidden file that is not exactly a sidecar temporary is
    kept, whatever it looks like — the Hadoop ``.crc`` of a referenced sidecar, a temporary without a
    UUID, with an uppercase one, of a non-Parquet name, doubly hidden, a temporary's orphaned checksum —
    and a plan that would delete one fails the structural check.

    Spec: CKPT-CLEAN-028
    "… except the files of an abandoned writer staging directory as CKPT-CLEAN-025 allows and the writer
    temporaries in `_delta_log/_sidecars/` that CKPT-CLEAN-027 allows; a file in `_delta_log/_sidecars/`
    whose name begins with `.` is not a sidecar file."
    """
    floor, cutoff = T0 - DAY, T0 - 3 * DAY
    token = str(TEMP_TOKEN)
    hidden = [
        f".{SIDECAR}.crc",
        f".{SIDECAR}.tmp",
        f".{SIDECAR}.{token.upper()}.tmp",
        f".{SIDECAR}.names.{token}.tmp",
        f"..{SIDECAR}.{token}.tmp",
        f".{SIDECAR}.{token}.tmp.crc",
        f".{SIDECAR}.{token.replace('-', '')}.tmp",
        ".notes",
    ]
    entries = [FileInfo(SIDECAR, 10, cutoff - DAY)] + [FileInfo(n, 1, cutoff - DAY) for n in hidden]
    plan = plan_sidecars(entries, {SIDECAR: ["c.json"]}, cutoff_ms=cutoff, floor_ms=floor, cutoff_source="t")
    assert plan.deletions == [], [d.name for d in plan.deletions]
    decisions = {d.name.split("/", 1)[1]: d for d in plan.files}
    for name in hidden:
        assert decisions[name].rule == "CKPT-CLEAN-028" and not decisions[name].delete, decisions[name]
    assert decisions[f".{SIDECAR}.crc"].reason == f"Hadoop checksum of {SIDECAR}, kept with it"
    empty_log = LogPlan(0, [], None, None, None, False)
    assert only_log_files_are_deleted(empty_log, plan).ok
    wrong = SidecarPlan(
        cutoff, floor, "t", [replace(decisions[".notes"], kind=LogFileKind.SIDECAR, delete=True)]
    )
    check = only_log_files_are_deleted(empty_log, wrong)
    assert not check.ok and "_sidecars/.notes" in check.detail, check


@pytest.mark.requirement("CKPT-CLEAN-016")
def test_sidecar_window_shorter_than_a_day_is_refused(tmp_path: Path) -> None:
    """CKPT-CLEAN-016: "A cleaner configured with a sidecar cutoff later than the one-day floor MUST
    fail with INVALID_OPTION and MUST NOT delete any file" (checked before anything is read).

    Spec: CKPT-CLEAN-016
    "A cleaner configured with a sidecar cutoff later than the one-day floor MUST fail with
    `INVALID_OPTION` and MUST NOT delete any file."
    """
    log_dir = _log(tmp_path, 3)
    before = sorted(os.listdir(log_dir))
    with pytest.raises(InvalidOption) as info:
        cleanup(log_dir.parent, now_ms=T0 + 12 * HOUR, sidecar_retention_ms=12 * HOUR)
    assert info.value.code == "INVALID_OPTION" and info.value.rule == "CKPT-CLEAN-016"
    assert sorted(os.listdir(log_dir)) == before


def test_in_commit_timestamps_come_from_the_first_action(tmp_path: Path) -> None:
    """§18.1 step 2: from the version where ``delta.enableInCommitTimestamps`` took effect, "this
    specification uses the in-commit timestamps instead" (read from the first action of the commit)."""
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text('{"commitInfo":{"inCommitTimestamp":1234,"timestamp":99}}\n{"add":{"path":"a"}}\n')
    bad.write_text('{"add":{"path":"a"}}\n')
    assert read_in_commit_timestamp(STORAGE, Location.parse(good)) == 1234
    with pytest.raises(LogCorrupt):
        read_in_commit_timestamp(STORAGE, Location.parse(bad))


@pytest.mark.requirement("CKPT-CLEAN-022")
@pytest.mark.requirement("CKPT-CLEAN-002")
def test_deletion_batches_never_hold_a_checkpoint_with_a_commit_below_it(tmp_path: Path) -> None:
    """Spec: CKPT-CLEAN-022
    "A cleaner that deletes the history before *P* SHOULD delete every commit file of a version less
    than a checkpoint's version before it deletes that checkpoint's files."
    Spec: CKPT-CLEAN-002
    "A cleaner MUST NOT delete a commit file while keeping a commit file of a lower version, so that
    the remaining commits have no gap."

    An object store deletes a batch in its own order and may stop part-way, so the cleaner's
    batches (``cleaner._batches``) must keep every commit below a checkpoint in an earlier batch
    than any of that checkpoint's files, hold at most one commit each, and put a checkpoint's files
    in an earlier batch than its commit; one file a batch where the store has no batch delete."""
    from reference_impl.cleanup.cleaner import _batches

    log_dir = _log(
        tmp_path,
        10,
        {
            2: [part_checkpoint_name(2, 1, 2), part_checkpoint_name(2, 2, 2)],
            4: [classic_checkpoint_name(4)],
            8: [classic_checkpoint_name(8)],
        },
    )
    _, plan = _plan(log_dir, T0 + 10 * DAY + 12 * HOUR, 1)  # cutoff checkpoint 8
    deletions = plan.deletions
    batches = _batches(deletions, True)
    where = f"{log_dir}: batches {[[d.name for d in b] for b in batches]}"
    assert [d for b in batches for d in b] == deletions and 1 < len(batches) < len(deletions), where
    for index, batch in enumerate(batches):
        for checkpoint in (d.version for d in batch if d.kind.is_checkpoint and d.version is not None):
            later = [
                d.name
                for b in batches[index:]
                for d in b
                if d.kind is LogFileKind.COMMIT and d.version is not None and d.version < checkpoint
            ]
            assert not later, f"{where}: commits {later} are deleted with or after checkpoint {checkpoint}"
            own = [
                d.name
                for b in batches[: index + 1]
                for d in b
                if d.kind is LogFileKind.COMMIT and d.version == checkpoint
            ]
            assert not own, f"{where}: commit {own} is deleted with or before its checkpoint {checkpoint}"
        commits = [d.name for d in batch if d.kind is LogFileKind.COMMIT]
        assert len(commits) <= 1, f"{where}: commits {commits} in one batch could leave a gap"
    assert _batches(deletions, False) == [[d] for d in deletions], f"{log_dir}: one file a batch expected"
