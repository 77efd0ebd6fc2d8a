"""``delta-spark`` as an implementation under test: its reader, checkpoint writer and cleaner, through py4j.

The oracle functions (:mod:`conformance.oracles.delta_spark`) give its snapshot as a
``TableState``; this module adds the adapter contract around them: writer profiles, error codes
(Java exception messages mapped by :mod:`conformance.adapters.error_codes`) and the session.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.adapter import MAX_CHECKPOINT_FILES
from conformance.oracles.delta_spark import (
    delta_snapshot,
    delta_spark_cleanup,
    jvm_of,
    snapshot_row_count,
    snapshot_state,
)
from spec.vocabulary import CheckpointNaming, CheckpointSpec, TopLevelFormat

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_THROW = "spark.databricks.delta.checkpoint.exceptionThrowing.enabled"
_PART_SIZE = "spark.databricks.delta.checkpoint.partSize"
_DS_PROFILE_CONF: dict[str, dict[str, str]] = {
    "v1": {},
    "multipart": {_PART_SIZE: "2"},
    "v2-json": {_PART_SIZE: "2",
                "spark.databricks.delta.checkpointV2.topLevelFileFormat": "json"},
    "v2-parquet": {_PART_SIZE: "2",
                   "spark.databricks.delta.checkpointV2.topLevelFileFormat": "parquet"},
}  # fmt: skip


def _delta_spark_profiles() -> tuple[Any, ...]:
    from conformance.adapter import WriterProfile

    v1, v2 = CheckpointSpec.V1, CheckpointSpec.V2
    uuid = CheckpointNaming.UUID
    return (
        WriterProfile(
            "v1",
            "delta-spark's default on a classic table: one classic V1 file",
            v1,
            CheckpointNaming.CLASSIC,
        ),
        WriterProfile(
            "multipart",
            "partSize=2: a multi-part V1 checkpoint once the state has more than 2 file actions",
            v1,
            CheckpointNaming.MULTI_PART,
            explicit=True,
        ),
        WriterProfile(
            "v2-json",
            "delta.checkpointPolicy=v2, partSize=2: UUID-named JSON + sidecars",
            v2,
            uuid,
            TopLevelFormat.JSON,
            sidecars=True,
            needs_v2_table=True,
        ),
        WriterProfile(
            "v2-parquet",
            "delta.checkpointPolicy=v2, partSize=2, Parquet top-level file",
            v2,
            uuid,
            TopLevelFormat.PARQUET,
            sidecars=True,
            needs_v2_table=True,
        ),
    )


class DeltaSparkImplementation:
    """``delta-spark`` 4.4: its own reader (``Snapshot``) and checkpoint writer, driven through the JVM.

    Errors are Java exceptions; their messages are mapped to spec codes by
    :mod:`conformance.adapters.error_codes`. The adapter starts its delta-spark session when it is
    created: the jars must be on the classpath of the process's first session, and other adapters
    (``reference``) then share it rather than starting a plain one first.
    """

    def __init__(self) -> None:
        from conformance.adapter import ImplementationInfo, Role

        self.info = ImplementationInfo(
            name="delta-spark",
            version="4.4.0",
            roles=Role.READER | Role.WRITER | Role.CLEANER,
            description="delta-spark 4.4.0 (io.delta:delta-spark_4.2_2.13) through py4j",
            homepage="https://github.com/delta-io/delta",
            reports_checkpoint=True,
            honours_clock=True,
            reads_data=True,
            profiles=_delta_spark_profiles(),
        )
        self._spark()

    def _spark(self) -> SparkSession:
        from conformance.oracles.session import get_delta_spark

        return get_delta_spark()

    def _fail(self, exc: BaseException) -> Exception:
        from conformance.adapter import AdapterError
        from conformance.adapters.error_codes import classify

        message = str(exc).strip().splitlines()
        text = " | ".join(message[:3])[:600]
        return AdapterError(classify(str(exc)), text)

    def read(self, table: Path, *, version: int | None = None, now_ms: int | None = None) -> Any:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        from conformance.adapter import ReadResult

        spark = self._spark()
        try:
            snap = delta_snapshot(spark, str(table), version, now_ms=now_ms)
            state = snapshot_state(spark, snap)
        except (Py4JJavaError, PySparkException) as exc:
            raise self._fail(exc) from exc

        def count() -> int | None:  # a scan of the data files (2 Spark jobs): only when a test compares rows
            try:
                return snapshot_row_count(spark, snap)
            except (Py4JJavaError, PySparkException):
                return None  # data files absent (log-only tables) or unreadable: only the state is compared

        checkpoint = state.source.get("checkpoint")
        return ReadResult(state=state, checkpoint=checkpoint["files"][0] if checkpoint else None, count=count)

    def write_checkpoint(self, table: Path, *, profile: str, version: int | None = None) -> None:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        from conformance.oracles.session import temporary_conf

        spark = self._spark()
        conf = dict(_DS_PROFILE_CONF[profile])
        try:
            with temporary_conf(spark, {_THROW: "true"}):
                snap = delta_snapshot(spark, str(table), version)
                if _PART_SIZE in conf:  # at most MAX_CHECKPOINT_FILES parts or sidecars
                    actions = int(snap.numOfFiles()) + int(snap.numOfRemoves())
                    conf[_PART_SIZE] = str(
                        max(int(conf[_PART_SIZE]), math.ceil(actions / MAX_CHECKPOINT_FILES))
                    )
                with temporary_conf(spark, conf):
                    snap.deltaLog().checkpoint(snap, jvm_of(spark).scala.Option.empty())
        except (Py4JJavaError, PySparkException) as exc:
            raise self._fail(exc) from exc

    def cleanup(self, table: Path, *, now_ms: int | None = None) -> None:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        try:
            delta_spark_cleanup(self._spark(), str(table), now_ms, post_commit=True)
        except (Py4JJavaError, PySparkException) as exc:
            raise self._fail(exc) from exc

    def close(self) -> None:
        return None
