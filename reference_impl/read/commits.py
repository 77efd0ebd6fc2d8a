"""The commits after a checkpoint: one Spark scan for file actions, one driver pass for the rest.

Spec: ``spec/checkpoints.md`` §16 Reader rules (``CKPT-READ-*``); PROTOCOL.md "Action
Reconciliation" (the last ``protocol``/``metaData`` wins, ``txn`` per ``appId``,
``domainMetadata`` per domain).

A table of a million files has hundreds of MiB of commit JSON but a handful of non-file actions.
Reading the commits twice with Spark's JSON source (once for the few non-file rows, once for the
file actions) parses every line twice. Here:

* :func:`read_commits` — the file actions: Spark's JSON source (``FAILFAST``, explicit schema)
  over exactly the listed commit files (:func:`~reference_impl.storage.listed_scan.listed_scan`: the
  statuses from the listing of ``_delta_log``, no existence probe or listing per file — on S3 a
  ``HEAD`` and a ``GET`` a commit instead of 3 ``HEAD``, a ``LIST`` and a ``GET``), each row tagged
  with its ``version`` and its position ``ord`` in the commit;
* :func:`non_file_rows` — the non-file actions: the driver reads the commit bytes through the
  table's storage and skips every line that *starts* with ``{"add":{`` or ``{"remove":{`` (a file
  action: the non-file pass never uses it, as before: a row whose ``add`` or ``remove`` is set is
  not a non-file row). Every other line is decoded; lines that hold a replayed non-file action (or
  that Python's decoder cannot classify) are parsed by Spark with the same schema and ``FAILFAST``
  mode as the old scan, so types, unknown fields and malformed values are handled exactly as
  Spark's JSON source handles them. The prefix test is an optimisation only: a line in any other
  layout is decoded in full.
* :func:`corrupt_line` — on a failure, the first commit line that is not a JSON object, for a
  ``LOG_CORRUPT`` error naming the file and the line.

A skipped file-action line that does not end with ``}`` (a truncated write) is reported at once;
any other malformed file-action line fails the Spark scan of :func:`read_commits`, which
:meth:`~reference_impl.read.snapshot.Snapshot.replay_errors` maps to the same error.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable, Sequence
from functools import reduce
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql import types as T

from reference_impl.errors import LogCorrupt
from reference_impl.log.actions import FILE_ACTIONS, REPLAYED_NON_FILE
from reference_impl.spark.jobs import spark_errors
from reference_impl.spark.schemas import COMMIT_SCHEMA
from reference_impl.storage import FileInfo, Location, Storage
from reference_impl.storage.listed_scan import listed_scan
from spec.table_state import drop_nulls

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

#: Lines that start so hold a non-null file action; the non-file pass never needs them.
FILE_ACTION_PREFIXES: tuple[bytes, ...] = tuple(f'{{"{kind}":{{'.encode() for kind in FILE_ACTIONS)
_LINES_SCHEMA = T.StructType(
    [
        T.StructField("version", T.LongType(), False),
        T.StructField("ord", T.LongType(), False),
        T.StructField("line", T.StringType(), False),
    ]
)

Commits = Sequence[tuple[int, FileInfo]]


def read_commits(
    spark: SparkSession, storage: Storage, log_dir: Location, commits: Commits
) -> DataFrame | None:
    """All commit rows with ``version`` and ``ord`` (position within the version) columns."""
    if not commits:
        return None
    raw = listed_scan(
        spark, log_dir, [info for _, info in commits], "json", COMMIT_SCHEMA, {"mode": "FAILFAST"}
    )
    version = F.regexp_extract(F.col("_metadata.file_name"), r"^(\d+)\.json$", 1).cast("long")
    # monotonically_increasing_id follows file order within a partition; commit files are never split.
    return raw.select("*", version.alias("version"), F.monotonically_increasing_id().alias("ord"))


def _needs_spark(line: bytes) -> bool:
    """False when the decoded line certainly holds no replayed non-file action (or a file action)."""
    try:
        value = json.loads(line)
    except ValueError:
        return True  # Spark's parser is more lenient (single quotes); let it decide
    if not isinstance(value, dict):
        return True
    if any(value.get(kind) is not None for kind in FILE_ACTIONS):
        return False
    return any(value.get(kind) is not None for kind in REPLAYED_NON_FILE)


def _candidate_lines(storage: Storage, log_dir: Location, commits: Commits) -> list[tuple[int, int, str]]:
    """(version, line number, text) of every line the Spark non-file parse must see."""
    out: list[tuple[int, int, str]] = []
    for version, info in commits:
        path = log_dir / info.name
        for number, raw in enumerate(storage.read_bytes(path).split(b"\n"), start=1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith(FILE_ACTION_PREFIXES):
                if not line.endswith(b"}"):
                    raise LogCorrupt(f"cannot parse the commit: line {number} is truncated", path=str(path))
                continue
            if _needs_spark(line):
                out.append((version, number, line.decode("utf-8", errors="replace")))
    return out


def _arrow_lines(lines: list[tuple[int, int, str]]) -> pa.Table:
    """``lines`` as an Arrow table: Spark turns it into rows in its JVM (a list of tuples would go
    through a Python RDD, whose tasks start Python worker processes: ~1 s of a short command)."""
    import pyarrow as pa

    versions, numbers, texts = zip(*lines, strict=True)
    return pa.table(
        {
            "version": pa.array(versions, pa.int64()),
            "ord": pa.array(numbers, pa.int64()),
            "line": pa.array(texts, pa.string()),
        }
    )


def non_file_rows(
    spark: SparkSession, storage: Storage, log_dir: Location, commits: Commits
) -> list[tuple[int, dict[str, Any]]]:
    """The replayed non-file actions of ``commits`` as ``(version, {kind: value})``, in log order."""
    lines = _candidate_lines(storage, log_dir, commits)
    if not lines:
        return []
    parsed = F.from_json("line", COMMIT_SCHEMA, {"mode": "FAILFAST"}).alias("a")
    df = spark.createDataFrame(_arrow_lines(lines), _LINES_SCHEMA).select("version", "ord", parsed)
    df = df.where(
        F.col("a.add").isNull()
        & F.col("a.remove").isNull()
        & reduce(operator.or_, [F.col(f"a.{kind}").isNotNull() for kind in REPLAYED_NON_FILE])
    ).select("version", "ord", *[F.col(f"a.{kind}").alias(kind) for kind in REPLAYED_NON_FILE])
    try:
        rows = df.collect()
    except spark_errors() as exc:
        path, why = corrupt_line(storage, log_dir, commits) or (
            str(log_dir),
            "a commit file could not be parsed",
        )
        raise LogCorrupt(f"cannot parse the commit: {why}", path=path) from exc
    out: list[tuple[int, dict[str, Any]]] = []
    for row in sorted(rows, key=lambda r: (r["version"], r["ord"])):
        for kind in REPLAYED_NON_FILE:
            if row[kind] is not None:
                out.append((int(row["version"]), {kind: drop_nulls(row[kind].asDict(recursive=True))}))
    return out


def failing_commit(spark: SparkSession, storage: Storage, log_dir: Location, commits: Commits) -> str | None:
    """The first commit whose file actions Spark's JSON source cannot parse with the action schema.

    For errors :func:`corrupt_line` cannot see: valid JSON whose values do not fit the schema
    (``"size": "big"``). Only on the error path: one small Spark job per commit.
    """
    for _, info in commits:
        path = log_dir / info.name
        try:
            frame = spark.read.schema(COMMIT_SCHEMA).option("mode", "FAILFAST").json(path.spark_uri())
            frame.where(F.col("add").isNotNull() | F.col("remove").isNotNull()).count()
        except spark_errors():
            return str(path)
    return None


def corrupt_line(
    storage: Storage, log_dir: Location, commits: Iterable[tuple[int, FileInfo]]
) -> tuple[str, str] | None:
    """``(file, why)`` of the first commit line that is not a JSON object, or None."""
    for _, info in commits:
        path = log_dir / info.name
        text = storage.read_bytes(path).decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                return str(path), f"line {number} is not valid JSON ({exc.msg})"
            if not isinstance(value, dict):
                return str(path), f"line {number} is not a JSON object"
    return None
