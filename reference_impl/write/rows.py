"""Checkpoint rows: the state of a version shaped as checkpoint actions, in a deterministic order.

Spec: ``spec/checkpoints.md`` §6 Checkpoint content (``CKPT-CONTENT-*``: ``dataChange`` false),
§7 Parquet layout (column and field order, every field optional), §8 Statistics (``stats``,
``stats_parsed``, ``partitionValues_parsed``), §17.4 Determinism.

| function | gives |
|---|---|
| :func:`state_rows` | every action of the state as a checkpoint row (for an incremental checkpoint, the actions its reused sidecars do not hold: :class:`PartialState`): counted (persisted once) or, when the writer needs no count before writing, lazy — counted by the job that writes it |
| :func:`shape_rows` | given ``add``/``remove`` rows (a compatibility copy's inline actions) shaped the same way |
| :func:`empty_rows` | no rows, with the checkpoint row schema (a top-level file without inline actions) |
| :func:`actions_df` | a few JSON-form actions (non-file actions, ``checkpointMetadata``, ``sidecar``) as rows |
| :func:`row_order` | the total order of rows inside a file, so a file's bytes depend only on its rows |
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark import StorageLevel
from pyspark.sql import functions as F
from pyspark.sql import types as T

from reference_impl.log.actions import (
    CHECKPOINT_ADD_FIELDS,
    CHECKPOINT_REMOVE_FIELDS,
    FILE_ACTIONS,
    V1_CHECKPOINT_COLUMNS,
)
from reference_impl.spark.columns import as_nullable, dv_unique_id, nullable_df
from reference_impl.spark.schemas import ACTION_STRUCTS, single_action_schema
from reference_impl.spark.stats import parsed_stats, partition_values_parsed, stats_schema
from reference_impl.write.result import WrittenFile
from reference_impl.write.staging import ActionCounts

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from reference_impl.read.snapshot import Snapshot
    from reference_impl.write.options import CheckpointPlan


@dataclass
class CheckpointRows:
    """The checkpoint rows of a state and their counts (``rows`` has the columns of a V1 checkpoint).

    An incremental checkpoint's state is partly held by sidecars of an earlier checkpoint listed
    again (``reused``): ``rows`` hold the rest, ``adds`` and ``removes`` count the whole state.

    An uncounted state (``counted`` false) is not persisted and its counts are 0 until
    :meth:`count_from` sets them from what the job that wrote ``rows`` saw (and the reused
    sidecars' recorded counts).
    """

    rows: DataFrame
    adds: int
    removes: int
    non_file: list[dict[str, Any]]
    #: Characters of the file actions' ``path`` and ``stats`` in ``rows`` (an estimate of their size, for sizing).
    estimated_bytes: int = 0
    reused: list[WrittenFile] = field(default_factory=list)
    counted: bool = True
    #: An uncounted state's file rows already in the ``partitions`` hash partitions its sidecars are
    #: written from (:meth:`~reference_impl.read.snapshot.Snapshot.partitioned_state`), or None.
    files: DataFrame | None = None
    partitions: int | None = None

    def count_from(self, written: ActionCounts) -> None:
        """The counts of an uncounted state: the adds and removes its write job saw, plus the reused
        sidecars' (their ``sidecar`` actions' tags, ``CKPT-INC-006``)."""
        assert not self.counted, "a counted state is not counted again"
        self.adds = written.adds + sum(f.adds for f in self.reused)
        self.removes = written.removes + sum(f.removes for f in self.reused)
        self.counted = True

    @property
    def file_actions(self) -> int:
        return self.adds + self.removes

    def to_write(self) -> ActionCounts:
        """File actions, adds and removes ``rows`` hold: the state's minus the reused sidecars'."""
        reused = ActionCounts.total({f.name: ActionCounts(f.rows, f.adds, f.removes) for f in self.reused})
        return ActionCounts(
            self.file_actions - reused.rows, self.adds - reused.adds, self.removes - reused.removes
        )

    def file_rows(self) -> DataFrame:
        """Only the ``add`` and ``remove`` rows, with only those two columns (:attr:`files` when set)."""
        if self.files is not None:
            return self.files
        return self.rows.where(_is_file_action()).select(*FILE_ACTIONS)


def _is_file_action() -> Column:
    return F.col("add").isNotNull() | F.col("remove").isNotNull()


def row_order(df: DataFrame) -> list[Column]:
    """A total order of checkpoint rows, so that a file's bytes depend only on its rows (deterministic output).

    Non-file actions first (protocol, metaData, txn by appId, domainMetadata by domain), then file actions
    by path and deletion-vector id. Sorting happens within each Spark partition, after the hash partitioning.
    """
    names = set(df.columns)
    kind = F.lit(9)
    for ordinal, column in enumerate(("protocol", "metaData", "txn", "domainMetadata", "remove", "add")):
        if column in names:
            kind = F.when(F.col(column).isNotNull(), F.lit(ordinal)).otherwise(kind)
    path = F.coalesce(*[F.col(f"{c}.path") for c in FILE_ACTIONS if c in names])
    secondary = [F.col("txn.appId")] if "txn" in names else []
    secondary += [F.col("domainMetadata.domain")] if "domainMetadata" in names else []
    dv = F.coalesce(*[F.col(f"{c}.deletionVector") for c in FILE_ACTIONS if c in names])
    return [path, kind, *secondary, dv_unique_id(dv)]


def checkpoint_add(snap: Snapshot, plan: CheckpointPlan) -> Column:
    """The ``add`` column of a checkpoint: checkpoint field order, ``dataChange`` false, stats as planned."""
    add = F.col("add")
    fields: list[Column] = []
    for name in CHECKPOINT_ADD_FIELDS:
        value = _nullable_in(add, F.lit(False)) if name == "dataChange" else add.getField(name)
        fields.append(value.alias(name))
    if plan.stats_json:
        fields.append(add.getField("stats").alias("stats"))
    if plan.stats_struct:
        parsed_pv = partition_values_parsed(snap.metadata, add.getField("partitionValues"))
        if parsed_pv is not None:
            fields.append(_nullable_in(add, parsed_pv).alias("partitionValues_parsed"))
        schema = stats_schema(snap.metadata, deletion_vectors="deletionVectors" in snap.reader_features)
        fields.append(parsed_stats(add.getField("stats"), schema).alias("stats_parsed"))
    return F.when(add.isNotNull(), F.struct(*fields))


def checkpoint_remove() -> Column:
    """The ``remove`` column of a checkpoint: no stats, no tags, ``dataChange`` false."""
    remove = F.col("remove")
    fields = [
        (_nullable_in(remove, F.lit(False)) if n == "dataChange" else remove.getField(n)).alias(n)
        for n in CHECKPOINT_REMOVE_FIELDS
    ]
    return F.when(remove.isNotNull(), F.struct(*fields))


def _nullable_in(action: Column, value: Column) -> Column:
    """``value`` for a field of the shaped ``action`` (built only where ``action`` is not null), typed
    nullable: the shaped action then has its all-nullable type already and the cast of
    :func:`~reference_impl.spark.columns.nullable_df` is no second copy of every row's action (Spark
    drops a cast to the same type; a literal ``false`` or a ``struct(…)`` is not nullable). Issue #12."""
    return F.when(action.isNotNull(), value)


def json_line(action: dict[str, Any]) -> str:
    return json.dumps(action, separators=(",", ":"), ensure_ascii=False)


def actions_df(spark: SparkSession, actions: list[dict[str, Any]], columns: tuple[str, ...]) -> DataFrame:
    """A DataFrame of single-action rows from JSON-form actions (few: non-file actions only).

    Built from literals and ``from_json`` in the JVM — no Python worker is started — in one ``select``
    (``inline`` of the parsed lines: a row per action, a column per field; Spark analyses every
    DataFrame as it is made, issue #12).
    """
    schema = single_action_schema(columns)
    if not actions:
        return spark.range(0).select(*[F.lit(None).cast(f.dataType).alias(f.name) for f in schema.fields])
    lines = F.array(*[F.lit(json_line(a)) for a in actions])
    return spark.range(1).select(F.inline(F.transform(lines, lambda line: F.from_json(line, schema))))


def _v1_columns(rows: DataFrame) -> DataFrame:
    """``rows`` (any subset of the V1 checkpoint columns, e.g. a state's ``add``, ``remove``) with the
    V1 checkpoint columns, the missing ones null: one ``select`` (Spark analyses every DataFrame as it
    is made; issue #12)."""
    present = set(rows.columns)
    return rows.select(
        *[
            F.col(c) if c in present else F.lit(None).cast(ACTION_STRUCTS[c]).alias(c)
            for c in V1_CHECKPOINT_COLUMNS
        ]
    )


def _shaped(rows: DataFrame, snap: Snapshot, plan: CheckpointPlan) -> DataFrame:
    """V1 checkpoint columns with checkpoint-shaped ``add``/``remove``, every field nullable."""
    shaped = rows.select(
        "txn",
        checkpoint_add(snap, plan).alias("add"),
        checkpoint_remove().alias("remove"),
        "metaData",
        "protocol",
        "domainMetadata",
    )
    return nullable_df(shaped)


def _counts(rows: DataFrame) -> tuple[int, int, int]:
    """Adds, removes and estimated bytes (path and stats lengths) of ``rows``: one aggregation."""
    length = F.coalesce(F.length("add.path"), F.length("remove.path"), F.lit(0))
    add_type = rows.schema["add"].dataType
    if isinstance(add_type, T.StructType) and "stats" in add_type.names:
        length = length + F.coalesce(F.length("add.stats"), F.lit(0))
    counts = rows.agg(
        F.count("add").alias("adds"), F.count("remove").alias("removes"), F.sum(length).alias("bytes")
    ).collect()[0]
    return int(counts["adds"] or 0), int(counts["removes"] or 0), int(counts["bytes"] or 0)


@dataclass(frozen=True)
class PartialState:
    """An incremental checkpoint's state (:mod:`~reference_impl.write.incremental`): ``reused`` sidecars
    listed again hold part of it; ``changed`` (state rows: ``add``, ``remove``) and ``carried`` (rows
    of rewritten sidecars, already checkpoint rows) hold the rest, replayed from ``replayed`` bytes:
    the commits after the base and the rewritten sidecars (:func:`~reference_impl.write.sizing.log_estimate`
    sizes the sidecars they are written to). ``changed(n)`` plans the changes reconciled in ``n``
    hash partitions (``None``: Spark's), built once per write (Spark analyses a plan as it is made);
    with ``partitioned`` (no rows ``carried``: an append) its sidecars are written from the
    reconciliation's own shuffle, as a full state's (:meth:`~reference_impl.read.snapshot.Snapshot.partitioned_state`).
    ``rows``, when known: at most that many rows to write (the commits' file actions, counted by the
    search for touched files, plus the rewritten sidecars' rows)."""

    reused: list[WrittenFile]
    changed: Callable[[int | None], DataFrame]
    carried: DataFrame | None
    replayed: tuple[int, int]
    partitioned: bool = False
    rows: int | None = None


def state_rows(
    spark: SparkSession,
    snap: Snapshot,
    plan: CheckpointPlan,
    partial: PartialState | None = None,
    *,
    count: bool = True,
    partitions: int | None = None,
) -> CheckpointRows:
    """Every action of the snapshot's state as a checkpoint row, persisted (the caller unpersists);
    with ``partial``, only the actions its reused sidecars do not hold (counts: the whole state's).

    With ``count`` false nothing runs: the rows stay lazy, for one job that replays, reconciles,
    shapes and writes them (:meth:`CheckpointRows.count_from`); with ``partitions`` too, the
    ``partitions`` sidecars are written from them, and the file rows (:attr:`CheckpointRows.files`)
    of a full state, or of an incremental one without carried rows (:attr:`PartialState.partitioned`),
    come reconciled in that many partitions (one shuffle)."""
    non_file = snap.non_file_actions()
    # One reconciliation for the rows and the file rows: in the sidecars' partitions when they are
    # written from its shuffle.
    by = None if count or (partial is not None and not partial.partitioned) else partitions
    if partial is not None:
        state = partial.changed(by)
    else:
        state = snap.state_df if by is None else snap.partitioned_state(by)
    # The state is shaped once, for the rows and the file rows; the non-file rows apart (a row's shape
    # does not depend on the others: the same rows as shaping their union). Issue #12: each DataFrame
    # built is a Catalyst analysis of these wide nested schemas on the driver.
    shaped_state = _shaped(_v1_columns(state), snap, plan)
    head = _shaped(actions_df(spark, non_file, V1_CHECKPOINT_COLUMNS), snap, plan)
    shaped = head.unionByName(shaped_state)
    if partial is not None and partial.carried is not None:
        carried = partial.carried.select(
            *[
                F.col(c) if c in FILE_ACTIONS else F.lit(None).cast(shaped.schema[c].dataType).alias(c)
                for c in V1_CHECKPOINT_COLUMNS
            ]
        )
        shaped = shaped.unionByName(carried)
    reused = [] if partial is None else partial.reused
    if not count:
        files = None if by is None else shaped_state.select(*FILE_ACTIONS)
        return CheckpointRows(
            shaped, 0, 0, non_file, reused=reused, counted=False, files=files, partitions=partitions
        )
    assert partitions is None, "a counted state is partitioned as it is written"
    rows = shaped.persist(StorageLevel.MEMORY_AND_DISK)
    adds, removes, estimated_bytes = _counts(rows)
    return CheckpointRows(
        rows,
        adds + sum(f.adds for f in reused),
        removes + sum(f.removes for f in reused),
        non_file,
        estimated_bytes,
        reused,
    )


def shape_rows(inline: DataFrame, snap: Snapshot, plan: CheckpointPlan) -> CheckpointRows:
    """Given ``add``/``remove`` rows (any subset of the V1 columns) as checkpoint rows, counted."""
    shaped = _shaped(_v1_columns(inline), snap, plan)
    adds, removes, estimated_bytes = _counts(shaped)
    return CheckpointRows(shaped, adds, removes, [], estimated_bytes)


def empty_rows(spark: SparkSession, snap: Snapshot, plan: CheckpointPlan) -> CheckpointRows:
    """No rows, with the column types :func:`state_rows` would give (``add`` as this plan shapes it)."""
    # From typed nulls of the replayed file actions' types (ADD, REMOVE: a checkpoint's are conformed
    # to them, the commits are read with them), not from the replay: an incremental write never plans
    # the scan of the whole state.
    files = spark.range(0).select(*[F.lit(None).cast(ACTION_STRUCTS[c]).alias(c) for c in FILE_ACTIONS])
    add_type = files.select(checkpoint_add(snap, plan).alias("add")).schema["add"].dataType
    remove_type = files.select(checkpoint_remove().alias("remove")).schema["remove"].dataType
    types = {**{c: ACTION_STRUCTS[c] for c in V1_CHECKPOINT_COLUMNS}, "add": add_type, "remove": remove_type}
    rows = spark.range(0).select(
        *[F.lit(None).cast(as_nullable(types[c])).alias(c) for c in V1_CHECKPOINT_COLUMNS]
    )
    return CheckpointRows(rows, 0, 0, [])
