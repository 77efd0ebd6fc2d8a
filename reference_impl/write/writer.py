"""The reference checkpoint writer: V1 classic, multi-part, V2 (UUID- or classic-named, JSON/Parquet, sidecars).

Spec: ``spec/checkpoints.md`` §5 (which spec and naming), §6 content, §7 Parquet layout, §8 stats,
§10 multi-part, §11 V2, §12 sidecars, §14 ``_last_checkpoint``, §17 writer rules.

Usage::

    result = write_checkpoint("/path/to/table")                      # defaults follow the table
    result = write_checkpoint(path, options=CheckpointOptions(spec="v2", top_level_format="parquet"))

:func:`write_checkpoint`, step by step (§17.2 publication order):

1. check the table and the version (``_delta_log`` writable, the version's commit present;
   :mod:`~reference_impl.write.preconditions`, no Spark);
2. replay the version (:func:`~reference_impl.read.snapshot.read_snapshot`), refuse a protocol that
   lists a writer feature the writer does not support (``CKPT-WRITE-010``,
   :mod:`~reference_impl.log.features`), and resolve the options against it
   (:func:`~reference_impl.write.options.resolve_plan`);
3. shape the state as checkpoint rows (:mod:`~reference_impl.write.rows`): counted once when the
   write needs the counts first (``--actions-per-sidecar``, V2 without sidecars, whose top-level
   file records ``numOfAddFiles``), else lazy — then one Spark job replays, reconciles, shapes,
   writes and counts the state (``DataFrame.observe`` in the writing tasks,
   :class:`~reference_impl.write.staging.ObservedCounts`), and sidecars are sized from the bytes of
   the log replayed (:func:`~reference_impl.write.sizing.log_estimate`) before it, so that the
   reconciliation's shuffle makes the sidecars' partitions
   (:meth:`~reference_impl.read.snapshot.Snapshot.partitioned_state`: one shuffle in the job). An
   incremental state is written the same way: only its rows that no reused sidecar holds, sized
   from the bytes they are replayed from (the commits after the base, the rewritten sidecars), its
   counts those the write observed plus the reused sidecars' recorded ones;
4. write sidecars or parts with Spark's executors and **read them back**: the add/remove/row counts
   must equal the state's. A sidecar is created by its task at its final unique name in
   ``_sidecars/`` (:mod:`~reference_impl.write.task_files`: pyarrow encodes it, the store's task sink
   creates it, create-if-absent; the driver chose the names); a failure before the top-level file
   deletes this run's sidecars and their tasks' temp files. Parts and classic files are staged
   (:mod:`~reference_impl.write.staging`);
5. re-check each sidecar, then publish the part(s) or the top-level file create-if-absent
   (:mod:`~reference_impl.write.publish`): a classic name another writer took after this one listed
   the log is ``CHECKPOINT_CONFLICT``, and this writer first deletes the sidecars it wrote
   (``CKPT-WRITE-006``; spec note under ``CKPT-WRITE-008``) — but a store's failure to create the
   top-level file leaves them, named in the error (the file may exist all the same; if not, sidecar
   cleanup collects them, ``CKPT-CLEAN-017``); an incremental checkpoint re-checks its reused sidecars
   after publication too, and when one is gone removes its top-level file, replays again and writes
   the checkpoint in full (``CKPT-INC-005``);
6. replace ``_last_checkpoint`` atomically, never with an older version (:mod:`~reference_impl.write.hint`).

A failure before the top-level file leaves at most unreferenced sidecars: no reader sees a change.
Multi-part parts are Spark hash partitions of ``coalesce(add.path, remove.path)`` — the
partitioning delta-spark uses — so a re-run or a zombie task writes the same rows into the same
part (§17.4).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from pyspark.sql import functions as F
from pyspark.sql import types as T

from reference_impl.errors import (
    CheckpointConflict,
    CheckpointCorrupt,
    CheckpointError,
    ReusedSidecarGone,
    SelfCheckFailed,
    StorageError,
    TableNotFound,
    UnsupportedReaderFeature,
    VersionNotFound,
)
from reference_impl.hooks import PublicationPoint
from reference_impl.log.actions import V1_CHECKPOINT_COLUMNS, V2_TOP_LEVEL_COLUMNS
from reference_impl.log.features import check_writer_features
from reference_impl.log.last_checkpoint import CHECKPOINT_SCHEMA_THRESHOLD
from reference_impl.log.naming import (
    SIDECAR_DIR,
    classic_checkpoint_name,
    commit_name,
    parse_log_file_name,
    part_checkpoint_name,
    sidecar_name,
    uuid_checkpoint_name,
)
from reference_impl.log.table import Table
from reference_impl.read.snapshot import Snapshot, read_snapshot, replayed_bytes
from reference_impl.spark.columns import as_nullable, nullable_df
from reference_impl.spark.jobs import job_group, spark_errors
from reference_impl.spark.schemas import ACTION_STRUCTS
from reference_impl.spark.session import session_source, size_queries
from reference_impl.storage import FileInfo, Location, SessionSource
from reference_impl.storage.listed_scan import listed_scan
from reference_impl.storage.local import is_temp_of
from reference_impl.write.hint import last_checkpoint_document, schema_json, write_hint
from reference_impl.write.incremental import layout_tags, plan_partial, sidecar_tags, with_name_set
from reference_impl.write.name_sets import name_set_file, row_name_hash
from reference_impl.write.options import CheckpointOptions, CheckpointPlan, resolve_plan
from reference_impl.write.preconditions import (
    CheckpointRequest,
    checked_request,
    require_checkpointable_table,
    with_rule,
)
from reference_impl.write.publish import Publisher
from reference_impl.write.result import CheckpointResult, FileRole, WrittenFile
from reference_impl.write.rows import (
    CheckpointRows,
    PartialState,
    actions_df,
    empty_rows,
    json_line,
    row_order,
    shape_rows,
    state_rows,
)
from reference_impl.write.sizing import log_estimate, sidecar_count
from reference_impl.write.staging import (
    ActionCounts,
    ObservedCounts,
    StagedFile,
    StagingArea,
    read_back_counts,
    stage,
)
from reference_impl.write.task_files import (
    ParquetLayout,
    SidecarTask,
    TaskFile,
    on_driver,
    write_empty,
    write_sidecar_files,
)
from spec.vocabulary import CheckpointNaming, CheckpointSpec, LogFileKind, TopLevelFormat

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: Why a classic name or part was not published (:mod:`~reference_impl.write.publish`): another writer
#: won the race, or the file there is empty or unreadable; either way this writer withdraws the same.
NotPublished = CheckpointConflict | CheckpointCorrupt
_Error = TypeVar("_Error", bound=CheckpointError)
_NOT_PUBLISHED = (CheckpointConflict, CheckpointCorrupt)


class _Writer:
    """One checkpoint write of ``snap``: staging, verification and publication of its files.

    A classic file or part found taken at publication is kept when the writer's listing of the log
    held it already (an earlier run's, ``CKPT-WRITE-008``), or always with ``keep_any_taken`` (the
    cleaner's compatibility checkpoint); else another writer won the race: ``CHECKPOINT_CONFLICT``
    (:mod:`~reference_impl.write.publish`).
    """

    def __init__(
        self,
        spark: SparkSession,
        snap: Snapshot,
        plan: CheckpointPlan,
        options: CheckpointOptions,
        *,
        keep_any_taken: bool = False,
    ) -> None:
        self.spark = spark
        self.snap = snap
        self.plan = plan
        self.options = options
        self.hooks = options.hooks
        self.progress = options.progress
        self.log_dir = snap.listing.log_dir
        self.version = snap.version
        self.storage = snap.storage
        self.staging = StagingArea(self.storage, self.log_dir)
        #: An incremental write's plan (:meth:`plan_partial`); None: the whole state is written.
        self.partial: PartialState | None = None
        listing = snap.listing
        listed = {f.name for cp in listing.checkpoints for f in cp.files} | set(listing.incomplete)
        self.publisher = Publisher(
            spark,
            self.storage,
            self.log_dir,
            options.file_time_ms,
            (lambda _: True) if keep_any_taken else listed.__contains__,
        )

    # -- staging + verification -------------------------------------------------------------

    def _partitioned(self, df: DataFrame, num: int, *, done: bool = False) -> DataFrame:
        """``df`` in ``num`` hash partitions of the raw path (delta-spark's partitioning), sorted;
        with ``done``, ``df`` is in its partitions already (:meth:`Snapshot.partitioned_state`)."""
        if not done:
            df = df.repartition(num, F.coalesce(F.col("add.path"), F.col("remove.path")))
        return self.hooks.prepare(df.sortWithinPartitions(*row_order(df)))

    def _estimate(self) -> tuple[int, int]:
        """(file actions, action bytes) to write of a state not counted before it is written, from the
        bytes of the log replayed (module docs of :mod:`reference_impl.write.sizing`); for an
        incremental state (:attr:`partial`), of what its rows to write are replayed from, and no more
        actions than its plan's bound (:attr:`PartialState.rows`)."""
        if self.partial is None:
            return log_estimate(*replayed_bytes(self.snap.segment, self.snap.checkpoint))
        actions, estimated_bytes = log_estimate(*self.partial.replayed)
        if self.partial.rows is not None:
            actions = min(actions, self.partial.rows)
        return actions, estimated_bytes

    def estimated_sidecars(self) -> int:
        """How many sidecars a state gets that is not counted before it is written (:meth:`_estimate`);
        for an incremental state no sidecar only to use another core: the change is small (an
        append's), and each sidecar more is a small one the next checkpoints list again until
        compaction rewrites it, and a sidecar task more, which starts a Python worker of its own."""
        cores = self.spark.sparkContext.defaultParallelism if self.partial is None else 1
        return sidecar_count(*self._estimate(), cores, None)

    def _stage_verified(
        self,
        df: DataFrame,
        label: str,
        *,
        num: int,
        fill_empty: bool,
        fmt: str,
        expect: ActionCounts | ObservedCounts,
    ) -> tuple[list[StagedFile], dict[str, ActionCounts]]:
        with self.progress.phase(f"write {label} ({num} Spark task(s))"):
            self.spark.sparkContext.setJobDescription(f"delta-ckpt: write {label} of version {self.version}")
            staged = stage(
                df,
                self.storage,
                self.staging.new_dir(label),
                fmt=fmt,
                compression=self.plan.compression,
                num_partitions=num,
                fill_empty=fill_empty,
            )
        with self.progress.phase(f"verify {label} (read back)"):
            counts = self._read_back(staged, fmt, df.schema)
            self._check_counts(label, ActionCounts.total(counts), expect)
        return staged, counts

    def _check_counts(self, label: str, total: ActionCounts, expect: ActionCounts | ObservedCounts) -> None:
        """``CKPT-WRITE-005``: the rows read back are the state's."""
        want = expect.get() if isinstance(expect, ObservedCounts) else expect
        if total != want:
            raise SelfCheckFailed(
                f"{label}: wrote {total.adds} add / {total.removes} remove / {total.rows} rows, but the state "
                f"has {want.adds} live files / {want.removes} tombstones / {want.rows} actions",
                path=str(self.log_dir),
                rule="CKPT-WRITE-005",
            )

    def _expectation(
        self, state: CheckpointRows, df: DataFrame, non_file_rows: int = 0
    ) -> tuple[DataFrame, ActionCounts | ObservedCounts]:
        """What the files written from ``df`` (``state``'s file actions still to write, and
        ``non_file_rows`` other rows) must hold: the state's counts, known before the write (a counted
        state) or observed by the write job itself (:class:`ObservedCounts`, which wraps ``df``: the job
        must consume the returned DataFrame), after which :meth:`CheckpointRows.count_from` counts the
        state from the files read back."""
        if state.counted:
            known = state.to_write()
            return df, ActionCounts(known.rows + non_file_rows, known.adds, known.removes)
        observed = ObservedCounts(df)  # observed in the write tasks, after the shuffle (see ObservedCounts)
        return observed.df, observed

    def _stage_state(
        self, state: CheckpointRows, label: str, *, num: int
    ) -> tuple[list[StagedFile], dict[str, ActionCounts]]:
        """Stage every row of ``state`` in ``num`` partitions (an empty file for an empty one), checked
        against the state's counts (:meth:`_expectation`)."""
        df, expect = self._expectation(state, self._partitioned(state.rows, num), len(state.non_file))
        staged, counts = self._stage_verified(
            df, label, num=num, fill_empty=True, fmt="parquet", expect=expect
        )
        if not state.counted:  # the check passed: the files hold what the job observed
            state.count_from(ActionCounts.total(counts))
        return staged, counts

    def _read_back(self, staged: list[StagedFile], fmt: str, schema: T.StructType) -> dict[str, ActionCounts]:
        if not staged:
            return {}
        directory = staged[0].path.parent
        strays = [s.path.name for s in staged if s.path.parent != directory]
        if strays:
            raise SelfCheckFailed(
                f"staged file(s) {', '.join(strays)} not in {directory.name}",
                path=str(directory),
                rule="CKPT-WRITE-005",
            )
        return self._counted_back(directory, [s.path.name for s in staged], fmt, schema)[1]

    def _counted_back(
        self, directory: Location, names: list[str], fmt: str, schema: T.StructType
    ) -> tuple[dict[str, FileInfo], dict[str, ActionCounts]]:
        """The files ``names`` in ``directory`` read back (``CKPT-WRITE-005``): one listing of the
        directory gives Spark every file's status (no probe per file), one scan counts each file's rows
        (and, for an incremental write, its name hashes). Their listed statuses and counts, by name."""
        listed = {info.name: info for info in self.storage.list_dir(directory)}
        missing = [n for n in names if n not in listed]
        if missing:
            raise SelfCheckFailed(
                f"file(s) {', '.join(missing)} written, not in {directory.name}",
                path=str(directory),
                rule="CKPT-WRITE-005",
            )
        df = listed_scan(self.spark, directory, [listed[n] for n in names], fmt, schema, {})
        counts = read_back_counts(df, row_name_hash() if self.plan.incremental else None)
        return listed, {n: counts.get(n, ActionCounts(0, 0, 0)) for n in names}

    # -- V1 ------------------------------------------------------------------------------------

    def write_v1(self, state: CheckpointRows) -> tuple[list[WrittenFile], T.StructType]:
        """One classic file, or the parts of a multi-part checkpoint."""
        num = self.plan.parts
        label = "checkpoint parts" if num > 1 else "checkpoint"
        staged, counts = self._stage_state(state, label, num=num)
        self.hooks.reached(PublicationPoint.STAGED)
        written: list[WrittenFile] = []
        with self.progress.phase("publish checkpoint file(s)"):
            for item in staged:
                if num > 1:
                    name, role = part_checkpoint_name(self.version, item.partition + 1, num), FileRole.PART
                else:
                    name, role = classic_checkpoint_name(self.version), FileRole.TOP_LEVEL
                try:
                    written.append(self.publisher.publish(item.path, name, role, counts[item.path.name]))
                except _NOT_PUBLISHED as conflict:
                    ours = [f.name for f in written if not f.kept_existing]
                    if not ours:
                        raise
                    # The parts published before stay. After a lost race (CHECKPOINT_CONFLICT) they hold
                    # the same actions as the other writer's (CKPT-WRITE-009) and may complete its set;
                    # before an empty or unreadable part (CHECKPOINT_CORRUPT) a reader falls back from the
                    # set while that part is there (CKPT-READ-012), and a re-run keeps them (CKPT-WRITE-008).
                    raise _amended(
                        conflict, f"the parts this writer published stay: {', '.join(ours)}"
                    ) from None
        self.hooks.reached(PublicationPoint.TOP_LEVEL_PUBLISHED)
        return written, state.rows.schema

    # -- V2 ------------------------------------------------------------------------------------

    def write_sidecars(self, state: CheckpointRows) -> tuple[list[WrittenFile], T.StructType]:
        """The file actions in sidecars (as many as :mod:`~reference_impl.write.sizing` says), published and re-checked.

        An incremental state's reused sidecars (:mod:`~reference_impl.write.incremental`) are listed
        again; only the rows they do not hold are written.
        """
        file_rows = state.file_rows()
        if state.counted:
            cores = self.spark.sparkContext.defaultParallelism
            to_write = state.to_write().rows
            num = sidecar_count(to_write, state.estimated_bytes, cores, self.plan.actions_per_sidecar)
        else:  # sized before the state is known, which is reconciled in those partitions (_write)
            assert state.partitions is not None, "an uncounted state's sidecars are sized before it is shaped"
            num = state.partitions
        directory = self.log_dir / SIDECAR_DIR
        try:  # on the driver: a store that refuses it is one error before any job
            self.storage.mkdirs(directory)
        except StorageError as exc:
            raise with_rule(exc, "CKPT-WRITE-011") from None
        names = tuple(sidecar_name(self.version, p + 1, num, self.options.uuid_factory()) for p in range(num))
        try:
            written = self._write_sidecar_files(state, file_rows, directory, names)
            self.publisher.verify_sidecars(written)
        except BaseException as failure:
            raise self._discarded(failure, directory, names) from None
        self.hooks.reached(PublicationPoint.SIDECARS_PUBLISHED)
        self.publisher.verify_sidecars(state.reused, ReusedSidecarGone, "CKPT-INC-005")
        return written + state.reused, file_rows.schema

    def _write_sidecar_files(
        self, state: CheckpointRows, file_rows: DataFrame, directory: Location, names: tuple[str, ...]
    ) -> list[WrittenFile]:
        """The sidecars at ``names`` (one a partition; :mod:`~reference_impl.write.task_files`), created by
        the sidecar job's tasks or, for a small state, by the driver; then one listing of ``directory``,
        the read-back (``CKPT-WRITE-005``), and each sidecar's time and name set."""
        num = len(names)
        df, expect = self._expectation(state, self._partitioned(file_rows, num, done=state.files is not None))
        sink = self.storage.task_sink(directory)
        layout = ParquetLayout.of(df.schema, self.plan.compression, self.spark.version)
        rows = state.to_write().rows if state.counted else self._estimate()[0]  # of the rows to write
        driver = on_driver(num, rows)
        sc = self.spark.sparkContext
        where = "by the driver" if driver else f"{num} Spark task(s)"
        with self.progress.phase(f"write sidecars ({where})"), job_group(sc, "sidecars"):
            sc.setJobDescription(f"delta-ckpt: write sidecars of version {self.version}")
            files = write_sidecar_files(df, SidecarTask(sink, names, layout), driver=driver)
        if not files and state.file_actions == 0:  # an empty table gets one empty sidecar, as delta-spark
            write_empty(df.schema, sink, names[0], layout)
            files = [TaskFile(0, names[0], 0)]
        with self.progress.phase("verify sidecars (read back)"):
            listed, counts = self._counted_back(directory, [f.name for f in files], "parquet", df.schema)
            self._check_counts("sidecars", ActionCounts.total(counts), expect)
        if not state.counted:  # the check passed: the files hold what the job observed
            state.count_from(ActionCounts.total(counts))
        self.hooks.reached(PublicationPoint.STAGED)
        written = []
        for index, file in enumerate(files, start=1):
            name = f"{SIDECAR_DIR}/{file.name}"
            sidecar = self.publisher.task_written(
                name, FileRole.SIDECAR, listed[file.name], counts[file.name]
            )
            if self.plan.incremental:
                sidecar = with_name_set(
                    self.storage, self.log_dir, sidecar, counts[file.name], self.options.file_time_ms
                )
            written.append(sidecar)
            self.hooks.reached(PublicationPoint.SIDECAR_PUBLISHED, index)
        return written

    def _discarded(
        self, failure: BaseException, directory: Location, names: tuple[str, ...]
    ) -> BaseException:
        """``failure`` of the sidecar write, after deleting what of it is in ``directory``: the sidecars at
        ``names`` (no checkpoint references them), their name sets and their tasks' temp files. One that
        cannot be deleted is left to cleanup (``CKPT-CLEAN-017``, ``CKPT-CLEAN-027``) and named."""
        try:
            present = [f.name for f in self.storage.list_dir(directory)]
        except CheckpointError as exc:
            present, left = [], [f"{directory.name}/ ({exc.message})"]
        else:
            left = []
        ours = {*names, *(name_set_file(directory / n).name for n in names)}
        doomed = [n for n in present if n in ours or any(is_temp_of(n, name) for name in names)]
        for name in doomed:
            try:
                self.storage.delete(directory / name)
            except CheckpointError as exc:
                left.append(f"{name} ({exc.message})")
        if not left:
            return failure
        note = f"not deleted: {', '.join(left)}: left for sidecar cleanup (CKPT-CLEAN-017)"
        if isinstance(failure, CheckpointError):
            return _amended(failure, note)
        failure.add_note(note)
        return failure

    def plan_partial(self) -> PartialState | None:
        """With ``incremental``: the base sidecars to list again and the rows to write; None: a full write."""
        with self.progress.phase("incremental: scan the base sidecars"), self.snap.replay_errors():
            schema = empty_rows(self.spark, self.snap, self.plan).file_rows().schema
            found = plan_partial(
                self.spark, self.snap, schema, self.plan.actions_per_sidecar, self.options.max_small_sidecars
            )
        if isinstance(found, str):
            self.progress.note(f"incremental: full write ({found})")
            size_queries(self.spark, sum(replayed_bytes(self.snap.segment, self.snap.checkpoint)))
            return None
        partial, decision = found
        self.progress.note(decision.note())
        self.partial = partial
        return partial

    def _checkpoint_metadata(
        self, state: CheckpointRows, sidecars: list[WrittenFile], sidecar_schema: T.StructType
    ) -> dict[str, Any]:
        tags: dict[str, str] = {}
        if self.plan.sidecars:
            tags["sidecarNumActions"] = str(sum(s.rows for s in sidecars))
            tags["sidecarSizeInBytes"] = str(sum(s.size_in_bytes for s in sidecars))
        tags["numOfAddFiles"] = str(state.adds)
        if self.plan.incremental:
            tags.update(layout_tags(self.plan.actions_per_sidecar, self.options.max_small_sidecars))
        if self.plan.sidecars:
            schema_text = json.dumps(schema_json(sidecar_schema), separators=(",", ":"))
            if len(schema_text) <= CHECKPOINT_SCHEMA_THRESHOLD:
                tags["sidecarFileSchema"] = schema_text
        return {"checkpointMetadata": {"version": self.version, "tags": tags}}

    def write_v2(
        self, state: CheckpointRows
    ) -> tuple[list[WrittenFile], T.StructType | None, list[dict[str, Any]]]:
        """Sidecars (unless inline), then the top-level file: ``checkpointMetadata``, ``sidecar`` actions, the rest."""
        sidecars: list[WrittenFile] = []
        sidecar_schema = T.StructType()
        if self.plan.sidecars:
            sidecars, sidecar_schema = self.write_sidecars(state)
        cp_meta = self._checkpoint_metadata(state, sidecars, sidecar_schema)
        sidecar_actions = [
            {
                "sidecar": {
                    "path": s.base_name,
                    "sizeInBytes": s.size_in_bytes,
                    "modificationTime": s.modification_time,
                    **({"tags": sidecar_tags(s)} if self.plan.incremental else {}),
                }
            }
            for s in sidecars
        ]
        head = [cp_meta, *sidecar_actions, *state.non_file]
        if self.plan.uuid_named:
            name = uuid_checkpoint_name(self.version, self.options.uuid_factory(), self.plan.top_level_format)
        else:
            name = classic_checkpoint_name(self.version)
        fmt = TopLevelFormat.JSON if name.endswith(".json") else TopLevelFormat.PARQUET
        inline = None if self.plan.sidecars else state
        reused = {s.name for s in state.reused}
        own = [s for s in sidecars if s.name not in reused]
        try:
            top, schema = self.write_top_level(name, fmt, head, inline, state.rows.schema)
        except _NOT_PUBLISHED as conflict:
            raise self._withdrawn(conflict, own) from None
        except StorageError as failure:
            if not own:
                raise
            # Not "not published": the store may have created the top-level file and failed to say so,
            # so the sidecars it would reference stay.
            raise _amended(
                failure,
                f"the {len(own)} sidecar(s) this writer published stay: if the top-level file was not "
                "created, no checkpoint references them and sidecar cleanup collects them (CKPT-CLEAN-017)",
            ) from None
        self.hooks.reached(PublicationPoint.TOP_LEVEL_PUBLISHED)
        if state.reused and not top.kept_existing:
            self._recheck_reused(state.reused, top)
        return [*sidecars, top], schema, [*state.non_file, cp_meta]

    def _withdrawn(self, conflict: NotPublished, own: list[WrittenFile]) -> NotPublished:
        """``conflict``, after deleting the sidecars (and name sets) this run published: fresh names no
        checkpoint references, since its top-level file was not published — never a reused base
        sidecar. One that cannot be deleted is left to sidecar GC (``CKPT-CLEAN-017``) and named."""
        if not own:
            return conflict
        left: list[str] = []
        for sidecar in own:
            location = self.log_dir / sidecar.name
            names = [name_set_file(location)] if sidecar.name_set is not None else []
            for file in (location, *names):
                try:
                    self.storage.delete(file)
                except CheckpointError as exc:
                    left.append(f"{file.name} ({exc.message})")
        note = f"deleted the {len(own)} sidecar(s) this writer published"
        if left:
            note += f", but not {', '.join(left)}: left for sidecar cleanup (CKPT-CLEAN-017)"
        return _amended(conflict, note)

    def _recheck_reused(self, reused: list[WrittenFile], top: WrittenFile) -> None:
        """``CKPT-INC-005``: after publication too, every reused sidecar exists with its recorded size
        (a cleaner may have deleted one since the check before); else this writer removes the top-level
        file it just published — no reader can use it — and raises :class:`ReusedSidecarGone`."""
        try:
            self.publisher.verify_sidecars(reused, ReusedSidecarGone, "CKPT-INC-005")
        except ReusedSidecarGone:
            self.storage.delete(self.log_dir / top.name)
            raise

    def write_top_level(
        self,
        name: str,
        fmt: TopLevelFormat,
        head: list[dict[str, Any]],
        inline: CheckpointRows | None,
        row_types: T.StructType,
    ) -> tuple[WrittenFile, T.StructType | None]:
        """A V2 top-level file: the ``head`` actions, then ``inline``'s file actions (if any).

        ``row_types`` gives the ``add``/``remove`` struct types of a Parquet file's columns.
        """
        if fmt is TopLevelFormat.JSON and inline is None:
            data = "".join(json_line(a) + "\n" for a in head).encode("utf-8")
            with self.progress.phase("publish top-level file"):
                return self.publisher.write_json(name, data, len(head)), None
        adds, removes = (inline.adds, inline.removes) if inline is not None else (0, 0)
        expect = ActionCounts(len(head) + adds + removes, adds, removes)
        # A Parquet top-level file (or JSON with inline file actions): the head rows carry null
        # add/remove structs of the same types as the sidecars (or inline rows) have.
        types = row_types
        df = nullable_df(
            actions_df(self.spark, head, V2_TOP_LEVEL_COLUMNS).select(
                "txn",
                F.lit(None).cast(types["add"].dataType).alias("add"),
                F.lit(None).cast(types["remove"].dataType).alias("remove"),
                "metaData",
                "protocol",
                "domainMetadata",
                "checkpointMetadata",
                "sidecar",
            )
        )
        if inline is not None:
            # One task writes the file; its bytes must not depend on the order in which the shuffle
            # delivers the inline rows: the head rows in their order, then the file actions in row_order.
            extra = inline.rows.where(F.col("add").isNotNull() | F.col("remove").isNotNull())
            extra = extra.select(*V1_CHECKPOINT_COLUMNS)
            for column in ("checkpointMetadata", "sidecar"):
                extra = extra.withColumn(column, F.lit(None).cast(as_nullable(ACTION_STRUCTS[column])))
            df = df.withColumn(_HEAD_POSITION, F.monotonically_increasing_id()).unionByName(
                nullable_df(extra).withColumn(_HEAD_POSITION, F.lit(None).cast("long"))
            )
            df = df.coalesce(1).sortWithinPartitions(F.col(_HEAD_POSITION).asc_nulls_last(), *row_order(df))
            df = df.drop(_HEAD_POSITION)
        staged, counts = self._stage_verified(
            df.coalesce(1), "top-level file", num=1, fill_empty=True, fmt=fmt, expect=expect
        )
        with self.progress.phase("publish top-level file"):
            written = self.publisher.publish(
                staged[0].path,
                name,
                FileRole.TOP_LEVEL,
                counts[staged[0].path.name],
                unique_name=parse_log_file_name(name).kind is LogFileKind.CHECKPOINT_UUID,
            )
        return written, (df.schema if fmt is TopLevelFormat.PARQUET else None)


_HEAD_POSITION = "_delta_ckpt_head_position"


def _amended(error: _Error, note: str) -> _Error:
    """``error`` with ``note`` on what this writer did about it, or left."""
    return type(error)(f"{error.message}; {note}", path=error.path, rule=error.rule)


def _needs_counts(plan: CheckpointPlan) -> bool:
    """Whether the writer needs the state's counts before writing it (see the module docs, step 3)."""
    explicit_sidecars = plan.sidecars and plan.actions_per_sidecar is not None
    inline_v2 = plan.spec is CheckpointSpec.V2 and not plan.sidecars
    return explicit_sidecars or inline_v2


@contextmanager
def _write_errors(snap: Snapshot, state: CheckpointRows) -> Iterator[None]:
    """A failed Spark job that wrote an uncounted state was also its replay: when the replay alone
    fails too, its error (``LOG_CORRUPT``, ``CHECKPOINT_CORRUPT`` naming the file) is raised;
    else the write's own."""
    try:
        yield
    except spark_errors():
        if not state.counted:
            with snap.replay_errors():
                snap.state_df.agg(F.count(F.lit(1))).collect()
        raise


def _replay(spark: SparkSession, table: Table, version: int | None, options: CheckpointOptions) -> Snapshot:
    """Step 2: the state of the version, with the rule a failure breaks."""
    with options.progress.phase("replay the log"):
        try:
            snap = read_snapshot(spark, table, version=version, now_ms=options.now_ms)
        except TableNotFound as exc:  # a _delta_log without any commit or checkpoint
            raise with_rule(exc, "CKPT-READ-009") from None
        except UnsupportedReaderFeature as exc:
            raise with_rule(exc, "CKPT-FEAT-006") from None
        except VersionNotFound as exc:
            raise with_rule(exc, "CKPT-WRITE-001") from None
    check_writer_features(snap.protocol, str(snap.listing.log_dir), role="writer")
    if snap.version not in snap.listing.commits:
        raise VersionNotFound(
            f"the commit file of version {snap.version} is not in the log; a checkpoint needs it",
            path=str(snap.listing.log_dir / commit_name(snap.version)),
            rule="CKPT-WRITE-001",
        )
    return snap


def write_checkpoint(
    table: str | os.PathLike[str] | Location | Table | CheckpointRequest,
    version: int | None = None,
    options: CheckpointOptions | None = None,
    *,
    spark: SparkSession | SessionSource | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> CheckpointResult:
    """Write a checkpoint of ``version`` (default: latest) of ``table``. See the module docs.

    ``table`` is a local path or a URI (``hdfs://``, ``s3://``, …); ``storage_options`` configure
    its store, named as deltalake names them (:mod:`reference_impl.storage.options`). A
    :class:`~reference_impl.write.preconditions.CheckpointRequest` made by ``checked_request`` (table
    and version checked already, as ``delta-ckpt checkpoint`` does before it starts Spark) is not
    checked again, any other request is; ``version`` is then the request's.
    """
    options = options or CheckpointOptions()
    started = time.perf_counter()
    session = session_source(spark)
    if isinstance(table, CheckpointRequest):
        if version is not None and version != table.version:
            raise ValueError(f"version {version} given with a request for version {table.version}")
        request = table if table.checked else checked_request(table.table, table.version)
    else:
        request = checked_request(
            require_checkpointable_table(table, storage_options, session=session), version
        )
    opened, version = request.table, request.version
    try:
        return _write(session(), opened, version, options, started, reuse=True)
    except ReusedSidecarGone as gone:  # only an incremental checkpoint lists reused sidecars
        # CKPT-INC-005: its top-level file is deleted; replay again (the base may be gone) and write in full.
        options.progress.note(f"incremental: full write ({gone})")
        return _write(session(), opened, version, options, started, reuse=False)


def _write(
    spark: SparkSession,
    opened: Table,
    version: int | None,
    options: CheckpointOptions,
    started: float,
    *,
    reuse: bool,
) -> CheckpointResult:
    """Steps 2-6; with ``reuse``, an incremental plan lists base sidecars again (else it writes in full)."""
    snap = _replay(spark, opened, version, options)
    plan = resolve_plan(options, snap)
    writer = _Writer(spark, snap, plan, options)
    state: CheckpointRows | None = None
    try:
        partial = writer.plan_partial() if plan.incremental and reuse else None
        count = _needs_counts(plan)
        phase = "reconcile and count the state" if count else "shape the state (reconciled as it is written)"
        sidecars = plan.spec is CheckpointSpec.V2 and plan.sidecars
        partitions = writer.estimated_sidecars() if sidecars and not count else None
        with options.progress.phase(phase), snap.replay_errors():
            state = state_rows(spark, snap, plan, partial, count=count, partitions=partitions)
        schema: T.StructType | None
        with _write_errors(snap, state):
            if plan.spec is CheckpointSpec.V1:
                files, schema = writer.write_v1(state)
                non_file = state.non_file
            else:
                files, schema, non_file = writer.write_v2(state)
        hint = last_checkpoint_document(plan, snap.version, files, schema, non_file, state.adds)
        document, skipped = (
            write_hint(snap.storage, writer.log_dir, hint, options.progress)
            if options.write_last_checkpoint
            else (None, "disabled")
        )
    finally:
        writer.staging.remove()
        if state is not None:
            state.rows.unpersist()
    options.progress.timings["total"] = round(time.perf_counter() - started, 3)
    return CheckpointResult(
        table=str(opened.root),
        version=snap.version,
        spec=plan.spec,
        naming=plan.naming,
        top_level_format=plan.top_level_format if plan.uuid_named else None,
        files=files,
        num_add_files=state.adds,
        num_remove_files=state.removes,
        num_non_file_actions=len(state.non_file),
        last_checkpoint=document,
        last_checkpoint_skipped=skipped,
        timings=dict(options.progress.timings),
    )


def write_top_level_file(
    spark: SparkSession,
    snap: Snapshot,
    name: str,
    head: list[dict[str, Any]],
    inline: DataFrame | None = None,
) -> WrittenFile:
    """Publish one V2 Parquet top-level file ``name`` (in ``_delta_log``) of version ``snap.version``.

    The file holds the ``head`` actions (``checkpointMetadata``, ``sidecar`` and non-file actions, in
    JSON form) and, when ``inline`` is given, its file actions (a DataFrame with ``add`` and ``remove``
    columns; they are reshaped as the writer shapes checkpoint rows: ``dataChange`` false,
    ``stats_parsed`` per the table's properties). It goes through the writer's own path — staged by
    Spark, read back and counted, published create-if-absent (an existing file of that name is kept,
    ``kept_existing``, whenever it appeared: it is no conflict; an empty or unreadable one is
    ``CHECKPOINT_CORRUPT``) — with the ``add``/``remove`` column types the writer uses.
    ``_last_checkpoint`` is not touched.

    The cleaner writes compatibility checkpoints (a classic-named copy of a UUID-named top-level
    file, spec §13) with it.
    """
    options = CheckpointOptions(
        spec=CheckpointSpec.V2, naming=CheckpointNaming.CLASSIC, top_level_format=TopLevelFormat.PARQUET
    )
    plan = resolve_plan(options, snap)
    writer = _Writer(spark, snap, plan, options, keep_any_taken=True)
    rows = shape_rows(inline, snap, plan) if inline is not None else empty_rows(spark, snap, plan)
    try:
        written, _ = writer.write_top_level(
            name, TopLevelFormat.PARQUET, head, rows if inline is not None else None, rows.rows.schema
        )
    finally:
        writer.staging.remove()
    return written
