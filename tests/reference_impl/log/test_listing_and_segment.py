"""``reference_impl.log.segment``: which checkpoint and commits reconstruct a version, on fake logs.

Pure Python (no Spark). Each test lays out a ``_delta_log`` of small placeholder files (content is
irrelevant to the choice, size > 0 unless the test is about 0-byte files) and checks the listing,
the chosen segment, the fallbacks and the state of ``_last_checkpoint``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from reference_impl.errors import LogGap, TableNotFound, VersionNotFound
from reference_impl.log.last_checkpoint import LastCheckpoint, LastCheckpointV2, read_last_checkpoint
from reference_impl.log.listing import LogListing, list_log
from reference_impl.log.naming import classic_checkpoint_name, commit_name, part_checkpoint_name
from reference_impl.log.segment import HintState, LogSegment, segments_newest_first
from reference_impl.storage import Location
from reference_impl.storage.local import LocalStorage
from spec.vocabulary import LogFileKind

UUID_A = "00000000-0000-4000-8000-00000000000a"
UUID_B = "00000000-0000-4000-8000-00000000000b"

STORAGE = LocalStorage()


def uuid_name(version: int, token: str = UUID_A, fmt: str = "json") -> str:
    return f"{version:020d}.checkpoint.{token}.{fmt}"


def make_log(tmp_path: Path, names: Iterable[str], *, empty: Iterable[str] = ()) -> Path:
    """A ``_delta_log`` holding ``names`` (one placeholder byte each) and 0-byte ``empty`` files."""
    log_dir = tmp_path / "_delta_log"
    log_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        (log_dir / name).write_bytes(b"x")
    for name in empty:
        (log_dir / name).write_bytes(b"")
    return log_dir


def commits(first: int, last: int) -> list[str]:
    return [commit_name(v) for v in range(first, last + 1)]


def write_hint(log_dir: Path, hint: LastCheckpoint | str) -> None:
    text = hint if isinstance(hint, str) else hint.to_json_text()
    (log_dir / "_last_checkpoint").write_text(text)


def first_segment(log_dir: Path, version: int | None = None) -> LogSegment:
    listing = list_log(STORAGE, Location.parse(log_dir))
    hint, why = read_last_checkpoint(STORAGE, Location.parse(log_dir))
    return next(segments_newest_first(listing, hint, hint_error=why, version=version))


def all_segments(log_dir: Path, version: int | None = None) -> list[LogSegment]:
    listing = list_log(STORAGE, Location.parse(log_dir))
    hint, why = read_last_checkpoint(STORAGE, Location.parse(log_dir))
    return list(segments_newest_first(listing, hint, hint_error=why, version=version))


def chosen_name(segment: LogSegment) -> str | None:
    return segment.checkpoint.name if segment.checkpoint else None


# -- choosing among checkpoints of one version ----------------------------------------------------


@pytest.mark.requirement("CKPT-READ-004")
def test_uuid_named_preferred_over_multipart_and_classic(tmp_path: Path) -> None:
    """At one version: UUID-named V2 > multi-part > classic (delta-spark's ``CheckpointInstance`` order).

    Spec: CKPT-READ-004
    "A reader SHOULD use the newest complete checkpoint not newer than the requested version, and
    among complete checkpoints of that same version SHOULD prefer a UUID-named one … over a
    multi-part one … over a classic-named one."
    """
    parts = [part_checkpoint_name(5, i, 2) for i in (1, 2)]
    log_dir = make_log(tmp_path, [*commits(5, 6), classic_checkpoint_name(5), *parts, uuid_name(5)])
    segment = first_segment(log_dir)
    assert chosen_name(segment) == uuid_name(5), f"chose {chosen_name(segment)} in {log_dir}"
    (log_dir / uuid_name(5)).unlink()
    segment = first_segment(log_dir)
    assert segment.checkpoint is not None and segment.checkpoint.kind is LogFileKind.CHECKPOINT_PART
    assert [f.name for f in segment.checkpoint.files] == parts
    for name in parts:
        (log_dir / name).unlink()
    assert chosen_name(first_segment(log_dir)) == classic_checkpoint_name(5)


def test_multipart_with_more_parts_wins(tmp_path: Path) -> None:
    """Two complete multi-part checkpoints of one version: the one with more parts is used."""
    two = [part_checkpoint_name(5, i, 2) for i in (1, 2)]
    three = [part_checkpoint_name(5, i, 3) for i in (1, 2, 3)]
    log_dir = make_log(tmp_path, [*commits(5, 5), *two, *three])
    segment = first_segment(log_dir)
    assert segment.checkpoint is not None and segment.checkpoint.num_parts == 3, segment.checkpoint


@pytest.mark.requirement("CKPT-READ-004", "CKPT-READ-005")
def test_uuid_tie_break_by_file_name(tmp_path: Path) -> None:
    """Two UUID-named checkpoints of one version: the greater file name wins, whatever the format.

    Spec: CKPT-READ-004
    "A reader SHOULD use the newest complete checkpoint not newer than the requested version, and
    among complete checkpoints of that same version SHOULD prefer a UUID-named one (the greatest
    file name in byte order if there are several) over a multi-part one (the one with most parts if
    there are several) over a classic-named one."
    Spec: CKPT-READ-005
    "A reader MUST choose the same checkpoint every time it reads the same version from the same set
    of files."
    """
    log_dir = make_log(
        tmp_path, [*commits(5, 5), uuid_name(5, UUID_B, "json"), uuid_name(5, UUID_A, "parquet")]
    )
    assert chosen_name(first_segment(log_dir)) == uuid_name(5, UUID_B, "json")
    assert chosen_name(first_segment(log_dir)) == uuid_name(5, UUID_B, "json"), "the choice must be stable"


def test_newest_checkpoint_wins_over_preferred_kind(tmp_path: Path) -> None:
    """A newer classic checkpoint beats an older UUID-named one: version first, kind second."""
    log_dir = make_log(tmp_path, [*commits(3, 8), uuid_name(3), classic_checkpoint_name(6)])
    segment = first_segment(log_dir)
    assert chosen_name(segment) == classic_checkpoint_name(6)
    assert [v for v, _ in segment.commits] == [7, 8]


# -- what the listing ignores ---------------------------------------------------------------------


@pytest.mark.requirement("CKPT-PART-006")
def test_incomplete_multipart_is_ignored(tmp_path: Path) -> None:
    """Parts 1 and 3 of 3 are not a checkpoint: the older classic one is used and the parts are reported.

    Spec: CKPT-PART-006
    "A reader MUST NOT use a multi-part checkpoint of version `n` with part count `p` unless
    non-empty files for all parts `1..p` of `(n, p)` are present."
    """
    parts = [part_checkpoint_name(6, 1, 3), part_checkpoint_name(6, 3, 3)]
    log_dir = make_log(tmp_path, [*commits(3, 7), classic_checkpoint_name(3), *parts])
    listing = list_log(STORAGE, Location.parse(log_dir))
    assert listing.incomplete == tuple(sorted(parts))
    segment = first_segment(log_dir)
    assert chosen_name(segment) == classic_checkpoint_name(3)
    assert [v for v, _ in segment.commits] == [4, 5, 6, 7]


@pytest.mark.requirement("CKPT-PART-006")
def test_part_count_groups_are_judged_separately(tmp_path: Path) -> None:
    """A complete 2-part set is used although an incomplete 3-part set of the same version exists.

    Spec: CKPT-PART-006
    "A reader MUST NOT use a multi-part checkpoint of version `n` with part count `p` unless
    non-empty files for all parts `1..p` of `(n, p)` are present, judging each part count found at
    version `n` separately."
    """
    complete = [part_checkpoint_name(4, i, 2) for i in (1, 2)]
    log_dir = make_log(tmp_path, [*commits(4, 4), *complete, part_checkpoint_name(4, 1, 3)])
    segment = first_segment(log_dir)
    assert segment.checkpoint is not None and segment.checkpoint.num_parts == 2


@pytest.mark.requirement("CKPT-PART-008")
def test_one_of_one_part_is_a_complete_checkpoint(tmp_path: Path) -> None:
    """``n.checkpoint.0000000001.0000000001.parquet`` is accepted as a complete single-file checkpoint.

    Spec: CKPT-PART-008
    "A reader SHOULD accept a file named `<n>.checkpoint.0000000001.0000000001.parquet` as a
    complete single-file V1 checkpoint of version `n`."
    """
    log_dir = make_log(tmp_path, [*commits(4, 5), part_checkpoint_name(4, 1, 1)])
    assert chosen_name(first_segment(log_dir)) == part_checkpoint_name(4, 1, 1)


@pytest.mark.requirement("CKPT-READ-003")
def test_zero_byte_checkpoint_is_ignored(tmp_path: Path) -> None:
    """A 0-byte checkpoint file does not exist for the reader (and a 0-byte part breaks its set).

    Spec: CKPT-READ-003
    "A reader MUST treat a checkpoint file of zero bytes as if it did not exist."
    """
    log_dir = make_log(
        tmp_path,
        [*commits(2, 9), classic_checkpoint_name(2), part_checkpoint_name(8, 1, 2)],
        empty=[classic_checkpoint_name(6), uuid_name(7), part_checkpoint_name(8, 2, 2)],
    )
    listing = list_log(STORAGE, Location.parse(log_dir))
    assert [c.version for c in listing.checkpoints] == [2]
    assert {classic_checkpoint_name(6), uuid_name(7), part_checkpoint_name(8, 2, 2)} <= set(listing.ignored)
    assert chosen_name(first_segment(log_dir)) == classic_checkpoint_name(2)


@pytest.mark.requirement("CKPT-NAME-007")
def test_hidden_and_foreign_files_are_ignored(tmp_path: Path) -> None:
    """``.``-prefixed temp and ``.crc`` files, and names with extra suffixes, are never checkpoints or commits.

    Spec: CKPT-NAME-007
    "A reader MUST match checkpoint patterns against the whole file name and MUST ignore every file
    in `_delta_log/` whose name matches no pattern it recognises …"
    """
    noise = [
        f".{classic_checkpoint_name(9)}.crc",
        f".{classic_checkpoint_name(9)}.{UUID_A}.tmp",
        f".{commit_name(10)}.crc",
        f"{classic_checkpoint_name(9)}.tmp",
        f".{commit_name(10)}",
        "README",
    ]
    log_dir = make_log(tmp_path, [*commits(0, 9), classic_checkpoint_name(5), *noise])
    listing = list_log(STORAGE, Location.parse(log_dir))
    assert [c.version for c in listing.checkpoints] == [5]
    assert sorted(listing.commits) == list(range(10))
    assert set(noise) <= set(listing.ignored)
    segment = first_segment(log_dir)
    assert chosen_name(segment) == classic_checkpoint_name(5) and segment.version == 9


# -- commits after the checkpoint ----------------------------------------------------------------


@pytest.mark.requirement("CKPT-READ-006")
def test_gap_after_the_checkpoint_is_log_gap(tmp_path: Path) -> None:
    """Commit 7 missing after checkpoint 5 (and no commit 0): ``LogGap`` naming the missing version.

    Spec: CKPT-READ-006
    "A reader MUST NOT use the commits after a checkpoint unless every commit from the checkpoint's
    version plus one through the requested version is present, and when no checkpoint and commit
    chain without a gap reaches the requested version it MUST fail with `LOG_GAP`."
    """
    log_dir = make_log(tmp_path, [commit_name(5), commit_name(6), commit_name(8), classic_checkpoint_name(5)])
    with pytest.raises(LogGap) as info:
        first_segment(log_dir)
    assert info.value.code == "LOG_GAP"
    assert "version 7 is missing" in info.value.message, info.value.message
    assert info.value.path == str(log_dir)


def test_gap_before_the_checkpoint_is_harmless(tmp_path: Path) -> None:
    """Missing commits before the newest checkpoint do not matter: only ``cp+1..V`` must be contiguous."""
    names = [*commits(2, 9), classic_checkpoint_name(3), classic_checkpoint_name(8)]
    names.remove(commit_name(5))
    log_dir = make_log(tmp_path, names)
    segment = first_segment(log_dir)
    assert chosen_name(segment) == classic_checkpoint_name(8) and [v for v, _ in segment.commits] == [9]
    segments = all_segments(log_dir)
    assert [chosen_name(s) for s in segments] == [classic_checkpoint_name(8)], (
        "checkpoint 3 cannot reach version 9 across the gap at 5, and commit 0 is gone"
    )


def test_segments_newest_first_lists_the_fallbacks(tmp_path: Path) -> None:
    """The segment order is newest checkpoint, older checkpoints, then commits from 0 (delta-spark's fallback)."""
    log_dir = make_log(tmp_path, [*commits(0, 9), classic_checkpoint_name(4), uuid_name(8)])
    segments = all_segments(log_dir)
    assert [chosen_name(s) for s in segments] == [uuid_name(8), classic_checkpoint_name(4), None]
    assert [v for v, _ in segments[1].commits] == [5, 6, 7, 8, 9]
    assert [v for v, _ in segments[2].commits] == list(range(10))
    assert all(s.version == 9 for s in segments)


def test_no_checkpoint_needs_commit_zero(tmp_path: Path) -> None:
    """Without a checkpoint the commits must start at 0; otherwise ``LogGap``."""
    log_dir = make_log(tmp_path, commits(0, 3))
    segment = first_segment(log_dir)
    assert segment.checkpoint is None and [v for v, _ in segment.commits] == [0, 1, 2, 3]
    assert segment.found_by == "commits"
    (log_dir / commit_name(0)).unlink()
    with pytest.raises(LogGap):
        first_segment(log_dir)


# -- versions -----------------------------------------------------------------------------------


def test_time_travel_uses_the_newest_checkpoint_at_or_below(tmp_path: Path) -> None:
    """For version 6 the checkpoint at 4 is used (8 is newer than 6); for 8, checkpoint 8 with no commits."""
    log_dir = make_log(tmp_path, [*commits(4, 9), classic_checkpoint_name(4), classic_checkpoint_name(8)])
    six = first_segment(log_dir, version=6)
    assert chosen_name(six) == classic_checkpoint_name(4) and [v for v, _ in six.commits] == [5, 6]
    eight = first_segment(log_dir, version=8)
    assert chosen_name(eight) == classic_checkpoint_name(8) and eight.commits == ()


@pytest.mark.requirement("CKPT-READ-008")
def test_version_not_found(tmp_path: Path) -> None:
    """Beyond the newest commit, or below the oldest reconstructable version: ``VERSION_NOT_FOUND``.

    Spec: CKPT-READ-008
    "A reader asked for a version newer than the newest commit, or older than the oldest version it
    can reconstruct from the remaining files, MUST fail with `VERSION_NOT_FOUND`."
    """
    log_dir = make_log(tmp_path, [*commits(4, 6), classic_checkpoint_name(4)])
    for version in (7, 3, -1):
        with pytest.raises(VersionNotFound) as info:
            first_segment(log_dir, version=version)
        assert info.value.code == "VERSION_NOT_FOUND", version
        assert info.value.path == str(log_dir)


@pytest.mark.requirement("CKPT-READ-009")
def test_empty_log_is_table_not_found(tmp_path: Path) -> None:
    """A ``_delta_log`` without commits or checkpoints is ``TABLE_NOT_FOUND``.

    Spec: CKPT-READ-009
    "An implementation asked to operate on a directory that has no `_delta_log/` subdirectory, or
    whose `_delta_log/` holds no commit file and no checkpoint, MUST fail with `TABLE_NOT_FOUND`."
    """
    log_dir = make_log(tmp_path, ["README"])
    with pytest.raises(TableNotFound):
        first_segment(log_dir)


# -- the _last_checkpoint hint -------------------------------------------------------------------


def hint_for(version: int, *, parts: int | None = None, v2_path: str | None = None) -> LastCheckpoint:
    v2 = LastCheckpointV2(path=v2_path, size_in_bytes=1, modification_time=1) if v2_path else None
    return LastCheckpoint(version=version, size=3, parts=parts, v2_checkpoint=v2)


@pytest.fixture
def two_checkpoints(tmp_path: Path) -> Path:
    """Commits 0..9, a classic checkpoint at 4 and a UUID-named one at 8."""
    return make_log(tmp_path, [*commits(0, 9), classic_checkpoint_name(4), uuid_name(8)])


@pytest.mark.parametrize(
    ("hint", "state"),
    [
        (None, HintState.MISSING),
        (hint_for(8, v2_path=uuid_name(8)), HintState.USED),
        (hint_for(4), HintState.STALE),
        (hint_for(6), HintState.DANGLING),
        (hint_for(8), HintState.DANGLING),  # names a classic checkpoint at 8, which does not exist
        (hint_for(99), HintState.AHEAD),
        ("", HintState.CORRUPT),
        ('{"version":8,"si', HintState.CORRUPT),
        ('{"version":8,"size":3,"checksum":"0123456789abcdef0123456789abcdef"}', HintState.CORRUPT),
    ],
)
@pytest.mark.requirement("CKPT-READ-016")
def test_hint_states(two_checkpoints: Path, hint: LastCheckpoint | str | None, state: HintState) -> None:
    """Whatever the hint says, the newest complete checkpoint is chosen; the hint's state is reported.

    Spec: CKPT-READ-016
    "A reader MUST report the same table state for every version whether `_last_checkpoint` is
    absent, describes the newest checkpoint, is stale, names a version beyond the log, names a
    missing checkpoint or is corrupt …"
    """
    if hint is not None:
        write_hint(two_checkpoints, hint)
    segment = first_segment(two_checkpoints)
    assert segment.hint.state is state, f"hint {hint!r}: {segment.hint}"
    assert chosen_name(segment) == uuid_name(8), f"hint {hint!r} changed the choice"
    assert [v for v, _ in segment.commits] == [9]
    assert segment.found_by == ("hint" if state is HintState.USED else "listing")


def test_corrupt_hint_says_why(two_checkpoints: Path) -> None:
    """A corrupt hint's detail carries the parse error (here: the checksum mismatch)."""
    document = {"version": 8, "size": 3, "checksum": "0" * 32}
    write_hint(two_checkpoints, json.dumps(document))
    segment = first_segment(two_checkpoints)
    assert segment.hint.state is HintState.CORRUPT
    assert segment.hint.detail is not None and "checksum mismatch" in segment.hint.detail


@pytest.mark.requirement("CKPT-READ-020")
def test_hint_with_parts_1_names_a_classic_checkpoint(two_checkpoints: Path) -> None:
    """``parts: 1`` in the hint still describes a classic checkpoint (it is not an error).

    Spec: CKPT-READ-020
    "A reader MUST NOT fail because the `parts` member of `_last_checkpoint` is 1 or otherwise
    disagrees with the checkpoint files in the listing."
    """
    write_hint(two_checkpoints, hint_for(4, parts=1))
    segment = first_segment(two_checkpoints, version=5)
    assert segment.hint.state is HintState.USED and chosen_name(segment) == classic_checkpoint_name(4)
    write_hint(two_checkpoints, hint_for(4, parts=3))
    segment = first_segment(two_checkpoints, version=5)
    assert segment.hint.state is HintState.DANGLING and chosen_name(segment) == classic_checkpoint_name(4)


def test_hint_below_time_travel_target_is_not_applicable(two_checkpoints: Path) -> None:
    """Time travel to a version older than the hint's: the hint plays no role."""
    write_hint(two_checkpoints, hint_for(8, v2_path=uuid_name(8)))
    segment = first_segment(two_checkpoints, version=5)
    assert segment.hint.state is HintState.NOT_APPLICABLE
    assert chosen_name(segment) == classic_checkpoint_name(4)


def test_hint_names_the_uuid_file_not_the_compat_copy(tmp_path: Path) -> None:
    """With a UUID-named checkpoint and its classic compatibility copy, the UUID one is used, as the hint says."""
    log_dir = make_log(tmp_path, [*commits(8, 9), classic_checkpoint_name(8), uuid_name(8)])
    write_hint(log_dir, hint_for(8, v2_path=uuid_name(8)))
    segment = first_segment(log_dir)
    assert chosen_name(segment) == uuid_name(8) and segment.hint.state is HintState.USED


def test_listing_shape(tmp_path: Path) -> None:
    """``list_log`` classifies commits, crc files, checkpoints and ``_last_checkpoint``."""
    log_dir = make_log(tmp_path, [*commits(0, 2), "00000000000000000002.crc", classic_checkpoint_name(2)])
    write_hint(log_dir, hint_for(2))
    listing: LogListing = list_log(STORAGE, Location.parse(log_dir))
    assert sorted(listing.commits) == [0, 1, 2]
    assert sorted(listing.crcs) == [2]
    assert [c.name for c in listing.checkpoints] == [classic_checkpoint_name(2)]
    assert listing.last_checkpoint_file is not None and listing.latest_version == 2
