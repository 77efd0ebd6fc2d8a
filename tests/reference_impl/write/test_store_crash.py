"""Crash points and a racing cleaner on real stores: the previous state for every reader, then a clean re-run.

Spec: ``spec/checkpoints.md`` §17.2 Publication order (``CKPT-WRITE-004``), §17.3 Atomicity, §18
(sidecar GC, ``CKPT-CLEAN-013``), §19.4 Stores.

One scenario, run on each store of the tests — the session's SeaweedFS S3 server and its
MiniDFSCluster — on a 7-commit ``v2Checkpoint`` table:

1. ``delta-ckpt checkpoint`` (V2, UUID-named, three sidecars; on S3 the executors write through
   s3a) runs in its own process group and is killed with ``SIGKILL`` — driver and Spark JVM at once,
   no ``finally`` block, no shutdown hook — at each point (:func:`tests.support.cli_runs.killed_at`):

   | point | what exists when it dies |
   |---|---|
   | ``sidecar:1`` | the first sidecar published, the others still to upload |
   | ``sidecars`` | every sidecar published, no top-level file |
   | ``top-level`` | the top-level file published, ``_last_checkpoint`` not written |

   After each kill our reader and the store's cross-reader (deltalake on S3, delta-spark on HDFS)
   report the state from before; before the top-level point no checkpoint and no
   ``_last_checkpoint`` exist.
2. A re-run succeeds while a cleaner races it: when the re-run has published its sidecars and not
   yet its top-level file (the moment those sidecars are referenced by nothing), a cleanup with a
   log retention of zero runs on the same table (:class:`CleanerAt`). It deletes the commits the
   killed run's complete checkpoint made unnecessary (and writes its compatibility checkpoint) —
   and none of the re-run's sidecars, which the one-day sidecar floor protects
   (``CKPT-CLEAN-016``); the re-run then publishes, and both readers read the state from before.
3. A cleanup after the retention period deletes every sidecar of the killed runs that no top-level
   file references, and keeps every referenced one. (The writer's hidden staging prefixes of the
   killed runs stay: no reader lists them, and the cleaner never enters a directory.)

And two writers of one classic-named checkpoint overlap on each store (:class:`WriterAt`): the
second runs to the end while the first has published its sidecars; the first then finds the name
taken and keeps the file (``CKPT-WRITE-008``: it describes the same state) — no error, and the
table validates. (Create-if-absent itself, eight threads at once on one name, exactly one winner:
``tests/reference_impl/storage/test_object_store.py``.)
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

from conformance.adapters.deltalake import deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_jars import cached_s3a_jars
from conformance.oracles.delta_spark import delta_spark_state
from conformance.plugin import unavailable
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.cleanup.result import CleanupResult
from reference_impl.hooks import PublicationPoint
from reference_impl.read.snapshot import read_snapshot
from reference_impl.storage import Location, Storage, storage_for
from reference_impl.validate.runner import validate_table
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.result import CheckpointResult, FileRole
from reference_impl.write.writer import write_checkpoint
from spec.table_state import TableState
from spec.vocabulary import CheckpointNaming, CheckpointSpec
from tests.reference_impl.write.helpers import small_v2_table
from tests.support.cli_runs import checkpoint_argv, killed_at

POINTS = ("sidecar:1", "sidecars", "top-level")
DAY_MS = 86_400_000
STORES = ("s3", "hdfs")


@dataclass(frozen=True)
class Store:
    """A table location on a real store, with what the CLI, our reader and the store's cross-reader need."""

    name: str
    root: Location
    options: dict[str, str]
    storage: Storage
    spark: SparkSession
    cli_args: tuple[str, ...]
    cross_reader: Callable[[str], TableState]

    def ours(self) -> TableState:
        return read_snapshot(self.spark, self.root.uri, storage_options=self.options).table_state()

    def upload_small_table(self, tmp_path: Path) -> None:
        """Write the log of :func:`small_v2_table` (7 commits, ``v2Checkpoint``) at :attr:`root`."""
        local = small_v2_table(tmp_path / "table")
        for file in sorted((local / "_delta_log").iterdir()):
            self.storage.write_new(self.root / "_delta_log" / file.name, file.read_bytes())

    def listing(self) -> dict[str, int]:
        """Visible files of ``_delta_log`` and ``_delta_log/_sidecars`` (relative names) and their mtimes."""
        log = self.root / "_delta_log"
        out = {f.name: f.mtime_ms for f in self.storage.list_dir(log)}
        return out | {f"_sidecars/{f.name}": f.mtime_ms for f in self.storage.list_dir(log / "_sidecars")}


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, delta_spark: SparkSession) -> Iterator[Store]:
    """A fresh location on the session's S3 server or HDFS (one server per test process)."""
    name = f"crash-{uuid.uuid4().hex[:8]}"
    if request.param == "s3":
        spark: SparkSession = request.getfixturevalue("s3_spark")
        jars = cached_s3a_jars()
        if jars is None:
            unavailable("Hadoop's S3A connector", "not resolved (run `delta-ckpt env --resolve-jars`)")
            return
        server = request.getfixturevalue("s3_server")
        options = server.storage_options()
        root = Location.parse(server.uri(name))
        yield Store(
            "s3",
            root,
            options,
            storage_for(root, options),
            spark,
            ("--conf", f"spark.jars={','.join(str(j) for j in jars)}"),
            lambda uri: deltalake_state(uri, storage_options=options),
        )
    else:
        root = Location.parse(request.getfixturevalue("hdfs_server").uri(name))
        yield Store(
            "hdfs",
            root,
            {},
            storage_for(root, session=lambda: delta_spark),
            delta_spark,
            (),
            lambda uri: delta_spark_state(delta_spark, uri),
        )


class CleanerAt:
    """Writer hooks that run a cleanup of the same table, with a log retention of zero, at one publication point.

    The cleaner's clock is one day after the oldest sidecar then in ``_sidecars/``: its log cutoff
    (midnight UTC of that clock) is later than every commit, and its one-day sidecar floor
    (``CKPT-CLEAN-016``: midnight UTC of the day before the clock) is not later than any sidecar —
    the latest clock at which the floor still protects a writer's unreferenced sidecars, whatever
    the time of day the test runs.
    """

    def __init__(self, store: Store, point: PublicationPoint) -> None:
        self.store, self.point = store, point
        self.in_flight: set[str] = set()
        self.result: CleanupResult | None = None

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        if point is not self.point:
            return
        sidecars = {n: t for n, t in self.store.listing().items() if n.startswith("_sidecars/")}
        self.in_flight = set(sidecars)
        self.result = cleanup(
            self.store.root.uri,
            retention_ms=0,
            now_ms=min(sidecars.values()) + DAY_MS,
            spark=self.store.spark,
            storage_options=self.store.options,
        )

    def prepare(self, df: DataFrame) -> DataFrame:
        return df


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
@pytest.mark.requirement("CKPT-WRITE-004", "CKPT-CLEAN-013")
def test_killed_writers_leave_the_previous_state_and_a_racing_cleaner_keeps_what_the_rerun_needs(
    store: Store, tmp_path: Path
) -> None:
    """SIGKILLed at each publication point: the previous state everywhere; a re-run raced by a cleaner succeeds.

    Spec: CKPT-WRITE-004
    "A writer MUST finish writing every sidecar file before the top-level file that references it
    becomes visible, and every file of a checkpoint before it updates `_last_checkpoint` to
    describe that checkpoint."

    Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint
    remaining after the cleanup references"
    """
    root = store.root
    store.upload_small_table(tmp_path)
    commits = sorted(store.listing())
    ours_before, cross_before = store.ours(), store.cross_reader(root.uri)
    crashed: set[str] = set()  # sidecars of the killed runs
    orphans: set[str] = set()  # those no top-level file references: of the runs killed before it
    tops: list[str] = []  # complete top-level files, the killed run's and the re-run's
    for point in POINTS:
        argv = checkpoint_argv(
            root.uri, fault=f"pause:{point}", global_args=store.cli_args, storage_options=store.options
        )
        killed_at(argv, point)
        names = sorted(store.listing())
        new = [n for n in names if n not in commits and not n.startswith("_sidecars/")]
        sidecars = {n for n in names if n.startswith("_sidecars/")} - crashed
        where = f"{root} (SIGKILL at {point})"
        assert sidecars, f"{where}: no sidecar published before the kill"
        assert point != "sidecar:1" or len(sidecars) == 1, f"{where}: sidecars {sorted(sidecars)}"
        crashed |= sidecars
        if point == "top-level":
            assert len(new) == 1 and ".checkpoint." in new[0], f"{where}: new files {new}"
            tops += new
        else:
            orphans |= sidecars
            assert new == [], f"{where}: a checkpoint or _last_checkpoint appeared: {new}"
        assert "_last_checkpoint" not in names, f"{where}: _last_checkpoint written"
        assert_states_equal(ours_before, store.ours(), context=f"{where}: our reader before vs after")
        cross = store.cross_reader(root.uri)
        assert_states_equal(
            cross_before,
            cross,
            context=f"{where}: cross-reader before vs after",
            ignore=unavailable_fields(cross),
        )
        commits = [n for n in names if not n.startswith("_sidecars/")]  # a published top-level file stays

    race = CleanerAt(store, PublicationPoint.SIDECARS_PUBLISHED)
    options = CheckpointOptions(
        spec=CheckpointSpec.V2, naming=CheckpointNaming.UUID, actions_per_sidecar=4, hooks=race
    )
    result = write_checkpoint(root.uri, options=options, spark=store.spark, storage_options=store.options)
    kept = {f.name for f in result.files if f.role is FileRole.SIDECAR}
    tops += [f.name for f in result.files if f.role is FileRole.TOP_LEVEL]
    cleaned = race.result
    assert cleaned is not None and kept and kept <= race.in_flight - crashed, (
        f"{root}: the re-run's sidecars {sorted(kept)}, in flight when the cleaner ran {sorted(race.in_flight)}"
    )
    gone = {d.name for d in cleaned.deleted}
    assert cleaned.deleted_log_files and not gone & (kept | set(tops)), (
        f"{root}: the racing cleaner ({cleaned.status}: {cleaned.message}) deleted {sorted(gone)}"
    )
    left = set(store.listing())
    assert kept | set(tops) | {"_last_checkpoint"} <= left, f"{root}: after the re-run {sorted(left)}"
    ours = store.ours()
    assert_states_equal(ours_before, ours, context=f"{root} re-run: our reader")
    # CKPT-READ-004: of two complete UUID-named checkpoints of a version, the greater name.
    assert ours.source["checkpoint"]["files"] == [max(tops)], f"{root}: our reader used {ours.source}"
    cross = store.cross_reader(root.uri)
    assert_states_equal(
        cross_before, cross, context=f"{root} re-run: cross-reader", ignore=unavailable_fields(cross)
    )

    now = max(store.listing().values()) + 31 * DAY_MS  # past the default 30-day retention
    cleaned = cleanup(root.uri, now_ms=now, spark=store.spark, storage_options=store.options)
    left = set(store.listing())
    assert orphans and not orphans & left, (
        f"{root}: cleanup left the orphans {sorted(orphans & left)} ({cleaned.status}: {cleaned.message})"
    )
    assert kept | set(tops) <= left, f"{root}: cleanup deleted the re-run's checkpoint: left {sorted(left)}"
    assert store.ours().files == ours_before.files, f"{root}: files differ after cleanup"


class WriterAt:
    """Writer hooks that run a second writer of the same table to the end at one publication point."""

    def __init__(self, store: Store, point: PublicationPoint, options: CheckpointOptions) -> None:
        self.store, self.point, self.options = store, point, options
        self.result: CheckpointResult | None = None

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        if point is self.point and self.result is None:
            self.result = write_checkpoint(
                self.store.root.uri,
                options=self.options,
                spark=self.store.spark,
                storage_options=self.store.options,
            )

    def prepare(self, df: DataFrame) -> DataFrame:
        return df


@pytest.mark.spark
@pytest.mark.requirement("CKPT-WRITE-008")
def test_two_writers_of_one_classic_named_checkpoint_one_publishes_and_the_other_keeps_it(
    store: Store, tmp_path: Path
) -> None:
    """Two writers of the same classic-named V2 checkpoint overlap: the first to publish wins, the other keeps its file.

    The first writer has published its sidecars when the second runs to the end; the first then
    finds the classic name taken (create-if-absent on the store) and keeps the file there — not an
    error: a classic-named file of the version describes the same state. The table stays valid.

    Spec: CKPT-WRITE-008
    "A writer MAY overwrite an existing classic checkpoint or multi-part part of the same version with
    a file that describes the same table state, or keep the existing file instead of writing its own."
    """
    store.upload_small_table(tmp_path)
    before = store.ours()
    classic = CheckpointOptions(
        spec=CheckpointSpec.V2, naming=CheckpointNaming.CLASSIC, actions_per_sidecar=4
    )
    second = WriterAt(store, PublicationPoint.SIDECARS_PUBLISHED, classic)
    first = write_checkpoint(
        store.root.uri,
        options=replace(classic, hooks=second),
        spark=store.spark,
        storage_options=store.options,
    )
    assert second.result is not None, f"{store.root}: the second writer never ran"
    tops = {
        who: [f for f in result.files if f.role is FileRole.TOP_LEVEL]
        for who, result in (("first", first), ("second", second.result))
    }
    names = {f.name for files in tops.values() for f in files}
    kept = {who: [f.kept_existing for f in files] for who, files in tops.items()}
    assert len(names) == 1 and kept == {"first": [True], "second": [False]}, (
        f"{store.root}: top-level files {tops}"
    )
    report = validate_table(store.root.uri, store.options, session=lambda: store.spark, state=False)
    findings = "\n".join(f"{f.level} {f.rule} {f.file}: {f.seen}" for f in report.sorted_findings())
    assert report.exit_status == 0, f"{store.root}: the table is not valid after the race:\n{findings}"
    after = store.ours()
    assert_states_equal(before, after, context=f"{store.root}: our reader before vs after the race")
    assert after.source["checkpoint"]["files"] == sorted(names), (
        f"{store.root}: our reader used {after.source}"
    )
