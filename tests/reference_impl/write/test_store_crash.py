"""A killed writer, then two racing writers and a racing cleaner, on real stores: every reader sees the state from before.

Spec: ``spec/checkpoints.md`` §17.2 Publication order (``CKPT-WRITE-004``), §17.3 Atomicity
(``CKPT-WRITE-008``), §18 (sidecar GC, ``CKPT-CLEAN-013``), §19.4 Stores.

One scenario, run on each store of the tests — the session's SeaweedFS S3 server and its
MiniDFSCluster — on a 7-commit ``v2Checkpoint`` table:

1. ``delta-ckpt checkpoint`` (V2, UUID-named, three sidecars, which its Spark tasks create at their
   final names in ``_sidecars/``: on S3 one conditional ``PUT`` each, on HDFS a hidden temp file and
   a rename) runs in its own process group, waits at each publication point in turn and is killed with
   ``SIGKILL`` at the last — driver and Spark JVM at once, no ``finally`` block, no shutdown hook
   (:func:`tests.support.cli_runs.paused_then_killed`):

   | point | what exists while it waits there |
   |---|---|
   | ``staged`` | every sidecar, written by the tasks and read back; nothing else of the checkpoint |
   | ``sidecars`` | every sidecar written and re-checked, no top-level file |
   | ``top-level`` | the top-level file published, ``_last_checkpoint`` not written — killed here |

   While it waits nothing of it runs, so the store holds what a kill there leaves: at each point
   our reader and the store's cross-reader (deltalake on S3, delta-spark on HDFS) report the state
   from before; before the top-level point no checkpoint and no ``_last_checkpoint`` exist. (One
   process, not one a point: each start of the command and its JVM costs about 20 s of the test
   suite's budget.)

   A first run is killed earlier, while its tasks write the sidecars (:data:`KILLS`), held there by
   the store (:attr:`Store.hold_uploads`); while the writes are held, and after the ``SIGKILL``,
   nothing new is listed at a final name and both readers report the state from before. The next run
   (the paused one) starts from what it left.

   * S3: the command talks to the server through a proxy (:mod:`tests.support.servers.hold_proxy`)
     that forwards the first half of each sidecar's ``PUT`` body and then holds it. No
     object exists at a held key afterwards (the server drops an upload whose connection closes
     mid-body) and no multipart upload was started, so none is left open (a small table's
     sidecars are one ``PUT`` each; larger ones and what is left open then:
     ``spec/checkpoints.md`` §19.4).
   * HDFS: a proxy cannot hold the write, since the client streams each block to the DataNode
     whose address the NameNode gives it; the DataNode itself holds it, through Hadoop's
     DataNode test hook (:meth:`tests.support.servers.hdfs.HdfsServer.holding_writes`), once the
     first packet of each sidecar's block (all of a small sidecar, a few KiB) is on the DataNode's
     disk and not acknowledged. It is released after the kill. Each held file is left under its
     hidden temp name ``_sidecars/.<name>.<uuid>.tmp`` (nothing is ever written at a final name on
     HDFS: ``partial_writes_visible``), unfinished: the NameNode lists it with length 0, as it learns
     the length of a block only when its writer finishes it, and the dead writer's lease lapses
     only after the NameNode's hard limit (``dfs.namenode.lease-hard-limit-sec``, 1,200 s), when
     lease recovery would close the file with the DataNode's bytes.
2. Two writers of one classic-named V2 checkpoint and a cleaner race on the same table
   (:class:`RacersAt`): when the first writer has published its sidecars and not yet its top-level
   file (the moment its sidecars are referenced by nothing), the second writer runs to the end,
   then a cleanup with a log retention of zero runs. The cleaner deletes the commits the killed
   run's complete checkpoint made unnecessary — and none of the first writer's sidecars, which the
   one-day sidecar floor protects (``CKPT-CLEAN-016``), nor the killed run's temp files, which the same
   floor protects (``CKPT-CLEAN-027``); the first writer then finds the classic
   name taken (its create-if-absent lost, ``CKPT-WRITE-006``): it raises one ``CHECKPOINT_CONFLICT``
   naming that file, after deleting the sidecars it wrote; the second writer's
   top-level file and ``_last_checkpoint`` are as it left them, the table validates, and both
   readers read the state from before (ours from the killed run's UUID-named file, ``CKPT-READ-004``).
3. A writer fails after writing its sidecars (its hooks raise at ``sidecars``): they stay,
   referenced by nothing. A cleanup after the retention period (its clock 31 days after the newest
   file, temp files included, so the log cutoff is later than every file) deletes every sidecar no
   top-level file references — that writer's (none is left by the race: the first writer deleted its
   own; ``CKPT-CLEAN-017``) — and keeps every referenced one. On HDFS it also collects the temp
   files the run killed mid-write left in ``_sidecars/`` (held, unfinished, their dead writer's lease
   still open; ``CKPT-CLEAN-027``; readers never listed them, and HDFS deletes an open file); on S3
   that run left none (one ``PUT`` a sidecar). No run of this test staged anything: the V2 writer
   stages only a Parquet top-level file, and the staging of the race's classic one is gone with its
   writer; on S3 the server's own listing of ``_delta_log/``, keys ending in ``/`` included, shows no
   staging key and no directory marker.

(Create-if-absent itself, eight threads at once on one name, exactly one winner:
``tests/reference_impl/storage/test_object_store.py``.)
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from pyspark.sql import DataFrame, SparkSession

from conformance.adapters.deltalake import deltalake_state
from conformance.compare import assert_states_equal, unavailable_fields
from conformance.oracles.delta_jars import cached_s3a_jars
from conformance.oracles.delta_spark import delta_spark_state
from conformance.plugin import unavailable
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.cleanup.result import CleanupResult
from reference_impl.errors import CheckpointConflict
from reference_impl.hooks import PublicationPoint
from reference_impl.log.naming import is_sidecar_temp_name
from reference_impl.read.snapshot import read_snapshot
from reference_impl.storage import Location, Storage, storage_for
from reference_impl.validate.runner import validate_table
from reference_impl.write.options import CheckpointOptions
from reference_impl.write.result import CheckpointResult
from reference_impl.write.writer import write_checkpoint
from spec.table_state import TableState
from spec.vocabulary import CheckpointNaming, CheckpointSpec
from tests.reference_impl.write.helpers import small_v2_table
from tests.support.cli_runs import UPLOAD_HELD, checkpoint_argv, paused_then_killed
from tests.support.faults import FaultPlan, InjectedFault
from tests.support.servers.hdfs import HdfsServer
from tests.support.servers.hold_proxy import holding_proxy

POINTS = ("staged", "sidecars", "top-level")
#: The hidden prefix under ``_delta_log`` where the writer's executors stage files (``reference_impl.write.staging``).
STAGING = ".delta-ckpt-staging-"
DAY_MS = 86_400_000
STORES = ("s3", "hdfs")
#: The killed runs, in order: the points each one stops at, killed at the last.
KILLS = ((UPLOAD_HELD,), POINTS)


@dataclass(frozen=True)
class UploadHold:
    """A store holding the uploads of sidecars mid-way: the storage options and command-line
    arguments the writer runs with while they are held, and the event set when the first is held."""

    options: dict[str, str]
    cli_args: tuple[str, ...]
    held: threading.Event


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
    #: Holds the sidecars' uploads while the body runs; checks what the held ones left after it.
    hold_uploads: Callable[[Store], AbstractContextManager[UploadHold]]
    #: The server's own listing of a key prefix (S3 only: :meth:`tests.support.servers.seaweed.S3Server.raw_keys`).
    raw_keys: Callable[[str], list[str]] | None = None

    def ours(self) -> TableState:
        return read_snapshot(self.spark, self.root.uri, storage_options=self.options).table_state()

    def upload_small_table(self, tmp_path: Path) -> None:
        """Write the log of :func:`small_v2_table` (7 commits, ``v2Checkpoint``) at :attr:`root`."""
        local = small_v2_table(tmp_path / "table")
        for file in sorted((local / "_delta_log").iterdir()):
            self.storage.write_new(self.root / "_delta_log" / file.name, file.read_bytes())

    def staged(self) -> dict[str, int]:
        """Every file under the writer's hidden staging prefixes in ``_delta_log`` (relative keys) and its mtime.

        On S3 the objects only (:meth:`~reference_impl.storage.Storage.list_tree`): the server shows a
        prefix whose objects were all deleted as a "folder" for a while; it holds nothing.
        """
        log = self.root / "_delta_log"
        staging = [d for d in self.storage.list_subdirs(log) if d.startswith(STAGING)]
        return dict(
            sorted((f"{d}/{f.name}", f.mtime_ms) for d in staging for f in self.storage.list_tree(log / d))
        )

    def raw_log_keys(self) -> list[str]:
        """On S3, every key under ``_delta_log/`` as the server lists it (keys ending in ``/`` included)."""
        return self.raw_keys(self.root.key.strip("/") + "/_delta_log/") if self.raw_keys else []

    def listing(self) -> dict[str, int]:
        """Visible files of ``_delta_log`` and ``_delta_log/_sidecars`` (relative names) and their mtimes."""
        log = self.root / "_delta_log"
        out = {f.name: f.mtime_ms for f in self.storage.list_dir(log) if not f.name.startswith(".")}
        sidecars = self.storage.list_dir(log / "_sidecars")
        return out | {f"_sidecars/{f.name}": f.mtime_ms for f in sidecars if not f.name.startswith(".")}

    def temps(self) -> dict[str, int]:
        """The sidecar tasks' hidden temp files in ``_delta_log/_sidecars`` (relative names) and their mtimes."""
        listed = self.storage.list_dir(self.root / "_delta_log" / "_sidecars")
        return {f"_sidecars/{f.name}": f.mtime_ms for f in listed if is_sidecar_temp_name(f.name)}


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
            held_by_proxy,
            server.raw_keys,
        )
    else:
        hdfs: HdfsServer = request.getfixturevalue("hdfs_server")
        root = Location.parse(hdfs.uri(name))
        yield Store(
            "hdfs",
            root,
            {},
            storage_for(root, session=lambda: delta_spark),
            delta_spark,
            (),
            lambda uri: delta_spark_state(delta_spark, uri),
            functools.partial(held_by_datanode, hdfs),
        )


class RacersAt:
    """Writer hooks that, at one publication point, run a second writer of the same table to the end, then a cleanup.

    The cleanup has a log retention of zero and a clock one day after the oldest sidecar then in
    ``_sidecars/``: its log cutoff (midnight UTC of that clock) is later than every commit, and its
    one-day sidecar floor (``CKPT-CLEAN-016``: midnight UTC of the day before the clock) is not later
    than any sidecar — the latest clock at which the floor still protects a writer's unreferenced
    sidecars, whatever the time of day the test runs.
    """

    def __init__(self, store: Store, point: PublicationPoint, options: CheckpointOptions) -> None:
        self.store, self.point, self.options = store, point, options
        self.second: CheckpointResult | None = None
        #: The listing of ``_delta_log`` and ``_sidecars`` when the second writer started.
        self.before: set[str] = set()
        #: The bytes of the second writer's top-level file and ``_last_checkpoint`` when it finished.
        self.won: dict[str, bytes] = {}
        self.in_flight: set[str] = set()
        self.cleaned: CleanupResult | None = None

    def reached(self, point: PublicationPoint, count: int | None = None) -> None:
        if point is not self.point or self.second is not None:
            return
        store = self.store
        self.before = set(store.listing())
        self.second = write_checkpoint(
            store.root.uri, options=self.options, spark=store.spark, storage_options=store.options
        )
        log = store.root / "_delta_log"
        for name in [f.name for f in self.second.top_level] + ["_last_checkpoint"]:
            self.won[name] = store.storage.read_bytes(log / name)
        sidecars = {n: t for n, t in store.listing().items() if n.startswith("_sidecars/")}
        self.in_flight = set(sidecars)
        self.cleaned = cleanup(
            store.root.uri,
            retention_ms=0,
            now_ms=min(sidecars.values()) + DAY_MS,
            spark=store.spark,
            storage_options=store.options,
        )

    def prepare(self, df: DataFrame) -> DataFrame:
        return df


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.delta_spark
@pytest.mark.deltalake
@pytest.mark.requirement(
    "CKPT-WRITE-004",
    "CKPT-WRITE-006",
    "CKPT-WRITE-008",
    "CKPT-CLEAN-013",
    "CKPT-CLEAN-017",
    "CKPT-CLEAN-028",
    "CKPT-CLEAN-027",
)
def test_killed_writer_leaves_the_previous_state_and_racing_writers_and_cleaner_keep_the_table_whole(
    store: Store, tmp_path: Path
) -> None:
    """SIGKILLed mid-upload and after each publication point: the previous state everywhere; then a race.

    Spec: CKPT-WRITE-004
    "A writer MUST finish writing every sidecar file before the top-level file that references it
    becomes visible, and every file of a checkpoint before it updates `_last_checkpoint` to
    describe that checkpoint."

    Spec: CKPT-WRITE-006
    "A writer MUST publish each classic or UUID-named top-level file atomically, so that no reader
    can see it partially written, and MUST NOT publish a UUID-named top-level file under a name that
    an existing file already has"

    Spec: CKPT-WRITE-008
    "A writer MAY overwrite an existing classic checkpoint or multi-part part of the same version with
    a file that describes the same table state, or keep the existing file instead of writing its own."

    Spec: CKPT-CLEAN-013
    "A cleaner MUST NOT delete a sidecar file that a classic-named or UUID-named checkpoint
    remaining after the cleanup references"

    Spec: CKPT-CLEAN-017
    "A cleaner SHOULD delete every file in `_delta_log/_sidecars/` that no remaining checkpoint
    references and whose modification time is before the sidecar cutoff."

    Spec: CKPT-CLEAN-028
    "A cleaner MUST NOT delete `_last_checkpoint`, any file outside `_delta_log/`, or any file in
    `_delta_log/` other than commit, checkpoint, checksum and log compaction files, staged commits,
    sidecar files and the Hadoop checksum file `.<name>.crc` of a file it deletes, except the files of
    an abandoned writer staging directory as CKPT-CLEAN-025 allows …"

    Spec: CKPT-CLEAN-027
    "A cleaner MAY delete a file directly in `_delta_log/_sidecars/` whose name is a sidecar temporary
    name and that no remaining checkpoint references, together with its Hadoop checksum file, when its
    modification time is before the sidecar cutoff."
    """
    root = store.root
    store.upload_small_table(tmp_path)
    commits = sorted(store.listing())
    ours_before, cross_before = store.ours(), store.cross_reader(root.uri)
    at_last_point: list[str] = []

    def check(point: str) -> None:
        names = sorted(store.listing())
        new = [n for n in names if n not in commits and not n.startswith("_sidecars/")]
        sidecars = [n for n in names if n.startswith("_sidecars/")]
        where = f"{root} (writer waiting at {point})"
        if point == UPLOAD_HELD:
            assert sidecars == [], f"{where}: sidecars {sidecars}"
        else:  # the tasks wrote every sidecar at its final name before the first pause
            assert len(sidecars) == 3, f"{where}: sidecars {sidecars}, expected three"
        if point == "top-level":
            assert len(new) == 1 and ".checkpoint." in new[0], f"{where}: new files {new}"
        else:
            assert new == [], f"{where}: a checkpoint or _last_checkpoint appeared: {new}"
        assert "_last_checkpoint" not in names, f"{where}: _last_checkpoint written"
        assert_states_equal(ours_before, store.ours(), context=f"{where}: our reader before vs now")
        cross = store.cross_reader(root.uri)
        assert_states_equal(
            cross_before,
            cross,
            context=f"{where}: cross-reader before vs now",
            ignore=unavailable_fields(cross),
        )
        at_last_point[:] = names

    for points in KILLS:
        if points == (UPLOAD_HELD,):
            killed_mid_upload(store, check)
        else:
            argv = checkpoint_argv(
                root.uri,
                fault=",".join(f"pause:{point}" for point in points),
                global_args=store.cli_args,
                storage_options=store.options,
            )
            paused_then_killed(argv, points, check)
        assert sorted(store.listing()) == at_last_point, (
            f"{root}: the kill at {points[-1]} changed the listing"
        )
    killed_top = [n for n in at_last_point if n not in commits and not n.startswith("_sidecars/")]
    killed_temps = store.temps()
    # HDFS: the held writes' temp files; S3: none (an object appears whole, one PUT, or not at all).
    assert bool(killed_temps) is (store.name == "hdfs"), f"{root}: the killed runs left temps {killed_temps}"
    assert store.staged() == {}, f"{root}: a V2 run with a JSON top-level file staged {store.staged()}"

    classic = CheckpointOptions(
        spec=CheckpointSpec.V2, naming=CheckpointNaming.CLASSIC, actions_per_sidecar=4
    )
    race = RacersAt(store, PublicationPoint.SIDECARS_PUBLISHED, classic)
    race_start = set(store.listing())
    with pytest.raises(CheckpointConflict) as lost:
        write_checkpoint(
            root.uri, options=replace(classic, hooks=race), spark=store.spark, storage_options=store.options
        )
    assert race.second is not None and race.cleaned is not None, f"{root}: the racers never ran"
    names = {f.name for f in race.second.top_level}
    assert len(names) == 1 and not race.second.top_level[0].kept_existing, (
        f"{root}: the second writer's top-level files {race.second.top_level}"
    )
    error = lost.value
    taken = str(root / "_delta_log" / next(iter(names)))
    assert (error.code, error.path, error.rule) == ("CHECKPOINT_CONFLICT", taken, "CKPT-WRITE-006"), (
        f"{root}: the losing writer's error {error}"
    )
    # The first writer's sidecars: published when the second writer started, referenced by nothing.
    orphans = {n for n in race.before - race_start if n.startswith("_sidecars/")}
    needed = {f.name for f in race.second.sidecars} | names | set(killed_top)
    assert orphans and orphans <= race.in_flight, (
        f"{root}: the first writer's sidecars {sorted(orphans)}, in flight when the cleaner ran "
        f"{sorted(race.in_flight)}"
    )
    gone = {d.name for d in race.cleaned.deleted}
    assert race.cleaned.deleted_log_files and not gone & (orphans | needed), (
        f"{root}: the racing cleaner ({race.cleaned.status}: {race.cleaned.message}) deleted {sorted(gone)}"
    )
    # The killed run's temp files are as recent as the in-flight sidecars: the one-day floor protects them too.
    assert not gone & set(killed_temps), f"{root}: the racing cleaner deleted temp files {sorted(gone)}"
    left = set(store.listing())
    assert needed | {"_last_checkpoint"} <= left and not orphans & left, (
        f"{root}: after the race {sorted(left)}; the losing writer's sidecars {sorted(orphans)}"
    )
    log = root / "_delta_log"
    changed = [name for name, data in race.won.items() if store.storage.read_bytes(log / name) != data]
    assert changed == [], f"{root}: the losing writer changed the winner's {changed}"
    report = validate_table(root.uri, store.options, session=lambda: store.spark, state=False)
    findings = "\n".join(f"{f.level} {f.rule} {f.file}: {f.seen}" for f in report.sorted_findings())
    assert report.exit_status == 0, f"{root}: the table is not valid after the race:\n{findings}"
    ours = store.ours()
    assert_states_equal(ours_before, ours, context=f"{root} after the race: our reader")
    # CKPT-READ-004: of the checkpoints of a version, the UUID-named one before a classic-named one.
    assert ours.source["checkpoint"]["files"] == killed_top, f"{root}: our reader used {ours.source}"
    cross = store.cross_reader(root.uri)
    assert_states_equal(
        cross_before, cross, context=f"{root} after the race: cross-reader", ignore=unavailable_fields(cross)
    )

    # A writer that fails after publishing its sidecars (hooks raise at the point where the paused run
    # above was seen to have published them): they are referenced by nothing, and are left to sidecar GC.
    failed = replace(classic, naming=CheckpointNaming.UUID, hooks=FaultPlan(raise_at=frozenset({"sidecars"})))
    before_failed = set(store.listing())
    with pytest.raises(InjectedFault):
        write_checkpoint(root.uri, options=failed, spark=store.spark, storage_options=store.options)
    abandoned = set(store.listing()) - before_failed
    assert abandoned and all(n.startswith("_sidecars/") for n in abandoned), (
        f"{root}: the failed writer left {sorted(abandoned)}, not only sidecars"
    )

    temps = store.temps()  # the killed run's temp files: what of them the kill left
    assert temps == killed_temps, (
        f"{root}: temp files {sorted(temps)}, after the kills {sorted(killed_temps)}"
    )
    # Past the default 30-day retention for every file: the sidecar cutoff too.
    now = max([*store.listing().values(), *temps.values()]) + 31 * DAY_MS
    cleaned = cleanup(root.uri, now_ms=now, spark=store.spark, storage_options=store.options)
    assert store.temps() == {}, f"{root}: cleanup ({cleaned.status}) left temp files {store.temps()}"
    assert store.staged() == {} and cleaned.deleted_staging == [], (
        f"{root}: staging {cleaned.deleted_staging}"
    )
    raw = [k for k in store.raw_log_keys() if STAGING in k or k.endswith("/")]
    assert raw == [], f"{root}: keys under _delta_log/ (staging, S3A directory markers?): {raw}"
    left = set(store.listing())
    assert needed <= left, f"{root}: cleanup deleted a referenced file: left {sorted(left)}"
    collected_sidecars = {d.name for d in cleaned.deleted_sidecars}
    assert set(temps) <= collected_sidecars, (
        f"{root}: temp files {sorted(temps)}, deleted {collected_sidecars}"
    )
    assert abandoned <= collected_sidecars and not abandoned & left, (
        f"{root}: the failed writer's sidecars {sorted(abandoned)}; cleanup ({cleaned.status}) deleted the "
        f"sidecars {sorted(collected_sidecars)}, left {sorted(abandoned & left)}"
    )
    assert store.ours().files == ours_before.files, f"{root}: files differ after cleanup"


def sidecar_upload(method: str, target: str) -> bool:
    """A sidecar task's upload of its sidecar, at its final name in ``_sidecars/``."""
    path = target.split("?")[0]
    return method == "PUT" and "/_delta_log/_sidecars/" in path and path.endswith(".parquet")


def killed_mid_upload(store: Store, check: Callable[[str], None]) -> None:
    """Run the checkpoint command with its sidecar uploads held (:attr:`Store.hold_uploads`); ``check``, then kill it."""
    with store.hold_uploads(store) as hold:
        argv = checkpoint_argv(
            store.root.uri,
            global_args=store.cli_args + hold.cli_args,
            storage_options=store.options | hold.options,
        )
        paused_then_killed(argv, (UPLOAD_HELD,), check, held=hold.held)


@contextlib.contextmanager
def held_by_proxy(store: Store) -> Iterator[UploadHold]:
    """S3: the command talks to the server through a proxy that holds each sidecar's ``PUT`` half sent.

    Afterwards no object exists at a held upload's key, and no multipart upload was started (so
    none is left open): the sidecars of a small table are uploaded in one ``PUT`` each.
    """
    root = store.root
    with holding_proxy(store.options["AWS_ENDPOINT_URL"], sidecar_upload) as proxy:
        yield UploadHold({"AWS_ENDPOINT_URL": proxy.endpoint}, (), proxy.held)
    log_key = f"/{root.authority}/{root.key.strip('/')}/_delta_log/"
    held = {r.split(" ")[1].split("?")[0].removeprefix(log_key) for r in proxy.held_requests}
    assert held and all(h.startswith("_sidecars/") for h in held), f"{root}: held {proxy.held_requests}"
    listed = store.listing()
    assert not held & set(listed), f"{root}: half-sent uploads are objects: {sorted(held & set(listed))}"
    multipart = [r for r in proxy.requests if "uploads" in r.partition("?")[2]]
    assert multipart == [], f"{root}: multipart uploads started (and left open): {multipart}"


@contextlib.contextmanager
def held_by_datanode(hdfs: HdfsServer, store: Store) -> Iterator[UploadHold]:
    """HDFS: the DataNode stops receiving each sidecar's block once its first bytes are on its disk.

    The writer's tasks stream the block to the DataNode the NameNode named, so the hold is in
    the DataNode (:meth:`HdfsServer.holding_writes`); it is released after the kill. Afterwards
    each held file is still there under its hidden temp name, unfinished: the NameNode lists it
    with length 0 (it learns a block's length when the writer finishes it, and nothing finishes
    it: the writer's lease on it lapses only after the NameNode's hard limit, twenty minutes), fewer
    bytes than the DataNode had on its disk. The writes are the tasks' Python workers', which
    :func:`~tests.support.cli_runs.paused_then_killed` kills with the command before the release;
    one that outlived the kill finished its write once released (a stop-29 run listed the full
    length), so a length other than 0 is a writer not dead when it should be.
    """
    log = f"{urlsplit(store.root.uri).path.rstrip('/')}/_delta_log/"
    pattern = f"^{re.escape(log)}_sidecars/[.].*[.]tmp$"
    with hdfs.holding_writes(pattern) as holds:
        yield UploadHold({}, (), holds.held)
    held = {path.removeprefix(log): size for path, size in holds.blocks}
    temp = re.compile(r"^_sidecars/[.].+[.]tmp$")
    assert held and all(temp.match(h) and size > 0 for h, size in held.items()), (
        f"{store.root}: held {holds.blocks}"
    )
    listed = {n: store.storage.list_dir(store.root / "_delta_log" / n.rpartition("/")[0]) for n in held}
    sizes = {n: [f.size for f in files if f.name == n.rpartition("/")[2]] for n, files in listed.items()}
    assert sizes == {n: [0] for n in held}, (
        f"{store.root}: held files (bytes on the DataNode {held}) are listed with sizes {sizes}"
    )
