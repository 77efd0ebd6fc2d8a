"""Read one checkpoint — V1 (classic or multi-part) or V2 (UUID-named JSON/Parquet, classic-named) — as Spark data.

Spec: ``spec/checkpoints.md`` §16 Reader rules, §11 V2-spec checkpoints, §12 Sidecar files
(``CKPT-READ-*``, ``CKPT-V2-*``, ``CKPT-SIDE-*``); PROTOCOL.md "V2 Spec", "Sidecar Files"; delta-spark ``CheckpointProvider``.

| checkpoint | how its spec is decided | where file actions are |
|---|---|---|
| multi-part parts | always V1 | the parts |
| classic ``n.checkpoint.parquet`` | V2 iff it has a ``checkpointMetadata`` row (sidecars without one: error) | the file, or its sidecars |
| UUID-named ``.json`` / ``.parquet`` | always V2; exactly one ``checkpointMetadata`` required | inline, or sidecars — never both |

Before any Spark job, every file involved is checked on the driver: Parquet files with pyarrow (it
exists, its footer reads, and for sidecars its length equals the recorded ``sizeInBytes``), every
file against a Hadoop ``.<name>.crc`` beside it (:mod:`reference_impl.read.hadoop_checksum`); that
catches truncated, missing and checksum-failing files early so the caller can fall back to an older
checkpoint (``CKPT-READ-012``). A failure that only a later Spark job meets is reported as
``CHECKPOINT_CORRUPT`` naming the checkpoint (:func:`checkpoint_job_error`) — unless it is the store's:
a store that fails to serve a file (on the driver, or in a Spark job: :func:`store_error`) is the
store's ``STORAGE_ERROR`` naming the file, never a reason to fall back (``CKPT-READ-027``).
Non-file actions are collected to the driver; file actions stay a lazy ``DataFrame``, planned on
first use (:attr:`CheckpointContent.file_actions`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql import types as T

from reference_impl.errors import (
    CheckpointCorrupt,
    CheckpointError,
    SidecarMissing,
    SidecarSizeMismatch,
    SidecarWithoutCheckpointMetadata,
    StorageError,
    V2CheckpointMetadataDuplicate,
    V2CheckpointMetadataMissing,
    V2MixedFileActions,
)
from reference_impl.log.actions import FILE_ACTIONS, NON_FILE_COLUMNS, V2_TOP_LEVEL_COLUMNS
from reference_impl.log.listing import CheckpointInstance
from reference_impl.read.hadoop_checksum import verify_hadoop_checksum
from reference_impl.read.sidecars import ResolvedSidecar, resolve_sidecar
from reference_impl.spark.columns import check_conformable, select_conformed
from reference_impl.spark.jobs import ObservedMetrics, first_line, io_cause, spark_errors, store_failure
from reference_impl.spark.schemas import ACTION_STRUCTS, ADD, REMOVE, single_action_schema
from reference_impl.storage import FileInfo, Location, Storage
from reference_impl.storage.listed_scan import listed_scan
from spec.table_state import drop_nulls
from spec.vocabulary import CheckpointSpec, LogFileKind

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class CheckpointContent:
    """What a checkpoint holds: non-file actions (collected) and file actions (lazy)."""

    instance: CheckpointInstance
    spec: CheckpointSpec
    non_file_actions: list[dict[str, Any]]  # single-action dicts, file order (no checkpointMetadata/sidecar)
    checkpoint_metadata: dict[str, Any] | None
    sidecars: tuple[ResolvedSidecar, ...]
    inline_file_actions: int
    #: Plans the scan of the file actions; the files it reads were checked already.
    scan: Callable[[], DataFrame] = field(repr=False)

    @functools.cached_property
    def file_actions(self) -> DataFrame:
        """Columns ``add`` (ADD), ``remove`` (REMOVE). Planned on first use: an incremental write that
        lists every sidecar again never reads them, and Spark analyses a scan as it is made (issue #12)."""
        return self.scan()

    def paths(self, log_dir: Location) -> list[Location]:
        """Every file of the checkpoint: its sidecars, then its top-level file or parts."""
        return [s.path for s in self.sidecars] + [log_dir / f.name for f in self.instance.files]

    def describe(self) -> dict[str, Any]:
        return {
            "version": self.instance.version,
            "kind": self.instance.kind,
            "spec": self.spec,
            "files": [f.name for f in self.instance.files],
            "sidecars": [s.name for s in self.sidecars],
        }


def check_parquet_footer(
    storage: Storage, path: Location, *, expected_size: int | None = None
) -> tuple[Any, FileInfo]:
    """Validate a Parquet file on the driver; returns its Arrow schema and its status.

    Raises, naming the file, :class:`SidecarMissing`, :class:`CheckpointCorrupt` (the footer does
    not read, or a Hadoop ``.crc`` beside it does not match it: CKPT-READ-026) or
    :class:`SidecarSizeMismatch` (only when ``expected_size`` is given and the footer reads); the
    store failing to serve the file is its :class:`StorageError`, as the store raised it (CKPT-READ-027).
    """
    import pyarrow.parquet as pq

    info = storage.stat(path)
    if info is None:
        raise SidecarMissing("the file does not exist", path=str(path), rule="CKPT-SIDE-007")
    verify_hadoop_checksum(storage, path)
    try:
        with storage.open_read(path) as handle:
            schema = pq.read_schema(handle)
    except StorageError:
        raise  # pyarrow re-raises the exception of the stream it reads: the store's, not the file's
    except Exception as exc:  # pyarrow raises ArrowInvalid / OSError for truncated or foreign files
        raise CheckpointCorrupt(f"not a readable Parquet file: {exc}", path=str(path)) from exc
    # After the footer: a truncated or empty file is CHECKPOINT_CORRUPT (it cannot be parsed), as
    # every measured reader reports it; a readable file of another length is a size mismatch.
    if expected_size is not None and info.size != expected_size:
        raise SidecarSizeMismatch(
            f"recorded sizeInBytes is {expected_size} but the file has {info.size} bytes",
            path=str(path),
            rule="CKPT-SIDE-008",
        )
    return schema, info


def _stats_from_parsed(raw: DataFrame) -> DataFrame:
    """delta-spark: when ``add`` has ``stats_parsed`` but no ``stats``, stats = ``to_json(stats_parsed)``."""
    if "add" not in raw.columns:
        return raw
    add_type = raw.schema["add"].dataType
    names = [f.name for f in getattr(add_type, "fields", [])]
    if "stats_parsed" in names and "stats" not in names:
        return raw.withColumn("add", F.col("add").withField("stats", F.to_json(F.col("add.stats_parsed"))))
    return raw


#: The footer key under which Spark stores a file's Spark schema (``ParquetReadSupport.SPARK_METADATA_KEY``).
_SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"


def _spark_schema(written: bytes | None) -> T.StructType | None:
    """The Spark schema a footer records, or None (none, or not a schema: Spark then converts the
    Parquet schema, as ``ParquetFileFormat.readSchemaFromFooter`` does; so does our caller). Nested
    deeper than this interpreter parses (``RecursionError``) is not a schema here either: Spark's
    ``deserializeSchemaString`` falls back on any failure, and so must we, never ``INTERNAL_ERROR``."""
    if written is None:
        return None
    try:
        schema = T.StructType.fromJson(json.loads(written))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    return schema


@dataclass(frozen=True)
class _ParquetGroup:
    """Parquet files with one footer schema: the Spark schema they are read with, and their rows
    (a DataFrame built on use)."""

    schema: T.StructType
    rows: Callable[[], DataFrame]


def _checked_groups(
    spark: SparkSession,
    storage: Storage,
    files: Sequence[tuple[Location, int | None]],
    targets: dict[str, Any],
    where: str,
) -> list[_ParquetGroup]:
    """Parquet files (each with the size it must have, or None) grouped by identical footer schema,
    every footer checked once (:func:`check_parquet_footer`) and every group's columns checked
    against ``targets`` (:func:`~reference_impl.spark.columns.check_conformable`): all that decides
    a fall-back to an older checkpoint, before any scan is planned.

    A group whose footers hold the Spark schema Spark wrote (:data:`_SPARK_SCHEMA_KEY`) is read with
    that schema: the one Spark's inference would take from the same footer, without the Spark job
    that inference runs; and, when its files share a directory, from their statuses
    (:func:`~reference_impl.storage.listed_scan.listed_scan`), without the job Spark runs to list
    more than ``spark.sql.sources.parallelPartitionDiscovery.threshold`` (32) paths (a V2
    checkpoint's sidecars). Another group is read as Spark infers it (its job runs here)."""
    members_of: dict[tuple[str, bytes | None], list[tuple[Location, FileInfo]]] = {}
    for path, size in files:
        schema, info = check_parquet_footer(storage, path, expected_size=size)
        key = (str(schema), (schema.metadata or {}).get(_SPARK_SCHEMA_KEY))
        members_of.setdefault(key, []).append((path, info))
    groups = []
    for (_, written), members in members_of.items():
        schema = _spark_schema(written)
        directory = members[0][0].parent
        if schema is not None and all(p.parent == directory for p, _ in members):
            # A file referenced twice is one leaf file of Spark's index, as with ``spark.read.parquet``.
            statuses = list(dict(members).values())
            group = _ParquetGroup(
                schema, functools.partial(listed_scan, spark, directory, statuses, "parquet", schema, {})
            )
        else:
            reader = spark.read if schema is None else spark.read.schema(schema)
            inferred = reader.parquet(*[p.spark_uri() for p, _ in members])
            group = _ParquetGroup(inferred.schema, functools.partial(_planned, inferred))
        present = {f.name: f.dataType for f in group.schema.fields}
        for name, dtype in targets.items():
            check_conformable(present.get(name), dtype, where=f"{where}:{name}")
        groups.append(group)
    return groups


def _planned(df: DataFrame) -> DataFrame:
    """A scan planned already (Spark's schema inference plans it)."""
    return df


def _scan_groups(groups: list[_ParquetGroup], targets: dict[str, Any], where: str) -> DataFrame:
    """The rows of :func:`_checked_groups`' groups, each conformed to ``targets``, in one union."""
    frames = [select_conformed(_stats_from_parsed(group.rows()), targets, where=where) for group in groups]
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def _row_to_action(row: Any) -> dict[str, Any] | None:
    data = row.asDict(recursive=True)
    present = [(k, v) for k, v in data.items() if v is not None]
    if len(present) != 1:
        return None
    key, value = present[0]
    return {key: drop_nulls(value)}


def _read_top_level(
    spark: SparkSession, storage: Storage, log_dir: Location, instance: CheckpointInstance
) -> DataFrame:
    targets = {c: ACTION_STRUCTS[c] for c in V2_TOP_LEVEL_COLUMNS}
    paths = [log_dir / f.name for f in instance.files]
    where = instance.name
    if instance.kind is LogFileKind.CHECKPOINT_UUID and instance.name.endswith(".json"):
        verify_hadoop_checksum(storage, paths[0])
        raw = spark.read.schema(single_action_schema()).option("mode", "FAILFAST").json(paths[0].spark_uri())
        return select_conformed(raw, targets, where=where)
    return _scan_groups(
        _checked_groups(spark, storage, [(p, None) for p in paths], targets, where), targets, where
    )


def _collect_non_file(top: DataFrame) -> tuple[list[dict[str, Any]], int]:
    """Collect the non-file rows of a top-level file and count its file-action rows — one Spark job:
    the count is an observed metric of the rows the collect reads (``Dataset.observe``), not a second
    pass over the file. When Spark reports no metrics, the count is a job of its own
    (:class:`~reference_impl.spark.jobs.ObservedMetrics`): only a failure to read the file fails it
    (the caller tells the file's failure from the store's: :func:`job_error`)."""
    is_file = F.col("add").isNotNull() | F.col("remove").isNotNull()
    counted = ObservedMetrics(top, F.count(F.when(is_file, 1)).alias("n"))
    rows = counted.df.where(~is_file).select(*NON_FILE_COLUMNS).collect()
    n_file = int(counted.get()["n"])
    actions = [a for a in (_row_to_action(r) for r in rows) if a is not None]
    return actions, n_file


def load_checkpoint(
    spark: SparkSession, storage: Storage, log_dir: Location, instance: CheckpointInstance
) -> CheckpointContent:
    """Load ``instance`` (see the module docs). Structural errors raise; nothing is cached."""
    top_files = [log_dir / f.name for f in instance.files]
    top_path = str(log_dir / instance.name)
    try:
        top = _read_top_level(spark, storage, log_dir, instance)
        actions, n_inline = _collect_non_file(top)
    except spark_errors() as exc:
        raise job_error(exc, top_files, log_dir / instance.name, "cannot read the checkpoint") from exc
    cp_meta = [a["checkpointMetadata"] for a in actions if "checkpointMetadata" in a]
    sidecar_actions = [a["sidecar"] for a in actions if "sidecar" in a]
    non_file = [a for a in actions if "checkpointMetadata" not in a and "sidecar" not in a]
    file_targets = {"add": ADD, "remove": REMOVE}

    if instance.kind is LogFileKind.CHECKPOINT_PART:
        spec = CheckpointSpec.V1
    elif instance.kind is LogFileKind.CHECKPOINT_UUID:
        if not cp_meta:
            raise V2CheckpointMetadataMissing(
                "a UUID-named checkpoint has no checkpointMetadata action", path=top_path, rule="CKPT-V2-010"
            )
        spec = CheckpointSpec.V2
    else:
        if not cp_meta and sidecar_actions:
            raise SidecarWithoutCheckpointMetadata(
                f"{len(sidecar_actions)} sidecar action(s) but no checkpointMetadata",
                path=top_path,
                rule="CKPT-V2-012",
            )
        spec = CheckpointSpec.V2 if cp_meta else CheckpointSpec.V1
    if spec is CheckpointSpec.V2 and len(cp_meta) > 1:
        raise V2CheckpointMetadataDuplicate(
            f"{len(cp_meta)} checkpointMetadata actions", path=top_path, rule="CKPT-V2-011"
        )
    if spec is CheckpointSpec.V1:
        sidecar_actions = []

    sidecars = tuple(resolve_sidecar(storage, log_dir, s) for s in sidecar_actions)
    if sidecars and n_inline:
        raise V2MixedFileActions(
            f"{n_inline} inline file action(s) and {len(sidecars)} sidecar(s)",
            path=top_path,
            rule="CKPT-V2-013",
        )
    scan: Callable[[], DataFrame]
    if sidecars:
        recorded = [(s.path, int(s.action.get("sizeInBytes", -1))) for s in sidecars]
        try:  # a group without a Spark schema in its footers is read as Spark infers it: a job
            groups = _checked_groups(spark, storage, recorded, file_targets, "sidecar")
        except spark_errors() as exc:
            paths = [s.path for s in sidecars]
            raise job_error(exc, paths, paths[0], "cannot read the sidecars") from exc
        scan = functools.partial(_scan_groups, groups, file_targets, "sidecar")
    else:
        scan = functools.partial(_inline_file_actions, top)
    return CheckpointContent(
        instance=instance,
        spec=spec,
        non_file_actions=non_file,
        checkpoint_metadata=cp_meta[0] if cp_meta else None,
        sidecars=sidecars,
        inline_file_actions=n_inline,
        scan=scan,
    )


def _inline_file_actions(top: DataFrame) -> DataFrame:
    return top.where(F.col("add").isNotNull() | F.col("remove").isNotNull()).select(*FILE_ACTIONS)


def fallback_errors() -> tuple[type[CheckpointError], ...]:
    """Errors that make a reader try an older checkpoint: file-level read failures, as delta-spark's. Never the
    store's :class:`StorageError` (CKPT-READ-027), where delta-spark retries on any ``SparkException``."""
    return (CheckpointCorrupt, SidecarMissing, SidecarSizeMismatch)


def checkpoint_job_error(
    content: CheckpointContent, log_dir: Location, exc: BaseException
) -> CheckpointError:
    """A Spark job over the checkpoint's file actions failed after the checks: one error naming the file.

    The file is the checkpoint file (top-level file, part or sidecar) whose name the failure
    mentions, else the top-level file (CKPT-READ-013). An I/O error in the job is no exception: a
    Hadoop ``.crc`` gone stale since the checks (``ChecksumException``) MUST surface as
    ``CHECKPOINT_CORRUPT`` naming the file (CKPT-READ-026), and a file deleted since then
    (``FileNotFoundException``) is a missing checkpoint file; only the store failing to serve the
    file is the store's ``STORAGE_ERROR`` (:func:`job_error`, CKPT-READ-027).
    """
    where = log_dir / content.instance.name
    return job_error(
        exc, content.paths(log_dir), where, "cannot read the checkpoint's file actions", "CKPT-READ-013"
    )


#: A store that fails to serve a file the reader reads: its ``STORAGE_ERROR``, no fall-back (spec §16.4).
STORE_FAILURE_RULE = "CKPT-READ-027"


def named_file(exc: BaseException, files: Sequence[Location], default: Location) -> Location:
    """The file of ``files`` whose name the failure ``exc`` mentions, else ``default``."""
    text = str(exc)
    return next((f for f in files if f.name in text), default)


def store_error(exc: BaseException, path: Location) -> StorageError | None:
    """The store's failure the Spark error ``exc`` met reading ``path``
    (:func:`~reference_impl.spark.jobs.store_failure`): ``STORAGE_ERROR`` naming the file and
    CKPT-READ-027. None when the job failed on the file itself (missing, a stale checksum, bytes that
    do not decode) or on no I/O at all."""
    cause = store_failure(exc)
    if cause is None:
        return None
    return StorageError(
        f"the store failed while Spark read the file ({cause})", path=str(path), rule=STORE_FAILURE_RULE
    )


def job_error(
    exc: BaseException, files: Sequence[Location], default: Location, what: str, rule: str | None = None
) -> CheckpointError:
    """A Spark job reading checkpoint ``files`` failed: the store's :class:`StorageError`
    (:func:`store_error`), else :class:`CheckpointCorrupt` — both naming the file of ``files`` the
    failure mentions, else ``default``. The corrupt file's message is the Java ``IOException`` that
    decoding it raised, when there is one (Py4J's first line only names the Python call)."""
    path = named_file(exc, files, default)
    detail = io_cause(exc) or first_line(exc)
    corrupt = CheckpointCorrupt(f"{what}: {detail}", path=str(path), rule=rule)
    return store_error(exc, path) or corrupt
