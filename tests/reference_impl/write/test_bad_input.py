"""Bad input: one clear error (code, file, rule) with exit status 2, and nothing written or deleted.

Every case runs the ``delta-ckpt checkpoint`` command line — in-process through
:func:`reference_impl.cli.main.main` (the same argument parsing, error printing and exit status as the
installed script, sharing the test session's JVM), and the missing-``_delta_log`` case as the real
installed script in a subprocess (it fails before Spark starts; the crash-point tests run the
script with a JVM) — or, where noted, the Python API. Before and after, the whole table directory is
listed with every file's and directory's size and modification time (hidden entries included,
nothing excluded): the listings must be identical, so the writer neither wrote, nor deleted, nor
created-and-removed anything.

The tables are hand-written logs (no data files): the writer fails before it reads any data.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from conformance.tables.builder import add, metadata, protocol, schema, schema_field, v2_protocol, write_log
from reference_impl.cli.main import main
from reference_impl.errors import CheckpointError
from reference_impl.log.naming import commit_name
from reference_impl.log.table import open_table
from reference_impl.write import preconditions, task_files
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.preconditions import CheckpointRequest, checked_request
from reference_impl.write.writer import write_checkpoint
from tests.reference_impl.write.conftest import known_requirement_ids
from tests.support.listings import listing_diff, tree_listing
from tests.support.stores import local_store_without_atomic_create

ERROR_LINE = re.compile(
    r"^(?P<code>[A-Z][A-Z0-9_]+): (?P<message>.+?)(?: \[file: (?P<file>[^\]]+)\])?(?: \[rule: (?P<rule>[^\]]+)\])?$"
)
#: stderr lines the JVM itself prints before our code runs (not ours; allowed in subprocess runs only).
JVM_NOISE = re.compile(r"^WARNING: Using incubator modules: ")
TABLE_SCHEMA = schema(schema_field("id", "long"))


def _table(root: Path, kind: str) -> Path:
    """A hand-written table of ``kind``: plain | v2 | made-up-feature | made-up-writer-feature | catalog-managed
    | bad-policy | no-log."""
    path = root / kind
    if kind == "no-log":
        path.mkdir(parents=True)
        (path / "data.parquet").write_bytes(b"not a table")
        return path
    first = {
        "plain": [protocol(1, 2), metadata(TABLE_SCHEMA)],
        "v2": [v2_protocol(), metadata(TABLE_SCHEMA, configuration={"delta.checkpointPolicy": "v2"})],
        "made-up-feature": [protocol(1, 2), metadata(TABLE_SCHEMA)],
        "made-up-writer-feature": [protocol(1, 2), metadata(TABLE_SCHEMA)],
        "catalog-managed": [protocol(1, 2), metadata(TABLE_SCHEMA)],
        "bad-policy": [
            protocol(1, 2),
            metadata(TABLE_SCHEMA, configuration={"delta.checkpointPolicy": "Classic"}),
        ],
    }[kind]
    commits = [
        first,
        [add("a.parquet", stats='{"numRecords":1}')],
        [add("b.parquet", stats='{"numRecords":2}')],
    ]
    if kind == "made-up-feature":
        commits.append([protocol(3, 7, reader_features=["madeUpFeature"], writer_features=["madeUpFeature"])])
    if kind == "made-up-writer-feature":
        commits.append([protocol(1, 7, writer_features=["appendOnly", "madeUpWriterFeature"])])
    if kind == "catalog-managed":
        commits.append([protocol(1, 7, writer_features=["catalogManaged"])])
    return write_log(path, commits)


@dataclass(frozen=True)
class Case:
    id: str
    table: str
    args: tuple[str, ...]
    code: str
    rule: str
    file: str  # relative to the table root ("" = the table root itself)
    subprocess: bool = False


CASES = [
    Case("version-not-in-log", "plain", ("--version", "9"), "VERSION_NOT_FOUND", "CKPT-WRITE-001",
         f"_delta_log/{commit_name(9)}"),
    Case("no-delta-log", "no-log", (), "TABLE_NOT_FOUND", "CKPT-READ-009", "_delta_log", subprocess=True),
    Case("unsupported-reader-feature", "made-up-feature", (), "UNSUPPORTED_READER_FEATURE", "CKPT-FEAT-006",
         "_delta_log"),
    Case("unsupported-writer-feature", "made-up-writer-feature", (), "UNSUPPORTED_WRITER_FEATURE",
         "CKPT-WRITE-010", "_delta_log"),
    Case("catalog-managed-writer-feature", "catalog-managed", (), "UNSUPPORTED_WRITER_FEATURE", "CKPT-WRITE-010",
         "_delta_log"),
    Case("v2-without-the-feature", "plain", ("--spec", "v2"), "V2_FEATURE_NOT_SUPPORTED", "CKPT-FEAT-003", ""),
    Case("multi-part-on-v2-table", "v2", ("--parts", "3"), "MULTIPART_ON_V2_TABLE", "CKPT-FEAT-005", ""),
    Case("one-part", "plain", ("--parts", "1"), "INVALID_OPTION", "CKPT-PART-005", ""),
    Case("uuid-named-v1", "plain", ("--naming", "uuid", "--spec", "v1"), "INVALID_OPTION", "CKPT-FEAT-001", ""),
    Case("v2-with-parts", "plain", ("--spec", "v2", "--parts", "2"), "INVALID_OPTION", "CKPT-FEAT-001", ""),
    Case("invalid-checkpoint-policy", "bad-policy", (), "INVALID_OPTION", "CKPT-FEAT-009", ""),
]  # fmt: skip


def _run_in_process(
    table: Path, args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    capsys.readouterr()
    status = main(["checkpoint", str(table), *args, "--quiet"])
    return status, capsys.readouterr().err


def _run_subprocess(table: Path, args: tuple[str, ...]) -> tuple[int, str]:
    script = Path(sys.executable).with_name("delta-ckpt")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "reference_impl.cli"]
    proc = subprocess.run(
        [*command, "checkpoint", str(table), *args, "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return proc.returncode, proc.stderr


def _assert_one_error_line(
    label: str, status: int, stderr: str, case: Case, table: Path, *, jvm: bool
) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    ours = [line for line in lines if not (jvm and JVM_NOISE.match(line))]
    assert status == 2, f"{label}: exit status {status}, expected 2; stderr: {stderr[-1500:]}"
    assert len(ours) == 1, f"{label}: expected exactly one line on stderr, got {len(ours)}: {ours[:10]}"
    match = ERROR_LINE.match(ours[0])
    assert match is not None, f"{label}: stderr line is not 'CODE: message [file: …] [rule: …]': {ours[0]!r}"
    assert match["code"] == case.code, f"{label}: code {match['code']}, expected {case.code}: {ours[0]!r}"
    assert match["rule"] == case.rule, f"{label}: rule {match['rule']}, expected {case.rule}: {ours[0]!r}"
    assert match["rule"] in known_requirement_ids(), (
        f"{label}: {match['rule']} is not a requirement of the spec"
    )
    expected_file = str(table / case.file) if case.file else str(table)
    assert match["file"] == expected_file, (
        f"{label}: file {match['file']!r}, expected {expected_file!r}: {ours[0]!r}"
    )


@pytest.mark.spark
@pytest.mark.requirement(
    "CKPT-WRITE-001",
    "CKPT-READ-009",
    "CKPT-FEAT-006",
    "CKPT-FEAT-003",
    "CKPT-FEAT-005",
    "CKPT-PART-005",
    "CKPT-FEAT-001",
    "CKPT-FEAT-009",
    "CKPT-WRITE-010",
)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input_is_refused_and_nothing_is_written(
    case: Case, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``delta-ckpt checkpoint`` refuses the input with exit 2 and one line naming the code, file and rule; nothing changes.

    Spec: CKPT-WRITE-001
    "A writer asked to checkpoint a version whose commit file `<n>.json` is not present in
    `_delta_log/` MUST fail with `VERSION_NOT_FOUND` and MUST NOT write any file."
    Spec: CKPT-FEAT-003
    "A writer that is explicitly asked to write a V2-spec checkpoint for a version whose protocol
    does not support `v2Checkpoint` MUST fail with `V2_FEATURE_NOT_SUPPORTED` and MUST NOT write
    any file."
    Spec: CKPT-FEAT-005
    "A writer that is explicitly asked to write a multi-part checkpoint for a version whose
    protocol supports `v2Checkpoint` MUST fail with `MULTIPART_ON_V2_TABLE` and MUST NOT write any
    file."
    Spec: CKPT-WRITE-010
    "A writer MUST NOT write any checkpoint file or `_last_checkpoint` for a version whose protocol lists
    a writer feature that the writer does not support, and MUST fail with `UNSUPPORTED_WRITER_FEATURE`
    instead."
    """
    table = _table(tmp_path, case.table)
    before = tree_listing(table)
    if case.subprocess:
        status, stderr = _run_subprocess(table, case.args)
    else:
        status, stderr = _run_in_process(table, case.args, capsys)
    _assert_one_error_line(f"{case.id} ({table})", status, stderr, case, table, jvm=case.subprocess)
    changes = listing_diff(before, tree_listing(table))
    assert not changes, f"{case.id}: the writer changed {table}: {changes}"


@contextmanager
def _unwritable(directory: Path) -> Iterator[str]:
    """Make ``directory`` unwritable for this process; yields how. Skips when that is impossible.

    ``chmod`` does not stop root (CAP_DAC_OVERRIDE), so as root the directory is made immutable
    with ``chattr +i``, which binds root too; the attribute is removed afterwards.
    """
    if os.geteuid() != 0:
        mode = directory.stat().st_mode
        directory.chmod(0o555)
        try:
            yield "chmod 0555"
        finally:
            directory.chmod(mode)
        return
    proc = subprocess.run(["chattr", "+i", str(directory)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(
            f"running as root, where chmod cannot make {directory} unwritable, and chattr +i failed: "
            f"{proc.stderr.strip()}"
        )
    try:
        if os.access(directory, os.W_OK):
            pytest.skip(f"running as root and chattr +i did not make {directory} unwritable here")
        yield "chattr +i (running as root: chmod would not stop root)"
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=False)


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-011", "CKPT-WRITE-003")
def test_unwritable_delta_log_is_refused(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unwritable ``_delta_log`` gives ``STORAGE_ERROR`` naming the directory, exit 2, and no change.

    A writer that cannot create files there refuses up front instead of failing half-way.

    Spec: CKPT-WRITE-011
    "A writer asked to checkpoint a table whose `_delta_log/` it cannot create files in (a read-only
    directory, missing write permission, credentials that only read) MUST fail with `STORAGE_ERROR`
    naming `_delta_log/`, and MUST leave every file of the table as it was."
    """
    table = _table(tmp_path, "plain")
    case = Case("unwritable", "plain", (), "STORAGE_ERROR", "CKPT-WRITE-011", "_delta_log")
    with _unwritable(table / "_delta_log") as how:
        before = tree_listing(table)
        status, stderr = _run_in_process(table, (), capsys)
        after = tree_listing(table)
    _assert_one_error_line(f"unwritable via {how} ({table})", status, stderr, case, table, jvm=False)
    assert not listing_diff(before, after), f"{table}: {listing_diff(before, after)}"


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-011")
@pytest.mark.parametrize(
    "how", ["a-file-named-_sidecars", "_sidecars-unwritable-by-the-driver", "_sidecars-unwritable-by-tasks"]
)
def test_a_sidecars_directory_the_writer_cannot_create_in_is_one_storage_error(
    how: str,
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A V2 table whose ``_delta_log/_sidecars`` cannot take files — a plain file in its place (the
    driver's ``mkdirs`` fails before any Spark job), or an existing directory made unwritable (the
    table's one sidecar is created by the driver, or, forced onto the task path, by a sidecar task on
    an executor) — gives one ``STORAGE_ERROR`` line naming ``_sidecars`` (or a sidecar in it) with
    CKPT-WRITE-011, exit 2, and no change: never a Python traceback of a Spark worker reported as
    ``INTERNAL_ERROR``.

    Spec: CKPT-WRITE-011
    "A writer asked to checkpoint a table whose `_delta_log/` it cannot create files in (a read-only
    directory, missing write permission, credentials that only read) MUST fail with `STORAGE_ERROR`
    naming `_delta_log/`, and MUST leave every file of the table as it was."
    """
    table = _table(tmp_path, "v2")
    sidecars = table / "_delta_log" / "_sidecars"
    blocked: contextlib.AbstractContextManager[str]
    if how == "a-file-named-_sidecars":
        sidecars.write_bytes(b"")
        blocked = contextlib.nullcontext("a plain file named _sidecars")
    else:
        sidecars.mkdir()
        blocked = _unwritable(sidecars)
        if how.endswith("by-tasks"):
            monkeypatch.setattr(task_files, "DRIVER_ROWS", -1)
    with blocked as what:
        before = tree_listing(table)
        status, stderr = _run_in_process(table, ("--spec", "v2"), capsys)
        after = tree_listing(table)
    label = f"{how} via {what} ({table})"
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert status == 2, f"{label}: exit status {status}, expected 2; stderr: {stderr[-1500:]}"
    assert len(lines) == 1, f"{label}: expected exactly one line on stderr, got {len(lines)}: {lines[:10]}"
    match = ERROR_LINE.match(lines[0])
    assert match is not None, f"{label}: stderr line is not 'CODE: message [file: …] [rule: …]': {lines[0]!r}"
    assert (match["code"], match["rule"]) == ("STORAGE_ERROR", "CKPT-WRITE-011"), f"{label}: {lines[0]!r}"
    assert (match["file"] or "").startswith(str(sidecars)), f"{label}: names {match['file']!r}: {lines[0]!r}"
    assert not listing_diff(before, after), f"{label}: {listing_diff(before, after)}"


@pytest.mark.requirement("CKPT-WRITE-006")
def test_store_without_atomic_create_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that declares no atomic create-if-absent (``StorageGuarantees.atomic_create``) gives one
    ``STORAGE_ERROR`` naming ``_delta_log`` with CKPT-WRITE-006, exit 2, and no change — before Spark
    starts. Here the local store declares the weaker guarantee (``s3a://`` has it: ``test_s3.py``).

    Spec: CKPT-WRITE-006
    "A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    see it partially written, and MUST NOT publish a UUID-named top-level file under a name that an
    existing file already has"
    """

    local_store_without_atomic_create(monkeypatch)
    table = _table(tmp_path, "plain")
    case = Case("no-atomic-create", "plain", (), "STORAGE_ERROR", "CKPT-WRITE-006", "_delta_log")
    before = tree_listing(table)
    status, stderr = _run_in_process(table, (), capsys)
    _assert_one_error_line(f"no atomic create ({table})", status, stderr, case, table, jvm=False)
    assert "cannot create a file only if it is absent" in stderr, stderr
    assert not listing_diff(before, tree_listing(table)), (
        f"{table}: {listing_diff(before, tree_listing(table))}"
    )


@pytest.mark.requirement("CKPT-WRITE-006")
@pytest.mark.parametrize("made", ["by-hand", "replaced-from-a-checked-one"])
def test_a_request_not_made_by_checked_request_is_checked_by_the_writer(
    made: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``write_checkpoint`` checks a ``CheckpointRequest`` that ``checked_request`` did not make — built
    by hand, or a checked request's copy for another table — and refuses it with the CLI's error
    (here a store without atomic create-if-absent), before Spark starts and with nothing written.

    Spec: CKPT-WRITE-006
    "A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader can
    see it partially written"
    """
    checked = checked_request(open_table(_table(tmp_path / "checked", "plain")), None)
    local_store_without_atomic_create(monkeypatch)
    table = _table(tmp_path, "plain")
    before = tree_listing(table)
    status, stderr = _run_in_process(table, (), capsys)
    assert status == 2, f"{table}: the CLI exited {status}; stderr: {stderr}"
    request = (
        CheckpointRequest(open_table(table), None)
        if made == "by-hand"
        else replace(checked, table=open_table(table))
    )

    def no_spark() -> SparkSession:
        pytest.fail(f"{table}: a {made} request reached Spark: the writer skipped the checks")

    with pytest.raises(CheckpointError) as info:
        write_checkpoint(request, spark=no_spark)
    assert str(info.value) == stderr.strip(), (
        f"{table}: the writer raised {info.value}; the CLI said {stderr}"
    )
    assert not listing_diff(before, tree_listing(table)), (
        f"{table}: {listing_diff(before, tree_listing(table))}"
    )


def test_a_checked_request_is_not_checked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request ``delta-ckpt checkpoint`` makes (``checked_request``) reaches Spark without the
    writer running the checks a second time (they cost requests on an object store)."""
    table = _table(tmp_path, "plain")
    request = checked_request(open_table(table), None)

    def checks(*args: object) -> None:
        pytest.fail(f"{table}: the writer ran the checks again on a checked request")

    monkeypatch.setattr(preconditions, "check_preconditions", checks)

    class SparkReached(Exception):
        pass

    def spark() -> SparkSession:
        raise SparkReached

    with pytest.raises(SparkReached):
        write_checkpoint(request, spark=spark)


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-001")
@pytest.mark.parametrize(
    ("kind", "version", "options", "code"),
    [
        ("plain", 5, CheckpointOptions(), "VERSION_NOT_FOUND"),
        ("plain", None, CheckpointOptions(spec="v3"), "INVALID_OPTION"),
        ("v2", None, CheckpointOptions(actions_per_sidecar=0), "INVALID_OPTION"),
        ("v2", None, CheckpointOptions(actions_per_sidecar=-5), "INVALID_OPTION"),
        ("plain", None, CheckpointOptions(stats="csv"), "INVALID_OPTION"),
        ("v2", None, CheckpointOptions(spec="v1", incremental=True), "INVALID_OPTION"),
        ("v2", None, CheckpointOptions(sidecars=False, incremental=True), "INVALID_OPTION"),
    ],
    ids=["version-beyond-log", "unknown-spec", "zero-actions-per-sidecar", "negative-actions-per-sidecar",
         "unknown-stats-form", "incremental-v1", "incremental-without-sidecars"],
)  # fmt: skip
def test_api_refuses_bad_options(
    kind: str, version: int | None, options: CheckpointOptions, code: str, spark: SparkSession, tmp_path: Path
) -> None:
    """``write_checkpoint`` raises the error code for a bad version or option and writes nothing.

    Spec: CKPT-WRITE-001
    "A writer asked to checkpoint a version whose commit file `<n>.json` is not present in
    `_delta_log/` MUST fail with `VERSION_NOT_FOUND` and MUST NOT write any file."
    """
    table = _table(tmp_path, kind)
    before = tree_listing(table)
    with pytest.raises(CheckpointError) as info:
        write_checkpoint(table, version=version, options=options, spark=spark)
    assert info.value.code == code, f"{table}: {info.value}"
    changes = listing_diff(before, tree_listing(table))
    assert not changes, f"{table}: {changes}"


def test_json_error_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With ``--json`` the same error is also one JSON object on stdout (code, message, path, rule)."""
    table = _table(tmp_path, "no-log")
    status = main(["checkpoint", str(table), "--json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert status == 2 and document["ok"] is False, captured
    assert document["error"]["code"] == "TABLE_NOT_FOUND" and document["error"]["rule"] == "CKPT-READ-009", (
        document
    )
    assert captured.err.strip().startswith("TABLE_NOT_FOUND: "), captured.err


@pytest.mark.requirement("CKPT-WRITE-001")
def test_bad_version_is_refused_before_spark_loads(tmp_path: Path) -> None:
    """``delta-ckpt checkpoint --version N`` of a missing commit fails in a fresh process without loading pyspark.

    The command's Spark-free checks run before it launches the driver JVM (issue #12), so bad input
    costs no JVM at all: the process exits 2 with the one error line and ``pyspark`` never imported.

    Spec: CKPT-WRITE-001
    "A writer asked to checkpoint a version whose commit file `<n>.json` is not present in
    `_delta_log/` MUST fail with `VERSION_NOT_FOUND` and MUST NOT write any file."
    """
    table = _table(tmp_path, "plain")
    before = tree_listing(table)
    script = (
        "import sys\n"
        "from reference_impl.cli.main import main\n"
        f"status = main(['checkpoint', {str(table)!r}, '--version', '9', '--quiet'])\n"
        "print(status, 'pyspark' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.stdout.split() == ["2", "False"], (
        f"{table}: expected exit status 2 with pyspark not imported, got {proc.stdout!r}; stderr: {proc.stderr[-1500:]}"
    )
    case = Case(
        "version-not-in-log",
        "plain",
        (),
        "VERSION_NOT_FOUND",
        "CKPT-WRITE-001",
        f"_delta_log/{commit_name(9)}",
    )
    _assert_one_error_line(f"fresh process ({table})", 2, proc.stderr, case, table, jvm=False)
    assert not listing_diff(before, tree_listing(table)), (
        f"{table}: {listing_diff(before, tree_listing(table))}"
    )


@pytest.mark.spark
def test_a_corrupt_commit_is_log_corrupt_naming_it_and_nothing_is_written(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A commit whose file-action line only a Spark job finds bad — it is JSON, but ``add.size`` is not a
    number, and the state's file actions are parsed lazily: ``delta-ckpt checkpoint`` exits 2 with one
    ``LOG_CORRUPT`` line naming the commit (not a Spark error, not ``INTERNAL_ERROR``), and the table is
    as it was: no staging left, nothing written (the listing includes ``_delta_log``'s own modification
    time). (So does an incremental V2 write over such a commit after its base, tried once: not kept,
    for the suite's time.)"""
    table = _table(tmp_path, "plain")
    commit = table / "_delta_log" / commit_name(2)
    bad = {"add": {"path": "x", "size": "big"}}
    commit.write_text(json.dumps(add("b.parquet", stats='{"numRecords":2}')) + "\n" + json.dumps(bad) + "\n")
    before = tree_listing(table)
    status, stderr = _run_in_process(
        table,
        (
            "--spec",
            "v1",
        ),
        capsys,
    )
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1, f"{commit}: exit status {status}, stderr {lines}"
    match = ERROR_LINE.match(lines[0])
    assert match is not None, f"{commit}: not one 'CODE: message [file: …]' line: {lines[0]!r}"
    assert (match["code"], match["file"]) == ("LOG_CORRUPT", str(commit)), f"{commit}: {lines[0]!r}"
    assert "action schema" in match["message"], f"{commit}: {lines[0]!r}"
    changes = listing_diff(before, tree_listing(table))
    assert not changes, f"{commit}: the writer changed {table}: {changes}"
