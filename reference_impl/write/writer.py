"""The reference checkpoint writer: V1 classic, multi-part, V2 (UUID- or classic-named, JSON/Parquet, sidecars).

Spec: ``spec/checkpoints.md`` §5 (which spec and naming), §6 content, §7 Parquet layout, §8 stats,
§10 multi-part, §11 V2, §12 sidecars, §14 ``_last_checkpoint``, §17 writer rules.

Usage::

    result = write_checkpoint("/path/to/table")                      # defaults follow the table
    result = write_checkpoint(path, options=CheckpointOptions(spec="v2", manifest="parquet"))

| table | default checkpoint |
|---|---|
| ``delta.checkpointPolicy=v2`` and ``v2Checkpoint`` supported | V2, UUID-named, JSON top-level file, sidecars of at most 50,000 file actions |
| otherwise | V1, one classic file |

Publication order (§17.2): state replayed → files staged by Spark executors → **read back and
verified** (add/remove/non-file row counts equal the state) → sidecars published under unique
names → every referenced sidecar re-checked (exists, exact size) → top-level file(s) published
create-if-absent → ``_last_checkpoint`` replaced atomically (never with an older version). A
failure before the top-level file leaves at most unreferenced sidecars: no reader sees a change.

Determinism (§17.4): multi-part parts are Spark hash partitions of
``coalesce(add.path, remove.path)`` — the partitioning delta-spark uses — so a re-run or a zombie
task writes the same rows into the same part.
"""

from __future__ import annotations

import json
import math
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark import StorageLevel
from pyspark.sql import functions as F
from pyspark.sql import types as T

from reference_impl.errors import (
    CheckpointError,
    InvalidOption,
    MultipartOnV2Table,
    SelfCheckFailed,
    StorageError,
    TableNotFound,
    UnsupportedReaderFeature,
    V2FeatureNotSupported,
    VersionNotFound,
)
from reference_impl.faults import FaultPlan, plan_from_env, task_fault_filter
from reference_impl.log.last_checkpoint import (
    CHECKPOINT_SCHEMA_THRESHOLD,
    NON_FILE_ACTIONS_THRESHOLD,
    SIDECARS_THRESHOLD,
    LastCheckpoint,
    LastCheckpointV2,
    SidecarRef,
    trimmed,
)
from reference_impl.log.naming import (
    LAST_CHECKPOINT,
    SIDECAR_DIR,
    classic_checkpoint_name,
    commit_name,
    part_checkpoint_name,
    sidecar_name,
    uuid_checkpoint_name,
)
from reference_impl.log.segment import read_hint
from reference_impl.progress import Progress, silent
from reference_impl.read.snapshot import Snapshot, read_snapshot, require_table
from reference_impl.spark.columns import dv_unique_id
from reference_impl.spark.schemas import (
    ACTION_STRUCTS,
    CHECKPOINT_ADD_FIELDS,
    CHECKPOINT_REMOVE_FIELDS,
    V1_CHECKPOINT_COLUMNS,
    V2_TOP_LEVEL_COLUMNS,
    single_action_schema,
)
from reference_impl.spark.stats import parsed_stats, partition_values_parsed, stats_schema
from reference_impl.storage.local import FileInfo, LocalStorage, to_uri
from reference_impl.write.staging import (
    ActionCounts,
    StagedFile,
    StagingArea,
    publish,
    read_back_counts,
    stage,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

DEFAULT_ACTIONS_PER_SIDECAR = 50_000
DEFAULT_COMPRESSION = "zstd"  # spec CKPT-SCHEMA-008 (delta-spark uses snappy: divergence D10)
_SPECS = ("v1", "v2")
_NAMINGS = ("classic", "uuid")
_MANIFESTS = ("json", "parquet")
_STATS = ("json", "struct", "both")


@dataclass(frozen=True)
class CheckpointOptions:
    """What to write. ``None`` means "as the table says" (see the module docs)."""

    spec: str | None = None
    naming: str | None = None
    manifest: str = "json"
    actions_per_sidecar: int | None = None
    sidecars: bool = True
    parts: int | None = None
    stats: str | None = None
    compression: str | None = None
    now_ms: int | None = None
    write_last_checkpoint: bool = True
    #: Set every written file's modification time to this (ms since epoch): deterministic fixtures.
    file_time_ms: int | None = None
    uuid_factory: Callable[[], uuid.UUID] = uuid.uuid4
    fault: FaultPlan | None = None
    progress: Progress = field(default_factory=silent)


@dataclass(frozen=True)
class WrittenFile:
    """A published file: name relative to ``_delta_log``, size, mtime, and its action counts."""

    name: str
    role: str  # "top-level" | "part" | "sidecar"
    size_in_bytes: int
    modification_time: int
    rows: int
    adds: int
    removes: int
    kept_existing: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "role": self.role,
            "sizeInBytes": self.size_in_bytes,
            "modificationTime": self.modification_time,
            "rows": self.rows,
            "adds": self.adds,
            "removes": self.removes,
        }
        if self.kept_existing:
            out["keptExisting"] = True
        return out


@dataclass
class CheckpointResult:
    """What :func:`write_checkpoint` did (also the ``--json`` output of ``delta-ckpt checkpoint``)."""

    table: str
    version: int
    spec: str
    naming: str
    manifest: str | None
    files: list[WrittenFile]
    num_add_files: int
    num_remove_files: int
    num_non_file_actions: int
    last_checkpoint: dict[str, Any] | None
    last_checkpoint_skipped: str | None
    timings: dict[str, float]

    @property
    def top_level(self) -> list[WrittenFile]:
        return [f for f in self.files if f.role != "sidecar"]

    @property
    def sidecars(self) -> list[WrittenFile]:
        return [f for f in self.files if f.role == "sidecar"]

    @property
    def num_actions(self) -> int:
        return sum(f.rows for f in self.files)

    @property
    def size_in_bytes(self) -> int:
        return sum(f.size_in_bytes for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "version": self.version,
            "spec": self.spec,
            "naming": self.naming,
            "manifest": self.manifest,
            "numActions": self.num_actions,
            "numAddFiles": self.num_add_files,
            "numRemoveFiles": self.num_remove_files,
            "numNonFileActions": self.num_non_file_actions,
            "sizeInBytes": self.size_in_bytes,
            "files": [f.to_json() for f in self.files],
            "lastCheckpoint": self.last_checkpoint,
            "lastCheckpointSkipped": self.last_checkpoint_skipped,
            "timingsSeconds": self.timings,
        }


@dataclass(frozen=True)
class _Plan:
    spec: str
    naming: str
    manifest: str
    sidecars: bool
    actions_per_sidecar: int
    parts: int
    stats_json: bool
    stats_struct: bool
    compression: str


def _choose(value: str | None, allowed: tuple[str, ...], what: str) -> str | None:
    if value is not None and value not in allowed:
        raise InvalidOption(f"{what} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def resolve_plan(options: CheckpointOptions, snap: Snapshot) -> _Plan:
    """Defaults from the table, then every option validated (bad input fails before any write)."""
    table = str(snap.table)
    _choose(options.spec, _SPECS, "--spec")
    _choose(options.naming, _NAMINGS, "--naming")
    _choose(options.manifest, _MANIFESTS, "--manifest")
    _choose(options.stats, _STATS, "--stats")
    policy = (snap.metadata.get("configuration") or {}).get("delta.checkpointPolicy", "classic")
    if policy not in ("classic", "v2"):
        raise InvalidOption(
            f"delta.checkpointPolicy is {policy!r}; it must be classic or v2",
            path=table,
            rule="CKPT-FEAT-009",
        )
    v2_supported = snap.supports_v2_checkpoints
    parts = options.parts
    if parts is not None:
        if parts < 2:
            raise InvalidOption(f"--parts must be at least 2 (a multi-part checkpoint has p > 1 parts), got {parts}",
                                path=table, rule="CKPT-PART-005")  # fmt: skip
        if v2_supported:
            raise MultipartOnV2Table(
                f"version {snap.version} supports v2Checkpoint; multi-part checkpoints are forbidden there",
                path=table,
                rule="CKPT-FEAT-005",
            )
        if options.spec == "v2":
            raise InvalidOption(
                "--parts makes a multi-part V1 checkpoint; it cannot be combined with --spec v2",
                path=table,
                rule="CKPT-FEAT-001",
            )
    spec = options.spec or ("v2" if policy == "v2" and v2_supported and parts is None else "v1")
    if spec == "v2" and not v2_supported:
        raise V2FeatureNotSupported(
            f"version {snap.version} does not support the v2Checkpoint table feature "
            f"(readerFeatures={snap.reader_features}, writerFeatures={snap.writer_features})",
            path=table,
            rule="CKPT-FEAT-003",
        )
    naming = options.naming or ("uuid" if spec == "v2" else "classic")
    if naming == "uuid" and spec == "v1":
        raise InvalidOption("UUID-named checkpoints follow the V2 spec; use --spec v2 or --naming classic",
                            path=table, rule="CKPT-FEAT-001")  # fmt: skip
    per_sidecar = (
        DEFAULT_ACTIONS_PER_SIDECAR if options.actions_per_sidecar is None else options.actions_per_sidecar
    )  # not `or`: 0 is an invalid value, not "unset"
    if per_sidecar <= 0:
        raise InvalidOption(f"--actions-per-sidecar must be positive, got {per_sidecar}", path=table)
    if options.stats is None:
        stats_json, stats_struct = snap.properties.write_stats_as_json, snap.properties.write_stats_as_struct
    else:
        stats_json, stats_struct = options.stats in ("json", "both"), options.stats in ("struct", "both")
    compression = (options.compression or snap.properties.parquet_compression or DEFAULT_COMPRESSION).lower()
    if compression not in ("zstd", "snappy", "gzip", "lz4", "none", "uncompressed"):
        raise InvalidOption(f"unsupported Parquet compression codec {compression!r}")
    return _Plan(
        spec=spec,
        naming=naming,
        manifest=options.manifest,
        sidecars=options.sidecars,
        actions_per_sidecar=per_sidecar,
        parts=parts or 1,
        stats_json=stats_json,
        stats_struct=stats_struct,
        compression=compression,
    )


def _row_order(df: DataFrame) -> list[Column]:
    """A total order of checkpoint rows, so that a file's bytes depend only on its rows (deterministic output).

    Non-file actions first (protocol, metaData, txn by appId, domainMetadata by domain), then file actions
    by path and deletion-vector id. Sorting happens within each Spark partition, after the hash partitioning.
    """
    names = set(df.columns)
    kind = F.lit(9)
    for ordinal, column in enumerate(("protocol", "metaData", "txn", "domainMetadata", "remove", "add")):
        if column in names:
            kind = F.when(F.col(column).isNotNull(), F.lit(ordinal)).otherwise(kind)
    path = F.coalesce(*[F.col(f"{c}.path") for c in ("add", "remove") if c in names])
    secondary = [F.col("txn.appId")] if "txn" in names else []
    secondary += [F.col("domainMetadata.domain")] if "domainMetadata" in names else []
    dv = F.coalesce(*[F.col(f"{c}.deletionVector") for c in ("add", "remove") if c in names])
    return [path, kind, *secondary, dv_unique_id(dv)]


def as_nullable(dtype: T.DataType) -> T.DataType:
    """The same type with every field, element and value nullable (map keys stay required)."""
    if isinstance(dtype, T.StructType):
        return T.StructType([T.StructField(f.name, as_nullable(f.dataType), True) for f in dtype.fields])
    if isinstance(dtype, T.ArrayType):
        return T.ArrayType(as_nullable(dtype.elementType), True)
    if isinstance(dtype, T.MapType):
        return T.MapType(dtype.keyType, as_nullable(dtype.valueType), True)
    return dtype


def _nullable_df(df: DataFrame) -> DataFrame:
    """Cast every column to its all-nullable type (Spark then writes every Parquet field optional)."""
    return df.select(*[F.col(f.name).cast(as_nullable(f.dataType)).alias(f.name) for f in df.schema.fields])


def _checkpoint_add(snap: Snapshot, plan: _Plan) -> Column:
    add = F.col("add")
    fields: list[Column] = []
    for name in CHECKPOINT_ADD_FIELDS:
        fields.append(F.lit(False).alias(name) if name == "dataChange" else add.getField(name).alias(name))
    if plan.stats_json:
        fields.append(add.getField("stats").alias("stats"))
    if plan.stats_struct:
        parsed_pv = partition_values_parsed(snap.metadata, add.getField("partitionValues"))
        if parsed_pv is not None:
            fields.append(parsed_pv.alias("partitionValues_parsed"))
        schema = stats_schema(snap.metadata, deletion_vectors="deletionVectors" in snap.reader_features)
        fields.append(parsed_stats(add.getField("stats"), schema).alias("stats_parsed"))
    return F.when(add.isNotNull(), F.struct(*fields))


def _checkpoint_remove() -> Column:
    remove = F.col("remove")
    fields = [
        F.lit(False).alias(n) if n == "dataChange" else remove.getField(n).alias(n)
        for n in CHECKPOINT_REMOVE_FIELDS
    ]
    return F.when(remove.isNotNull(), F.struct(*fields))


def _json_line(action: dict[str, Any]) -> str:
    return json.dumps(action, separators=(",", ":"), ensure_ascii=False)


def _actions_df(spark: SparkSession, actions: list[dict[str, Any]], columns: tuple[str, ...]) -> DataFrame:
    """A DataFrame of single-action rows from JSON-form actions (few: non-file actions only).

    Built from literals and ``from_json`` in the JVM — no Python worker is started.
    """
    schema = single_action_schema(columns)
    if not actions:
        return spark.range(0).select(*[F.lit(None).cast(f.dataType).alias(f.name) for f in schema.fields])
    lines = F.array(*[F.lit(_json_line(a)) for a in actions])
    parsed = (
        spark.range(1).select(F.explode(lines).alias("line")).select(F.from_json("line", schema).alias("a"))
    )
    return parsed.select(*[F.col("a").getField(f.name).alias(f.name) for f in schema.fields])


@dataclass
class _State:
    """The checkpoint rows of the state, persisted once, and their counts."""

    rows: DataFrame  # columns: V1_CHECKPOINT_COLUMNS, checkpoint-shaped add/remove
    adds: int
    removes: int
    non_file: list[dict[str, Any]]


def _state_rows(spark: SparkSession, snap: Snapshot, plan: _Plan) -> _State:
    non_file = snap.non_file_actions()
    file_rows = snap.files_df.select(
        F.lit(None).cast(ACTION_STRUCTS["txn"]).alias("txn"),
        F.col("add"),
        F.lit(None).cast(ACTION_STRUCTS["remove"]).alias("remove"),
    ).unionByName(
        snap.tombstones_df.select(
            F.lit(None).cast(ACTION_STRUCTS["txn"]).alias("txn"),
            F.lit(None).cast(ACTION_STRUCTS["add"]).alias("add"),
            F.col("remove"),
        )
    )
    for column in ("metaData", "protocol", "domainMetadata"):
        file_rows = file_rows.withColumn(column, F.lit(None).cast(ACTION_STRUCTS[column]))
    everything = _actions_df(spark, non_file, V1_CHECKPOINT_COLUMNS).unionByName(file_rows)
    shaped = everything.select(
        "txn", _checkpoint_add(snap, plan).alias("add"), _checkpoint_remove().alias("remove"),
        "metaData", "protocol", "domainMetadata",
    )  # fmt: skip
    rows = _nullable_df(shaped).persist(StorageLevel.MEMORY_AND_DISK)
    counts = rows.agg(
        F.sum(F.when(F.col("add").isNotNull(), 1).otherwise(0)).alias("adds"),
        F.sum(F.when(F.col("remove").isNotNull(), 1).otherwise(0)).alias("removes"),
    ).collect()[0]
    return _State(rows, int(counts["adds"] or 0), int(counts["removes"] or 0), non_file)


def _schema_json(schema: T.StructType) -> dict[str, Any]:
    value: dict[str, Any] = schema.jsonValue()
    return value


def _schema_for_hint(schema: T.StructType) -> dict[str, Any] | None:
    """delta-spark writes ``checkpointSchema`` only when its JSON is at most 20,000 characters."""
    value = _schema_json(schema)
    return value if len(json.dumps(value, separators=(",", ":"))) <= CHECKPOINT_SCHEMA_THRESHOLD else None


class _Writer:
    """One checkpoint write (see :func:`write_checkpoint`)."""

    def __init__(self, spark: SparkSession, snap: Snapshot, plan: _Plan, options: CheckpointOptions) -> None:
        self.spark = spark
        self.snap = snap
        self.plan = plan
        self.options = options
        self.progress = options.progress
        self.fault = options.fault if options.fault is not None else plan_from_env()
        self.log_dir = snap.listing.log_dir
        self.version = snap.version
        self.staging = StagingArea(self.log_dir)
        self.storage = LocalStorage()

    # -- staging + verification -------------------------------------------------------------

    def _partitioned(self, df: DataFrame, num: int) -> DataFrame:
        key = F.coalesce(F.col("add.path"), F.col("remove.path"))
        out = df.repartition(num, key).sortWithinPartitions(*_row_order(df))
        if self.fault.failing_tasks:
            out = out.where(task_fault_filter(self.fault))  # type: ignore[arg-type]
        return out

    def _stage_verified(
        self, df: DataFrame, label: str, *, num: int, fill_empty: bool, fmt: str, expect: ActionCounts
    ) -> tuple[list[StagedFile], dict[str, ActionCounts]]:
        with self.progress.phase(f"write {label} ({num} Spark task(s))"):
            self.spark.sparkContext.setJobDescription(f"delta-ckpt: write {label} of version {self.version}")
            staged = stage(df, self.staging.new_dir(label), fmt=fmt, compression=self.plan.compression,
                           num_partitions=num, fill_empty=fill_empty)  # fmt: skip
        with self.progress.phase(f"verify {label} (read back)"):
            counts = self._read_back(staged, fmt, df.schema)
            total = ActionCounts(
                rows=sum(c.rows for c in counts.values()),
                adds=sum(c.adds for c in counts.values()),
                removes=sum(c.removes for c in counts.values()),
            )
            if total != expect:
                raise SelfCheckFailed(
                    f"{label}: wrote {total.adds} add / {total.removes} remove / {total.rows} rows, but the state "
                    f"has {expect.adds} live files / {expect.removes} tombstones / {expect.rows} actions",
                    path=str(self.log_dir),
                    rule="CKPT-WRITE-005",
                )
        return staged, counts

    def _read_back(self, staged: list[StagedFile], fmt: str, schema: T.StructType) -> dict[str, ActionCounts]:
        if not staged:
            return {}
        uris = [to_uri(s.path) for s in staged]
        reader = self.spark.read.schema(schema)
        df = reader.parquet(*uris) if fmt == "parquet" else reader.json(uris)
        counts = read_back_counts(df)
        return {s.path.name: counts.get(s.path.name, ActionCounts(0, 0, 0)) for s in staged}

    # -- publication ---------------------------------------------------------------------------

    def _publish(self, staged: Path, name: str, role: str, counts: ActionCounts) -> WrittenFile:
        final = self.log_dir / name
        try:
            info = self._timestamped(publish(staged, final), final)
            kept = False
        except FileExistsError:
            # CKPT-WRITE-008: a classic file or part of the same version describes the same state; keep it.
            staged.unlink(missing_ok=True)
            existing = self.storage.stat(final)
            if existing is None or role == "sidecar":
                raise StorageError("a file with this name appeared and vanished", path=str(final)) from None
            info, counts, kept = existing, self._describe_existing(final), True
        return WrittenFile(
            name, role, info.size, info.mtime_ms, counts.rows, counts.adds, counts.removes, kept
        )

    def _timestamped(self, info: FileInfo, path: Path) -> FileInfo:
        """Apply ``file_time_ms`` (when set) to a file this writer just published."""
        if self.options.file_time_ms is None:
            return info
        ns = self.options.file_time_ms * 1_000_000
        os.utime(path, ns=(ns, ns))
        return FileInfo(info.name, info.size, self.options.file_time_ms)

    def _describe_existing(self, path: Path) -> ActionCounts:
        return read_back_counts(self.spark.read.parquet(to_uri(path))).get(path.name, ActionCounts(0, 0, 0))

    def _verify_sidecars(self, sidecars: list[WrittenFile]) -> None:
        for sc in sidecars:
            info = self.storage.stat(self.log_dir / sc.name)
            if info is None or info.size != sc.size_in_bytes:
                raise SelfCheckFailed(
                    f"sidecar {sc.name} is {'missing' if info is None else f'{info.size} bytes'}, "
                    f"recorded {sc.size_in_bytes}",
                    path=str(self.log_dir / sc.name),
                    rule="CKPT-WRITE-005",
                )

    # -- V1 ------------------------------------------------------------------------------------

    def write_v1(self, state: _State) -> tuple[list[WrittenFile], T.StructType]:
        num = self.plan.parts
        expect = ActionCounts(state.adds + state.removes + len(state.non_file), state.adds, state.removes)
        df = self._partitioned(state.rows, num)
        staged, counts = self._stage_verified(df, "checkpoint parts" if num > 1 else "checkpoint", num=num,
                                              fill_empty=True, fmt="parquet", expect=expect)  # fmt: skip
        self.fault.reached("staged")
        written = []
        with self.progress.phase("publish checkpoint file(s)"):
            for item in staged:
                name = (
                    part_checkpoint_name(self.version, item.partition + 1, num)
                    if num > 1
                    else classic_checkpoint_name(self.version)
                )
                written.append(
                    self._publish(item.path, name, "part" if num > 1 else "top-level", counts[item.path.name])
                )
        self.fault.reached("top-level")
        return written, state.rows.schema

    # -- V2 ------------------------------------------------------------------------------------

    def _checkpoint_metadata(
        self, state: _State, sidecars: list[WrittenFile], sidecar_schema: T.StructType
    ) -> dict[str, Any]:
        tags: dict[str, str] = {}
        if self.plan.sidecars:
            tags["sidecarNumActions"] = str(sum(s.rows for s in sidecars))
            tags["sidecarSizeInBytes"] = str(sum(s.size_in_bytes for s in sidecars))
        tags["numOfAddFiles"] = str(state.adds)
        if self.plan.sidecars:
            schema_text = json.dumps(_schema_json(sidecar_schema), separators=(",", ":"))
            if len(schema_text) <= CHECKPOINT_SCHEMA_THRESHOLD:
                tags["sidecarFileSchema"] = schema_text
        return {"checkpointMetadata": {"version": self.version, "tags": tags}}

    def write_sidecars(self, state: _State) -> tuple[list[WrittenFile], T.StructType]:
        file_rows = state.rows.where(F.col("add").isNotNull() | F.col("remove").isNotNull()).select(
            "add", "remove"
        )
        total = state.adds + state.removes
        num = max(1, math.ceil(total / self.plan.actions_per_sidecar))
        expect = ActionCounts(total, state.adds, state.removes)
        staged, counts = self._stage_verified(self._partitioned(file_rows, num), "sidecars", num=num,
                                              fill_empty=total == 0, fmt="parquet", expect=expect)  # fmt: skip
        staged = staged[:1] if total == 0 else staged  # an empty table gets one empty sidecar, as delta-spark
        self.fault.reached("staged")
        self.storage.ensure_dir(self.log_dir / SIDECAR_DIR)
        written = []
        with self.progress.phase(f"publish {len(staged)} sidecar(s)"):
            for index, item in enumerate(staged, start=1):
                name = f"{SIDECAR_DIR}/{sidecar_name(self.version, item.partition + 1, num, self.options.uuid_factory())}"
                written.append(self._publish(item.path, name, "sidecar", counts[item.path.name]))
                self.fault.reached(f"sidecars:{index}")
        self.fault.reached("sidecars")
        self._verify_sidecars(written)
        return written, file_rows.schema

    def write_v2(self, state: _State) -> tuple[list[WrittenFile], T.StructType | None, list[dict[str, Any]]]:
        sidecars: list[WrittenFile] = []
        sidecar_schema = T.StructType()
        if self.plan.sidecars:
            sidecars, sidecar_schema = self.write_sidecars(state)
        cp_meta = self._checkpoint_metadata(state, sidecars, sidecar_schema)
        sidecar_actions = [
            {
                "sidecar": {
                    "path": Path(s.name).name,
                    "sizeInBytes": s.size_in_bytes,
                    "modificationTime": s.modification_time,
                }
            }
            for s in sidecars
        ]
        head = [cp_meta, *sidecar_actions, *state.non_file]
        name = (
            uuid_checkpoint_name(self.version, self.options.uuid_factory(), self.plan.manifest)
            if self.plan.naming == "uuid"
            else classic_checkpoint_name(self.version)
        )
        fmt = "json" if name.endswith(".json") else "parquet"
        inline = (
            state.rows.where(F.col("add").isNotNull() | F.col("remove").isNotNull())
            if not self.plan.sidecars
            else None
        )
        top, schema = self._write_top_level(name, fmt, head, inline, state)
        self.fault.reached("top-level")
        return [*sidecars, top], schema, [*state.non_file, cp_meta]

    def _write_top_level(
        self, name: str, fmt: str, head: list[dict[str, Any]], inline: DataFrame | None, state: _State
    ) -> tuple[WrittenFile, T.StructType | None]:
        n_inline = (state.adds + state.removes) if inline is not None else 0
        expect = ActionCounts(len(head) + n_inline, state.adds if inline is not None else 0,
                              state.removes if inline is not None else 0)  # fmt: skip
        if fmt == "json" and inline is None:
            data = "".join(_json_line(a) + "\n" for a in head).encode("utf-8")
            with self.progress.phase("publish top-level file"):
                try:
                    info = self._timestamped(
                        self.storage.write_new(self.log_dir / name, data), self.log_dir / name
                    )
                except FileExistsError:
                    raise StorageError(
                        "a UUID-named checkpoint with this name exists", path=str(self.log_dir / name)
                    ) from None
            return WrittenFile(name, "top-level", info.size, info.mtime_ms, len(head), 0, 0), None
        # Parquet top-level file (or JSON with inline file actions): the same add/remove structs as the
        # sidecars would have, all null in the head rows.
        add_type = state.rows.schema["add"].dataType
        remove_type = state.rows.schema["remove"].dataType
        df = _nullable_df(
            _actions_df(self.spark, head, V2_TOP_LEVEL_COLUMNS).select(
                "txn", F.lit(None).cast(add_type).alias("add"), F.lit(None).cast(remove_type).alias("remove"),
                "metaData", "protocol", "domainMetadata", "checkpointMetadata", "sidecar",
            )
        )  # fmt: skip
        if inline is not None:
            extra = inline.select(*V1_CHECKPOINT_COLUMNS)
            for column in ("checkpointMetadata", "sidecar"):
                extra = extra.withColumn(column, F.lit(None).cast(as_nullable(ACTION_STRUCTS[column])))
            df = df.unionByName(_nullable_df(extra))
        staged, counts = self._stage_verified(df.coalesce(1), "top-level file", num=1, fill_empty=True, fmt=fmt,
                                              expect=expect)  # fmt: skip
        with self.progress.phase("publish top-level file"):
            written = self._publish(staged[0].path, name, "top-level", counts[staged[0].path.name])
        return written, (df.schema if fmt == "parquet" else None)


def _last_checkpoint_document(
    writer: _Writer,
    files: list[WrittenFile],
    schema: T.StructType | None,
    non_file: list[dict[str, Any]],
    adds: int,
) -> LastCheckpoint:
    plan = writer.plan
    top = [f for f in files if f.role != "sidecar"]
    sidecars = [f for f in files if f.role == "sidecar"]
    v2 = None
    checkpoint_schema = None
    if schema is not None:
        checkpoint_schema = (
            _schema_json(schema)
            if (plan.spec == "v2" and plan.naming == "uuid")
            else _schema_for_hint(schema)
        )
    if plan.spec == "v2" and plan.naming == "uuid":
        v2 = LastCheckpointV2(
            path=top[0].name,
            size_in_bytes=top[0].size_in_bytes,
            modification_time=top[0].modification_time,
            non_file_actions=trimmed(non_file, NON_FILE_ACTIONS_THRESHOLD),
            sidecar_files=trimmed(
                [SidecarRef(Path(s.name).name, s.size_in_bytes, s.modification_time) for s in sidecars],
                SIDECARS_THRESHOLD,
            ),
        )
    return LastCheckpoint(
        version=writer.version,
        size=sum(f.rows for f in files),
        parts=len(top) if plan.spec == "v1" and plan.parts > 1 else None,
        size_in_bytes=sum(f.size_in_bytes for f in files),
        num_of_add_files=adds,
        checkpoint_schema=checkpoint_schema,
        v2_checkpoint=v2,
    )


def _write_hint(writer: _Writer, hint: LastCheckpoint) -> tuple[dict[str, Any] | None, str | None]:
    """Write ``_last_checkpoint`` unless a valid hint already names a newer version (CKPT-LAST-011)."""
    existing, _ = read_hint(writer.log_dir)
    if existing is not None and existing.version > hint.version:
        return None, f"_last_checkpoint names the newer version {existing.version}; left unchanged"
    document = hint.to_document()
    with writer.progress.phase("write _last_checkpoint"):
        writer.storage.write_replace(
            writer.log_dir / LAST_CHECKPOINT, json.dumps(document, separators=(",", ":")).encode("utf-8")
        )
    return document, None


def _with_rule(exc: CheckpointError, rule: str) -> CheckpointError:
    """``exc`` naming the rule a checkpoint request breaks, unless it names one already."""
    if exc.rule is None:
        exc.rule = rule
    return exc


def require_checkpointable_table(table: str | Path) -> Path:
    """The table root; ``TABLE_NOT_FOUND`` (rule CKPT-READ-009) when it has no ``_delta_log``."""
    try:
        return require_table(table)
    except TableNotFound as exc:
        raise _with_rule(exc, "CKPT-READ-009") from None


def write_checkpoint(
    table: str | Path,
    version: int | None = None,
    options: CheckpointOptions | None = None,
    *,
    spark: SparkSession | None = None,
) -> CheckpointResult:
    """Write a checkpoint of ``version`` (default: latest) of ``table``. See the module docs."""
    options = options or CheckpointOptions()
    progress = options.progress
    started = time.perf_counter()
    root = require_checkpointable_table(table)
    log_dir = root / "_delta_log"
    if not os.access(log_dir, os.W_OK):
        raise StorageError(
            "the _delta_log directory is not writable, so no checkpoint can be published there",
            path=str(log_dir),
            rule="CKPT-WRITE-006",
        )
    if version is not None and not (log_dir / commit_name(version)).is_file():
        raise VersionNotFound(
            f"the commit file of version {version} is not in the log; a checkpoint needs it",
            path=str(log_dir / commit_name(version)),
            rule="CKPT-WRITE-001",
        )
    if spark is None:
        from reference_impl.spark.session import get_spark

        spark = get_spark()
    with progress.phase("replay the log"):
        try:
            snap = read_snapshot(spark, root, version=version, now_ms=options.now_ms)
        except TableNotFound as exc:  # a _delta_log without any commit or checkpoint
            raise _with_rule(exc, "CKPT-READ-009") from None
        except UnsupportedReaderFeature as exc:
            raise _with_rule(exc, "CKPT-FEAT-006") from None
        except VersionNotFound as exc:
            raise _with_rule(exc, "CKPT-WRITE-001") from None
    if snap.version not in snap.listing.commits:
        raise VersionNotFound(
            f"the commit file of version {snap.version} is not in the log; a checkpoint needs it",
            path=str(log_dir / commit_name(snap.version)),
            rule="CKPT-WRITE-001",
        )
    plan = resolve_plan(options, snap)
    writer = _Writer(spark, snap, plan, options)
    state: _State | None = None
    try:
        with progress.phase("reconcile and count the state"):
            state = _state_rows(spark, snap, plan)
        schema: T.StructType | None
        if plan.spec == "v1":
            files, schema = writer.write_v1(state)
            non_file = state.non_file
        else:
            files, schema, non_file = writer.write_v2(state)
        hint = _last_checkpoint_document(writer, files, schema, non_file, state.adds)
        document, skipped = (
            (None, "disabled") if not options.write_last_checkpoint else _write_hint(writer, hint)
        )
    finally:
        writer.staging.remove()
        if state is not None:
            state.rows.unpersist()
    progress.timings["total"] = round(time.perf_counter() - started, 3)
    return CheckpointResult(
        table=str(root),
        version=snap.version,
        spec=plan.spec,
        naming=plan.naming,
        manifest=plan.manifest if plan.naming == "uuid" else None,
        files=files,
        num_add_files=state.adds,
        num_remove_files=state.removes,
        num_non_file_actions=len(state.non_file),
        last_checkpoint=document,
        last_checkpoint_skipped=skipped,
        timings=dict(progress.timings),
    )


def write_top_level_file(
    spark: SparkSession,
    snap: Snapshot,
    name: str,
    head: list[dict[str, Any]],
    inline: DataFrame | None = None,
    *,
    options: CheckpointOptions | None = None,
) -> WrittenFile:
    """Publish one V2 Parquet top-level file ``name`` (in ``_delta_log``) of version ``snap.version``.

    The file holds the ``head`` actions (``checkpointMetadata``, ``sidecar`` and non-file actions, in
    JSON form) and, when ``inline`` is given, its file actions (a DataFrame with ``add`` and ``remove``
    columns; they are reshaped as the writer shapes checkpoint rows: ``dataChange`` false,
    ``stats_parsed`` per the table's properties). It goes through the writer's own path — staged by
    Spark, read back and counted, published create-if-absent (an existing file of that name is kept,
    ``kept_existing``) — with the ``add``/``remove`` column types the writer uses.
    ``_last_checkpoint`` is not touched.

    The cleaner writes compatibility checkpoints (a classic-named copy of a UUID-named top-level
    file, spec §13) with it.
    """
    options = options or CheckpointOptions(spec="v2", naming="classic", manifest="parquet", fault=FaultPlan())
    plan = resolve_plan(options, snap)
    writer = _Writer(spark, snap, plan, options)
    columns = V1_CHECKPOINT_COLUMNS
    if inline is None:
        add_type = snap.files_df.select(_checkpoint_add(snap, plan).alias("add")).schema["add"].dataType
        remove_type = (
            snap.tombstones_df.select(_checkpoint_remove().alias("remove")).schema["remove"].dataType
        )
        types = {**{c: ACTION_STRUCTS[c] for c in columns}, "add": add_type, "remove": remove_type}
        rows = spark.range(0).select(*[F.lit(None).cast(as_nullable(types[c])).alias(c) for c in columns])
        adds = removes = 0
    else:
        rows = inline.select(
            *[
                F.col(c) if c in inline.columns else F.lit(None).cast(ACTION_STRUCTS[c]).alias(c)
                for c in columns
            ]
        )
        shaped = rows.select("txn", _checkpoint_add(snap, plan).alias("add"), _checkpoint_remove().alias("remove"),
                             "metaData", "protocol", "domainMetadata")  # fmt: skip
        rows = _nullable_df(shaped)
        counts = rows.agg(
            F.sum(F.when(F.col("add").isNotNull(), 1).otherwise(0)).alias("adds"),
            F.sum(F.when(F.col("remove").isNotNull(), 1).otherwise(0)).alias("removes"),
        ).collect()[0]
        adds, removes = int(counts["adds"] or 0), int(counts["removes"] or 0)
    state = _State(rows, adds, removes, [])
    try:
        written, _ = writer._write_top_level(
            name, "parquet", head, rows if inline is not None else None, state
        )
    finally:
        writer.staging.remove()
    return written
