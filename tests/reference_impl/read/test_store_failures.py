"""A store that fails to serve a checkpoint file to the reader (its Spark jobs, its driver): ``STORAGE_ERROR`` naming the file.

Spec: ``spec/checkpoints.md`` §16.4 Invalid and unreadable checkpoints (``CKPT-READ-027``), §21 Error codes.

The tables are the fixtures ``valid/unreadable_v1_stalecrc_to_older`` and
``valid/unreadable_sidecar_stalecrc_to_older`` uploaded to the session's S3 server without their hidden
files, so without the stale Hadoop ``.crc``: an intact checkpoint at version 4 (classic V1; UUID-named V2
with one sidecar) and an older one at version 2 that a reader would fall back to. ``delta-ckpt
snapshot`` runs in a process of its own (a fresh JVM: the S3A file system a test session may have
cached for the bucket would bypass the proxy) and reaches the server through a proxy
(:mod:`tests.support.servers.hold_proxy`) that has the server refuse with its own ``403`` every
request of Spark's S3A client for one file of checkpoint 4, while the driver's reads through obstore
(listing, ``_last_checkpoint``, the footer checks) are served: the store fails in the Spark job,
after the reader chose the checkpoint. Before CKPT-READ-027 the reader called the V1 file
``CHECKPOINT_CORRUPT``, fell back to checkpoint 2 through the same store and printed a state (exit 0);
the sidecar was ``CHECKPOINT_CORRUPT``. One case has the store refuse the driver's reads of the V1
file's bytes instead (obstore's ``GET`` requests; its ``HEAD`` is served): the footer check turned that
``STORAGE_ERROR`` into ``CHECKPOINT_CORRUPT`` and fell back the same way.

On HDFS (a MiniDFSCluster of the test's own), the store fails later: the snapshot is read (listing,
checks, the checkpoint's non-file actions), then the DataNode is shut down, then the state is
collected — its Spark job meets ``BlockMissingException`` reading the checkpoint's file actions
(:meth:`~reference_impl.read.snapshot.Snapshot.replay_errors`; it was ``CHECKPOINT_CORRUPT``).

The other way round, bytes that do not decode stay the file's fault although Parquet reports them as a
``java.io.IOException`` too: the same V1 checkpoint with its first page header overwritten by noise
(the footer reads, so only Spark's job meets it) is ``CHECKPOINT_CORRUPT`` and the reader falls back.
"""

from __future__ import annotations

import random
import shutil
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from conformance.oracles.delta_jars import cached_s3a_jars
from conformance.oracles.session import temporary_conf
from conformance.plugin import unavailable
from fixtures import FIXTURES_DIR
from reference_impl.errors import CheckpointCorrupt, StorageError
from reference_impl.log.listing import list_log
from reference_impl.read.checkpoint import load_checkpoint
from reference_impl.read.snapshot import read_snapshot
from reference_impl.spark.jobs import io_cause
from reference_impl.storage import Location, storage_for
from tests.reference_impl.write.test_bad_input import ERROR_LINE
from tests.support.cli_runs import run_checkpoint
from tests.support.servers.hdfs import mini_hdfs
from tests.support.servers.hold_proxy import holding_proxy
from tests.support.servers.seaweed import S3Server
from tests.support.store_tables import upload

_SIDECAR = "_sidecars/00000000000000000004.checkpoint.0000000001.0000000001.bf65c29d-1d7b-47fd-8123-f9816a7a078f.parquet"
#: case: (fixture, the file of checkpoint 4 the store refuses (relative to ``_delta_log``), to whom: the
#: reader's Spark jobs (S3A) or its driver (obstore), the rule the error names).
CASES = {
    "spark-v1-checkpoint": (
        "unreadable_v1_stalecrc_to_older",
        "00000000000000000004.checkpoint.parquet",
        "spark",
        "CKPT-READ-027",
    ),
    "spark-sidecar": ("unreadable_sidecar_stalecrc_to_older", _SIDECAR, "spark", "CKPT-READ-027"),
    # The driver's footer check meets the store's own StorageError (as the store raised it, no rule).
    "driver-v1-checkpoint": (
        "unreadable_v1_stalecrc_to_older",
        "00000000000000000004.checkpoint.parquet",
        "driver",
        None,
    ),
}
#: What Spark's S3A client (the AWS SDK for Java) puts in its ``User-Agent``; obstore's says ``object_store``.
S3A_AGENT = "aws-sdk-java"
#: How the store's refusal shows in the error (S3A: ``AccessDeniedException``; obstore: the status).
REFUSAL = ("403", "AccessDenied", "access denied", "Forbidden")


def _holds_no_upload(method: str, target: str) -> bool:
    return False


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-027")
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_store_refusing_a_checkpoint_file_is_a_storage_error_without_fallback(
    case: str, s3_server: S3Server
) -> None:
    """The store answers the Spark jobs' (or the driver's) reads of one file of checkpoint 4 with ``403``:
    exit 2, one ``STORAGE_ERROR`` line naming that file (and CKPT-READ-027 when a Spark job met it) with
    the store's own failure in it, and nothing on stdout — no state from checkpoint 2 (no fall-back)
    and no ``CHECKPOINT_CORRUPT``.

    Spec: CKPT-READ-027
    "A reader MUST NOT treat a store's failure to serve a file it reads (a checkpoint file, a sidecar or a commit) as an invalid or unreadable checkpoint to fall back from ([CKPT-READ-012](#CKPT-READ-012)) or as a corrupt file, when the failure is an I/O error that is not about the file's content (not bytes that do not decode, not a Hadoop checksum mismatch ([CKPT-READ-026](#CKPT-READ-026)), not a missing file); it MUST fail with `STORAGE_ERROR` naming the file."
    """
    jars = cached_s3a_jars()
    if jars is None:
        unavailable("Hadoop's S3A connector", "not resolved (run `delta-ckpt env --resolve-jars`)")
        return
    fixture, refused, client, rule = CASES[case]
    root = Location.parse(s3_server.uri(f"store-failure-{uuid.uuid4().hex[:8]}"))
    options = s3_server.storage_options()
    upload(storage_for(root, options), FIXTURES_DIR / "valid" / fixture / "table", root)
    key = f"/{root.authority}/{root.key.strip('/')}/_delta_log/{refused}"

    def reads_of_the_file(method: str, target: str, headers: Mapping[str, str]) -> bool:
        by_spark = S3A_AGENT in headers.get("user-agent", "")
        bytes_read = client == "spark" or method == "GET"  # the driver's HEAD (its stat) is served
        return by_spark == (client == "spark") and bytes_read and target.partition("?")[0] == key

    with holding_proxy(options["AWS_ENDPOINT_URL"], _holds_no_upload, refuse=reads_of_the_file) as proxy:
        through_proxy = options | {"AWS_ENDPOINT_URL": proxy.endpoint}
        argv = [sys.executable, "-m", "reference_impl.cli"]
        argv += ["--conf", f"spark.jars={','.join(str(j) for j in jars)}", "snapshot", root.uri]
        proc = run_checkpoint(argv + [f"--storage-option={k}={v}" for k, v in through_proxy.items()])
    where = f"{root}/_delta_log/{refused}"
    served = [r for r in proxy.requests if r.split(" ")[1].partition("?")[0] == key]
    assert proxy.refused and (client == "driver" or len(served) > len(proxy.refused)), (
        f"{where}: requests for it {served}, refused {proxy.refused}: the driver's reads must pass, Spark's fail"
    )
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and proc.stdout == "" and len(lines) == 1, (
        f"{where}: exit {proc.returncode}, stdout {proc.stdout!r}, stderr {lines}"
    )
    match = ERROR_LINE.match(lines[0])
    assert match is not None, f"{where}: not one 'CODE: message [file: …]' line: {lines[0]!r}"
    assert (match["code"], match["file"], match["rule"]) == ("STORAGE_ERROR", where, rule), (
        f"{where}: {lines[0]!r}"
    )
    assert any(word in match["message"] for word in REFUSAL), (
        f"{where}: the store's own failure is not in {lines[0]!r}"
    )


#: The cases whose table :func:`test_hdfs_losing_its_datanode_before_the_replay_is_a_storage_error` reads.
HDFS_CASES = ("spark-v1-checkpoint", "spark-sidecar")
#: HDFS client settings for the test's own cluster: the client waits ``dfs.client.retry.window.base`` ms
#: (default 3000) times the attempt before it asks the NameNode again for a block no DataNode served,
#: about 35 s a file with the default; the file systems of other clusters are made already and keep theirs.
FAST_HDFS_RETRIES = {"dfs.client.retry.window.base": "20"}


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-027")
def test_hdfs_losing_its_datanode_before_the_replay_is_a_storage_error(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The tables of :data:`HDFS_CASES` on one MiniDFSCluster of the test's own; their snapshots read,
    then the DataNode shut down: collecting each state fails with ``STORAGE_ERROR`` naming the file of
    checkpoint 4 whose file actions the job reads (the V1 file; the sidecar), CKPT-READ-027, the store's
    ``BlockMissingException`` in the message.

    Spec: CKPT-READ-027
    "A reader MUST NOT treat a store's failure to serve a file it reads (a checkpoint file, a sidecar or a commit) as an invalid or unreadable checkpoint to fall back from ([CKPT-READ-012](#CKPT-READ-012)) or as a corrupt file, when the failure is an I/O error that is not about the file's content (not bytes that do not decode, not a Hadoop checksum mismatch ([CKPT-READ-026](#CKPT-READ-026)), not a missing file); it MUST fail with `STORAGE_ERROR` naming the file."
    """
    errors: dict[str, tuple[str, StorageError | CheckpointCorrupt | None]] = {}
    with temporary_conf(spark, FAST_HDFS_RETRIES), mini_hdfs(tmp_path) as hdfs:
        snapshots = {}
        for case in HDFS_CASES:
            fixture, read, _, _ = CASES[case]
            root = Location.parse(hdfs.uri(case))
            upload(storage_for(root, session=lambda: spark), FIXTURES_DIR / "valid" / fixture / "table", root)
            snapshots[case] = (f"{root}/_delta_log/{read}", read_snapshot(spark, root.uri))
        for where, snapshot in snapshots.values():
            assert snapshot.checkpoint is not None and snapshot.checkpoint.instance.version == 4, (
                f"{where}: not read from checkpoint 4: {snapshot.source()}"
            )
        hdfs.stop_datanodes()
        for case, (where, snapshot) in snapshots.items():
            try:
                snapshot.table_state()
                errors[case] = (where, None)
            except (StorageError, CheckpointCorrupt) as exc:
                errors[case] = (where, exc)
    for case, (where, error) in errors.items():
        assert isinstance(error, StorageError), f"{where}: collecting the state gave {error!r}"
        assert (error.path, error.rule) == (where, CASES[case][3]), f"{where}: {error}"
        assert "BlockMissingException" in error.message, f"{where}: the store's own failure is not in {error}"


#: Bytes of noise written over the first page header of the checkpoint (just after the magic ``PAR1``).
NOISE_BYTES = 200


@pytest.mark.spark
@pytest.mark.requirement("CKPT-READ-027", "CKPT-READ-012")
def test_bytes_spark_cannot_decode_are_the_files_fault_not_the_stores(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Checkpoint 4 of ``valid/unreadable_v1_stalecrc_to_older`` (its stale ``.crc`` removed) with noise
    over its first page header: the footer reads, so the driver's checks pass, and Spark's job fails with
    Parquet's ``IOException`` ("can not read class …PageHeader", caused by Thrift). That is the file's
    fault: ``CHECKPOINT_CORRUPT`` naming it, and the reader falls back to checkpoint 2.

    Spec: CKPT-READ-027
    "A reader MUST NOT treat a store's failure to serve a file it reads (a checkpoint file, a sidecar or a commit) as an invalid or unreadable checkpoint to fall back from ([CKPT-READ-012](#CKPT-READ-012)) or as a corrupt file, when the failure is an I/O error that is not about the file's content (not bytes that do not decode, not a Hadoop checksum mismatch ([CKPT-READ-026](#CKPT-READ-026)), not a missing file); it MUST fail with `STORAGE_ERROR` naming the file."

    Spec: CKPT-READ-012
    "When the checkpoint it would use is invalid or unreadable, a reader SHOULD fall back to the newest older complete checkpoint, or to the commits from version 0, from which a gap-free chain of commits reaches the requested version."
    """
    table = tmp_path / "table"
    shutil.copytree(FIXTURES_DIR / "valid" / "unreadable_v1_stalecrc_to_older" / "table", table)
    log = table / "_delta_log"
    checkpoint = log / "00000000000000000004.checkpoint.parquet"
    (log / f".{checkpoint.name}.crc").unlink()
    data = bytearray(checkpoint.read_bytes())
    noise = random.Random(1)
    data[4 : 4 + NOISE_BYTES] = bytes(noise.randrange(256) for _ in range(NOISE_BYTES))
    checkpoint.write_bytes(bytes(data))
    log_dir = Location.parse(str(log))
    storage = storage_for(log_dir)
    (instance,) = [c for c in list_log(storage, log_dir).checkpoints if c.version == 4]
    with pytest.raises(CheckpointCorrupt) as caught:
        load_checkpoint(spark, storage, log_dir, instance)
    assert caught.value.path == str(checkpoint), f"{checkpoint}: the error names {caught.value.path}"
    assert "PageHeader" in caught.value.message, (
        f"{checkpoint}: Parquet's own failure is not in {caught.value}"
    )
    cause = io_cause(caught.value.__cause__) if caught.value.__cause__ is not None else None
    assert cause is not None and "PageHeader" in cause, (
        f"{checkpoint}: Spark's failure has no Parquet IOException in its chain ({cause}): the case tests nothing"
    )
    snapshot = read_snapshot(spark, table)
    assert snapshot.segment.fallback_from == (checkpoint.name,) and snapshot.checkpoint is not None, (
        f"{table}: no fall-back from {checkpoint.name}: {snapshot.source()}"
    )
    assert snapshot.checkpoint.instance.version == 2, f"{table}: fell back to {snapshot.source()}"
