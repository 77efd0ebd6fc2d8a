"""Two writers of one classic-named checkpoint at once, on local disk: the loser gets ``CHECKPOINT_CONFLICT``.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity (``CKPT-WRITE-006``, and the note under
``CKPT-WRITE-008`` on what the reference writer does), §21 Error codes.

The losing writer is ``delta-ckpt checkpoint`` run in this process (:func:`reference_impl.cli.main.main`)
with hooks (:class:`WinnerAt`) that, when it has listed the log and staged its files — for V2, when its
Spark tasks have written its sidecars at their final names and it has verified them — run a second ``delta-ckpt checkpoint`` of the same table with the same
arguments (the incremental case's without ``--incremental``) to the end: it takes the classic name first. The loser then exits 2 with one error line
``CHECKPOINT_CONFLICT`` naming the taken file and ``CKPT-WRITE-006``, and ``_delta_log`` holds
exactly what it held when the winner finished, less everything the loser had made by then (for V1 its
staging; for V2 the sidecars its tasks wrote and their name sets): the winner's files and
``_last_checkpoint`` untouched, and a base checkpoint's sidecars that an ``--incremental`` loser
listed again still there.

The V2 case is a classic-named V2 checkpoint written with ``--incremental``: its loser has published
new sidecars and lists the base's untouched ones again. A V2 classic checkpoint written in full
races on HDFS and S3, through the Python API, in ``test_store_crash.py``. (A classic file that was
already there when a writer listed the log — an earlier run's — is kept and the run succeeds:
``test_crash_points.py``, the re-run after a crash.) An empty or unreadable file at the classic name is
no lost race: ``CHECKPOINT_CORRUPT`` naming it, its size and ``CKPT-WRITE-008``, and ``_delta_log`` as
it was. A kept file whose bytes decode but which Spark fails to read (an I/O error in its job) is the
store's ``STORAGE_ERROR``, not a corrupt file. A store failing to create a V2 top-level file is a
``STORAGE_ERROR`` too, and the sidecars the writer published stay (the file may exist all the same).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession

from conformance.decode.files import Files, diff, files
from conformance.tables.builder import (
    add,
    commit_info,
    metadata,
    protocol,
    remove,
    schema,
    schema_field,
    v2_protocol,
    write_commit,
    write_log,
)
from reference_impl.cli.main import main
from reference_impl.hooks import PublicationPoint
from reference_impl.log.naming import classic_checkpoint_name, part_checkpoint_name
from reference_impl.progress import silent
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.writer import write_checkpoint
from spec.vocabulary import CheckpointSpec
from tests.reference_impl.write.test_bad_input import ERROR_LINE
from tests.support.listings import log_dir
from tests.support.stores import local_store_failing_publication, local_store_failing_reads


class WinnerAt:
    """Hooks of the losing writer: at ``point``, another ``delta-ckpt checkpoint`` of ``table`` with
    ``args`` runs to the end; what ``_delta_log`` held just before and after it is recorded."""

    def __init__(self, table: Path, args: tuple[str, ...], point: PublicationPoint) -> None:
        self.table, self.args, self.point = table, args, point
        self.status: int | None = None
        self.before: Files = {}
        self.after: Files = {}

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        if point is not self.point or self.status is not None:
            return
        self.before = files(log_dir(self.table))
        self.status = main(["checkpoint", str(self.table), *self.args, "--quiet"])
        self.after = files(log_dir(self.table))

    def prepare(self, df: DataFrame) -> DataFrame:
        return df


@dataclass(frozen=True)
class Case:
    id: str
    #: Builds the table at the path given.
    build: Callable[[Path, SparkSession], Path]
    args: tuple[str, ...]
    #: Where the winner runs: every file of the loser staged and checked (V1), its sidecars written and verified (V2).
    point: PublicationPoint
    #: The name the loser finds taken.
    taken: str
    #: The winner's arguments (default: the loser's).
    winner_args: tuple[str, ...] | None = None


def _plain_table(path: Path, spark: SparkSession) -> Path:
    """Protocol (1, 2), then 12 files in three commits."""
    first = [protocol(1, 2), metadata(schema(schema_field("id", "long")))]
    return write_log(path, [first, *[[add(f"f-{v}-{i}.parquet") for i in range(4)] for v in range(1, 4)]])


def _incremental_table(path: Path, spark: SparkSession) -> Path:
    """20 files at version 1 and a V2 checkpoint of it with sidecars of 5 actions (the base); then two
    files appended and one removed (versions 2, 3): an incremental checkpoint of version 3 lists the
    base's untouched sidecars again."""
    first = [
        v2_protocol(),
        metadata(schema(schema_field("id", "long")), configuration={"delta.checkpointPolicy": "v2"}),
    ]
    write_log(path, [first, [commit_info(), *[add(f"f-{i:02d}.parquet") for i in range(20)]]])
    options = CheckpointOptions(
        spec=CheckpointSpec.V2, incremental=True, actions_per_sidecar=5, progress=silent()
    )
    write_checkpoint(path, 1, options, spark=spark)
    write_commit(path, 2, [commit_info(), *[add(f"new-{i}.parquet") for i in range(2)]])
    write_commit(path, 3, [commit_info(), remove("f-07.parquet", deletion_timestamp=1_700_000_000_000)])
    return path


V2_CLASSIC = ("--spec", "v2", "--naming", "classic", "--actions-per-sidecar", "5")
CASES = [
    Case("v1-classic", _plain_table, ("--spec", "v1"), PublicationPoint.STAGED, classic_checkpoint_name(3)),
    Case(
        "multi-part",
        _plain_table,
        ("--spec", "v1", "--parts", "2"),
        PublicationPoint.STAGED,
        part_checkpoint_name(3, 1, 2),
    ),
    Case(
        "v2-classic-incremental",
        _incremental_table,
        (*V2_CLASSIC, "--incremental"),
        PublicationPoint.SIDECARS_PUBLISHED,
        classic_checkpoint_name(3),
        winner_args=V2_CLASSIC,  # in full: no scan of the base, a cheaper run
    ),
]  # fmt: skip


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-006", "CKPT-WRITE-008")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_losing_writer_reports_a_conflict_and_leaves_nothing(
    case: Case, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The writer whose create-if-absent lost: one ``CHECKPOINT_CONFLICT``, exit 2, nothing of it left.

    Spec: CKPT-WRITE-006
    "A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader
    can see it partially written, and MUST NOT publish a UUID-named top-level file under a name that
    an existing file already has"

    Spec: CKPT-WRITE-008
    "A writer MAY overwrite an existing classic checkpoint or multi-part part of the same version
    with a file that describes the same table state, or keep the existing file instead of writing
    its own."
    """
    table = case.build(tmp_path / "table", spark)
    start = files(log_dir(table))
    winner = WinnerAt(table, case.winner_args or case.args, case.point)
    capsys.readouterr()
    status = main(["checkpoint", str(table), *case.args, "--quiet"], hooks=winner)
    stderr = capsys.readouterr().err
    assert winner.status == 0, (
        f"{case.id}: the winner never ran or failed ({winner.status}): {stderr[-1500:]}"
    )
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1, f"{case.id}: exit status {status}, stderr {lines}"
    match = ERROR_LINE.match(lines[0])
    assert match is not None, f"{case.id}: not one 'CODE: message [file: …] [rule: …]' line: {lines[0]!r}"
    taken = str(log_dir(table) / case.taken)
    assert (match["code"], match["file"], match["rule"]) == (
        "CHECKPOINT_CONFLICT",
        taken,
        "CKPT-WRITE-006",
    ), f"{case.id}: {lines[0]!r}"

    # What the loser had made when the winner started: for V1 its staging; for V2 its sidecars, which its
    # Spark tasks created at their final names (no staging at all).
    own = set(winner.before) - set(start)
    own_sidecars = sorted(n for n in own if n.startswith("_sidecars/") and n.endswith(".parquet"))
    staged = sorted(n for n in own if n.startswith(".delta-ckpt-staging-"))
    if case.point is PublicationPoint.SIDECARS_PUBLISHED:
        assert own_sidecars and not staged, (
            f"{case.id}: before the winner ran, the loser had written sidecars {own_sidecars}, staged {staged}"
        )
    else:
        assert staged, f"{case.id}: the loser staged nothing: {sorted(own)}"
    left = files(log_dir(table))
    expected = {name: stat for name, stat in winner.after.items() if name not in own}
    assert left == expected, f"{case.id}: _delta_log after the loser, against the winner's: " + ", ".join(
        [f"left {n}" for n in sorted(set(left) - set(expected))]
        + [f"gone {n}" for n in sorted(set(expected) - set(left))]
        + [f"changed {n}" for n in sorted(set(left) & set(expected)) if left[n] != expected[n]]
    )
    if case.id == "v2-classic-incremental":
        base = {n for n in start if n.startswith("_sidecars/") and n.endswith(".parquet")}
        new = {n for n in winner.after if n.startswith("_sidecars/") and n.endswith(".parquet")} - base - own
        # The winner wrote every file action in new sidecars; the loser fewer: it listed the other base
        # sidecars again (and, above, must not have deleted them).
        assert 0 < len(own_sidecars) < len(new) and len(base) >= 2, (
            f"{case.id}: base sidecars {sorted(base)}, the winner's new {sorted(new)}, the loser's {own_sidecars}"
        )


class FailsWhenPreparing:
    """Hooks of a test that fails (``pytest.fail``) when the writer hands them the rows it is about to
    stage (``prepare``: before any Spark job of the write)."""

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        return None

    def prepare(self, df: DataFrame) -> DataFrame:
        pytest.fail("the test's own failure in prepare")


@pytest.mark.spark
def test_a_hooks_pytest_outcome_leaves_main_as_it_was_raised(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test's hook that fails (``pytest.fail``, a ``BaseException``) made ``main`` report it as the
    command's bug: ``INTERNAL_ERROR``, exit 2, the test's failure lost. The hooks are the caller's, so
    their outcome leaves ``main`` as it was raised, unreported, and the writer's staging is still gone."""
    table = _plain_table(tmp_path / "table", spark)
    start = files(log_dir(table))
    capsys.readouterr()
    with pytest.raises(pytest.fail.Exception, match="the test's own failure in prepare"):
        main(["checkpoint", str(table), "--spec", "v1", "--quiet"], hooks=FailsWhenPreparing())
    stderr = capsys.readouterr().err
    assert "INTERNAL_ERROR" not in stderr, f"the hook's failure was reported as the command's: {stderr!r}"
    left = files(log_dir(table))
    assert left == start, f"_delta_log changed: {diff(start, left)}"


def _v2_table(path: Path, spark: SparkSession) -> Path:
    """A V2 table (``delta.checkpointPolicy=v2``) with 12 files in three commits."""
    first = [
        v2_protocol(),
        metadata(schema(schema_field("id", "long")), configuration={"delta.checkpointPolicy": "v2"}),
    ]
    return write_log(path, [first, *[[add(f"f-{v}-{i}.parquet") for i in range(4)] for v in range(1, 4)]])


@dataclass(frozen=True)
class Unusable:
    id: str
    build: Callable[[Path, SparkSession], Path]
    args: tuple[str, ...]
    #: The bytes of the file found at the classic name of version 3, there before the writer lists the log.
    content: bytes
    #: What the error message says of it.
    says: str


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


#: Parquet that decodes but holds no checkpoint's columns: ``remove`` is a string, not an action.
NOT_A_CHECKPOINT = _parquet_bytes(pa.table({"remove": ["f-1-0.parquet"]}))

UNUSABLE = [
    Unusable("v1-empty", _plain_table, ("--spec", "v1"), b"", "(0 bytes) but it is empty"),
    Unusable(
        "v2-not-parquet",
        _v2_table,
        V2_CLASSIC,
        b"not a parquet file",
        "(18 bytes) but it cannot be read as Parquet",
    ),
    Unusable(
        "v1-parquet-not-a-checkpoint",
        _plain_table,
        ("--spec", "v1"),
        NOT_A_CHECKPOINT,
        f"({len(NOT_A_CHECKPOINT)} bytes) but it cannot be read as a checkpoint",
    ),
]  # fmt: skip


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-008")
@pytest.mark.parametrize("case", UNUSABLE, ids=lambda c: c.id)
def test_an_unusable_file_at_the_classic_name_is_named_not_taken_for_a_lost_race(
    case: Unusable, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty or unreadable file already at the classic name: ``CHECKPOINT_CORRUPT`` naming it and its
    size (not ``CHECKPOINT_CONFLICT``: no writer won a race), exit 2, ``_delta_log`` as it was — the file
    neither kept as the checkpoint nor replaced, the V2 writer's sidecars deleted.

    Spec: CKPT-WRITE-008
    "A writer MAY overwrite an existing classic checkpoint or multi-part part of the same version
    with a file that describes the same table state, or keep the existing file instead of writing
    its own."
    """
    table = case.build(tmp_path / "table", spark)
    taken = log_dir(table) / classic_checkpoint_name(3)
    taken.write_bytes(case.content)
    start = files(log_dir(table))
    capsys.readouterr()
    status = main(["checkpoint", str(table), *case.args, "--quiet"])
    # pyspark's own logger prints an analysis error's query context as one JSON line (not the CLI's)
    lines = [
        line for line in capsys.readouterr().err.splitlines() if line.strip() and not line.startswith('{"ts"')
    ]
    assert status == 2 and len(lines) == 1, f"{case.id}: exit status {status}, stderr {lines}"
    match = ERROR_LINE.match(lines[0])
    assert match is not None, f"{case.id}: not one 'CODE: message [file: …] [rule: …]' line: {lines[0]!r}"
    assert (match["code"], match["file"], match["rule"]) == (
        "CHECKPOINT_CORRUPT",
        str(taken),
        "CKPT-WRITE-008",
    ), f"{case.id}: {lines[0]!r}"
    assert f"{taken.name} exists {case.says}" in match["message"], f"{case.id}: {lines[0]!r}"
    left = files(log_dir(table))
    assert left == start, f"{case.id}: _delta_log changed: {diff(start, left)}"
    if case.args == V2_CLASSIC:
        assert "deleted the 3 sidecar(s) this writer published" in match["message"], (
            f"{case.id}: {lines[0]!r}"
        )


class FailReadsAt:
    """Hooks that, at ``point``, make the store's reads of the file ``name`` fail (``failing``:
    :func:`tests.support.stores.local_store_failing_reads`)."""

    def __init__(self, point: PublicationPoint, name: str, failing: set[str]) -> None:
        self.point, self.name, self.failing = point, name, failing

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        if point is self.point:
            self.failing.add(self.name)

    def prepare(self, df: DataFrame) -> DataFrame:
        return df


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-008")
def test_a_store_failing_to_read_the_kept_file_is_a_storage_error_naming_it(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier run's checkpoint at the classic name, which the writer keeps, and a store that fails
    to read it once the writer has staged its own: ``STORAGE_ERROR`` naming the file (not
    ``CHECKPOINT_CORRUPT``: nothing says the file is bad), exit 2, ``_delta_log`` as it was. (Spark read
    the file past the store before: the run succeeded without asking the store; on S3 the store's
    failure met in Spark's read was ``CHECKPOINT_CORRUPT``.)

    Spec: CKPT-WRITE-008
    "A writer MAY overwrite an existing classic checkpoint or multi-part part of the same version
    with a file that describes the same table state, or keep the existing file instead of writing
    its own."
    """
    table = _plain_table(tmp_path / "table", spark)
    write_checkpoint(table, 3, CheckpointOptions(spec=CheckpointSpec.V1, progress=silent()), spark=spark)
    taken = log_dir(table) / classic_checkpoint_name(3)
    failing = local_store_failing_reads(monkeypatch)
    start = files(log_dir(table))
    capsys.readouterr()
    status = main(
        ["checkpoint", str(table), "--spec", "v1", "--quiet"],
        hooks=FailReadsAt(PublicationPoint.STAGED, taken.name, failing),
    )
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1, f"{taken}: exit status {status}, stderr {lines}"
    match = ERROR_LINE.match(lines[0])
    assert match is not None, f"{taken}: not one 'CODE: message [file: …]' line: {lines[0]!r}"
    assert (match["code"], match["file"]) == ("STORAGE_ERROR", str(taken)), f"{taken}: {lines[0]!r}"
    assert "503" in match["message"], f"{taken}: the store's own message is not in {lines[0]!r}"
    left = files(log_dir(table))
    assert left == start, f"{taken}: _delta_log changed: {diff(start, left)}"


class StaleChecksumAt:
    """Hooks that, at ``point``, put a Hadoop checksum file (``.<name>.crc``) that does not match ``taken``
    beside it: Hadoop's local file system (Spark's ``file:`` reads, delta-spark's) then refuses the file's
    bytes with a ``ChecksumException``, although they decode."""

    def __init__(self, point: PublicationPoint, taken: Path) -> None:
        self.point, self.taken = point, taken
        self.crc = taken.with_name(f".{taken.name}.crc")

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        if point is self.point:
            # magic, bytes per checksum (512), one CRC32 that no 512-byte chunk of a Parquet file has
            self.crc.write_bytes(b"crc\x00" + (512).to_bytes(4, "big") + (1).to_bytes(4, "big"))

    def prepare(self, df: DataFrame) -> DataFrame:
        return df


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-008", "CKPT-READ-026")
def test_a_kept_file_that_fails_its_hadoop_checksum_is_unusable_and_not_replaced(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An earlier run's checkpoint at the classic name, which the writer keeps, gets a Hadoop checksum file
    that it fails once the writer has staged its own: every row group still decodes, but a reader that
    verifies the checksum cannot read the file and calls it ``CHECKPOINT_CORRUPT`` (CKPT-READ-026), so
    the writer does too, naming the file and its ``.crc``, exit 2, ``_delta_log`` as it was (the stale
    ``.crc`` aside): the file is not replaced and no ``_last_checkpoint`` points at it.

    Spec: CKPT-WRITE-008
    "A writer MAY overwrite an existing classic checkpoint or multi-part part of the same version
    with a file that describes the same table state, or keep the existing file instead of writing
    its own."

    Spec: CKPT-READ-026
    "a reader that reads the file through a file system that verifies such checksum files MUST NOT let
    the mismatch surface after it has chosen the checkpoint as anything but `CHECKPOINT_CORRUPT` naming
    the file."
    """
    table = _plain_table(tmp_path / "table", spark)
    write_checkpoint(table, 3, CheckpointOptions(spec=CheckpointSpec.V1, progress=silent()), spark=spark)
    taken = log_dir(table) / classic_checkpoint_name(3)
    hooks = StaleChecksumAt(PublicationPoint.STAGED, taken)
    start = files(log_dir(table))
    capsys.readouterr()
    status = main(["checkpoint", str(table), "--spec", "v1", "--quiet"], hooks=hooks)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert hooks.crc.exists(), f"{taken}: the writer never reached {hooks.point}: stderr {lines}"
    assert status == 2 and len(lines) == 1, f"{taken}: exit status {status}, stderr {lines}"
    match = ERROR_LINE.match(lines[0])
    assert match is not None, f"{taken}: not one 'CODE: message [file: …]' line: {lines[0]!r}"
    assert (match["code"], match["file"]) == ("CHECKPOINT_CORRUPT", str(taken)), f"{taken}: {lines[0]!r}"
    assert hooks.crc.name in match["message"], f"{taken}: the checksum file is not named in {lines[0]!r}"
    hooks.crc.unlink()
    left = files(log_dir(table))
    assert left == start, f"{taken}: _delta_log changed: {diff(start, left)}"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-004")
def test_a_store_failing_to_create_the_top_level_file_leaves_the_sidecars_and_says_so(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A V2 classic checkpoint whose top-level file the store fails to create (503): ``STORAGE_ERROR``
    naming the file, exit 2. The store may have created it all the same, so the writer's 3 sidecars are
    not deleted as after a lost race: they stay, and the error says so and who collects them.

    Spec: CKPT-WRITE-004
    "A writer MUST finish writing every sidecar file before the top-level file that references it becomes
    visible, and every file of a checkpoint before it updates `_last_checkpoint` to describe that checkpoint."
    """
    table = _v2_table(tmp_path / "table", spark)
    taken = log_dir(table) / classic_checkpoint_name(3)
    local_store_failing_publication(monkeypatch, taken.name)
    start = files(log_dir(table))
    capsys.readouterr()
    status = main(["checkpoint", str(table), *V2_CLASSIC, "--quiet"])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1, f"{taken}: exit status {status}, stderr {lines}"
    match = ERROR_LINE.match(lines[0])
    assert match is not None, f"{taken}: not one 'CODE: message [file: …]' line: {lines[0]!r}"
    assert (match["code"], match["file"]) == ("STORAGE_ERROR", str(taken)), f"{taken}: {lines[0]!r}"
    says = "the 3 sidecar(s) this writer published stay: if the top-level file was not created"
    assert says in match["message"] and "(CKPT-CLEAN-017)" in match["message"], f"{taken}: {lines[0]!r}"
    left = files(log_dir(table))
    new = sorted(set(left) - set(start))
    sidecars = [n for n in new if n.startswith("_sidecars/") and n.endswith(".parquet")]
    assert len(sidecars) == 3 and taken.name not in left, f"{taken}: new in _delta_log: {new}"
