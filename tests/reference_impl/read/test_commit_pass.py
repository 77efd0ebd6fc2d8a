"""The driver's non-file pass over commit bytes gives exactly what Spark's JSON source gives.

:mod:`reference_impl.read.commits` skips file-action lines by their first bytes and decodes the rest
on the driver; the judge here is Spark's own JSON source over the same files, filtered as the old
reader filtered it (a row with no ``add``/``remove`` and a replayed non-file action), on lines in
every layout a writer may produce: other key orders, leading blanks, single quotes, a file action
and a non-file action on one line, ``"add": null``, unknown fields, blank lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from conformance.tables.builder import add, metadata, protocol, schema, schema_field
from reference_impl.errors import CheckpointError
from reference_impl.log.listing import list_log
from reference_impl.log.naming import DELTA_LOG, commit_name
from reference_impl.read.commits import non_file_rows, read_commits
from reference_impl.read.snapshot import read_snapshot
from reference_impl.spark.schemas import COMMIT_SCHEMA
from reference_impl.storage import Location, storage_for
from spec.table_state import drop_nulls

REPLAYED = ("protocol", "metaData", "txn", "domainMetadata")


def _line(action: dict[str, Any]) -> str:
    return json.dumps(action, separators=(",", ":"))


def _write_log(table: Path, commits: list[list[str]]) -> Path:
    log = table / DELTA_LOG
    log.mkdir(parents=True)
    for version, lines in enumerate(commits):
        (log / commit_name(version)).write_text("\n".join(lines) + "\n")
    return log


def _base_commit() -> list[str]:
    table_schema = schema(schema_field("id", "long"))
    return [
        _line({"commitInfo": {"operation": "CREATE TABLE"}}),
        _line(protocol()),
        _line(metadata(table_schema)),
        _line(add("a.parquet")),
    ]


ODD_LINES = [
    '{"commitInfo":{"operation":"WRITE"},"txn":{"appId":"a","version":3}}',
    '   {"txn":{"appId":"b","version":1,"lastUpdated":5}}',
    "{'domainMetadata': {'domain': 'd', 'configuration': 'c', 'removed': false}}",
    '{"add":null,"txn":{"appId":"c","version":2}}',
    '{"protocol":{"minReaderVersion":9,"minWriterVersion":9},"add":{"path":"p.parquet","size":1}}',
    "",
    '{"txn":{"version":4,"appId":"a","unknownField":"dropped"}}',
    _line(add("b.parquet")),
    '{"remove":{"path":"a.parquet","deletionTimestamp":7,"dataChange":true}}',
    '{"domainMetadata":{"domain":"e","configuration":"x","removed":true}}',
]


def _spark_json_source(spark: SparkSession, log: Path) -> list[tuple[int, dict[str, Any]]]:
    """The non-file rows as one scan of Spark's JSON source finds them (ordered by version, position)."""
    files = sorted(str(p) for p in log.glob("*.json"))
    raw = spark.read.schema(COMMIT_SCHEMA).option("mode", "FAILFAST").json(files)
    version = F.regexp_extract(F.col("_metadata.file_name"), r"^(\d+)\.json$", 1).cast("long")
    rows = (
        raw.withColumn("version", version)
        .withColumn("ord", F.monotonically_increasing_id())
        .where(F.col("add").isNull() & F.col("remove").isNull())
        .collect()
    )
    out = []
    for row in sorted(rows, key=lambda r: (r["version"], r["ord"])):
        for kind in REPLAYED:
            if row[kind] is not None:
                out.append((int(row["version"]), {kind: drop_nulls(row[kind].asDict(recursive=True))}))
    return out


def test_driver_pass_equals_spark_json_source(spark: SparkSession, tmp_path: Path) -> None:
    """Every replayed non-file action Spark's JSON source finds, in the same order, with the same values."""
    log = _write_log(tmp_path / "t", [_base_commit(), ODD_LINES])
    listing = list_log(storage_for(tmp_path / "t"), Location.parse(log))
    ours = non_file_rows(
        spark, storage_for(tmp_path / "t"), Location.parse(log), list(listing.commits.items())
    )
    expected = _spark_json_source(spark, log)
    assert ours == expected, f"{log}: driver pass {ours} != JSON source {expected}"
    kinds = [next(iter(action)) for _, action in ours]
    assert kinds.count("txn") == 4 and "domainMetadata" in kinds, f"{log}: test lines not all seen: {kinds}"


def test_commit_scan_reads_exactly_the_listed_commits(spark: SparkSession, tmp_path: Path) -> None:
    """The file-action scan (statuses from the listing, no probes of its own) gives the rows Spark's JSON
    source gives for the listed commits — and none of a commit written after the listing."""
    log = _write_log(tmp_path / "t", [_base_commit(), ODD_LINES])
    storage, log_dir = storage_for(tmp_path / "t"), Location.parse(log)
    listing = list_log(storage, log_dir)
    expected_rows = (
        spark.read.schema(COMMIT_SCHEMA)
        .option("mode", "FAILFAST")
        .json(sorted(str(p) for p in log.glob("*.json")))
    )
    expected = sorted(
        (r["_metadata"]["file_name"], str(r["add"]), str(r["remove"]))
        for r in expected_rows.select("_metadata", "add", "remove").collect()
    )
    (log / commit_name(2)).write_text(_line(add("late.parquet")) + "\n")  # after the listing
    scanned = read_commits(spark, storage, log_dir, list(listing.commits.items()))
    assert scanned is not None, f"{log}: no scan for {len(listing.commits)} commits"
    rows = scanned.select("version", F.col("_metadata.file_name").alias("name"), "add", "remove").collect()
    ours = sorted((r["name"], str(r["add"]), str(r["remove"])) for r in rows)
    assert ours == expected, f"{log}: listed scan {ours} != JSON source {expected}"
    versions = sorted({int(r["version"]) for r in rows})
    assert versions == [0, 1], (
        f"{log}: versions read {versions}, listed 0 and 1 ({commit_name(2)} came later)"
    )


@pytest.mark.parametrize(
    ("bad_line", "eager", "why"),
    [
        ('{"add":{"path":"x","size":', True, "line 2"),
        ('{"add":{"path":"x","size":}', False, "line 2"),
        ('{"add":{"path":"x","size":"big"}}', False, "action schema"),
    ],
    ids=["truncated", "malformed", "wrong-type"],
)
def test_malformed_file_action_line_is_log_corrupt(
    spark: SparkSession, tmp_path: Path, bad_line: str, eager: bool, why: str
) -> None:
    """A bad ``add`` line is ``LOG_CORRUPT`` naming the file (and the line when it is not JSON): at once, or
    from the first job over the file actions."""
    log = _write_log(tmp_path / "t", [_base_commit(), [_line(add("b.parquet")), bad_line]])
    with pytest.raises(CheckpointError) as info:
        read_snapshot(spark, tmp_path / "t").summary()
    assert info.value.code == "LOG_CORRUPT", str(info.value)
    assert info.value.path == str(log / commit_name(1)), str(info.value)
    assert why in info.value.message, info.value.message
    if not eager:
        snap = read_snapshot(spark, tmp_path / "t")  # lazily: the file actions are parsed by the next job
        with pytest.raises(CheckpointError, match="LOG_CORRUPT"):
            snap.table_state()
