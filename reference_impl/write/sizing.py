"""How many sidecars a V2 checkpoint gets: by action count, estimated bytes and the cores Spark has.

Spec: ``spec/checkpoints.md`` §12 Sidecar files (the number of sidecars is the writer's choice; every
file action is in exactly one sidecar).

delta-spark caps a V2 checkpoint's sidecars at 50,000 actions each: without the session setting
``spark.databricks.delta.checkpoint.partSize`` it uses 50,000 when V2 is enabled and writes
``ceil((files + tombstones) / partSize)`` sidecars (delta-io/delta ``Checkpoints.scala`` L937-944 at
bb1057f4; the setting's documentation, ``DeltaSQLConf.scala`` L1346-1352: "a maximum of this many
actions per checkpoint file"). That cap is kept as the upper bound (applied to an estimate of the
actions when the writer does not count the state first: below). Two more lower bounds on the
count make the write use the machine and keep files a sane size:

* **bytes** — tables with wide statistics have big actions (kafka-delta-ingest#187: 45 MB for 12,316
  rows); a sidecar holds at most :data:`TARGET_SIDECAR_BYTES` of estimated action bytes (the
  lengths of ``path`` and ``stats``, the bulk of an action, summed in the pass that counts the state);
* **cores** — one Spark task writes one sidecar, so fewer sidecars than cores leaves cores idle; a
  state gets up to one sidecar per core (``defaultParallelism``), as long as each holds at least
  :data:`MIN_ACTIONS_PER_CORE_SIDECAR` actions (no tiny files for small tables).

``--actions-per-sidecar N`` (``CheckpointOptions.actions_per_sidecar``) overrides all of this:
exactly ``ceil(actions / N)`` sidecars.

Without that override the writer does not count the state before writing it (a second pass over
a million actions costs more than the write): :func:`log_estimate` derives the actions and bytes
from the byte lengths of the log files replayed — known from the listing, so the count is a
deterministic function of the input, and the state is reconciled, shaped and written in one job.
The estimate errs towards more actions for commits with statistics (a line of ~450 bytes; a
checkpoint's compressed Parquet ~115 bytes an action), and removed or replaced files make it high
too; commit lines without statistics (~120 bytes) make it low, so their sidecars can hold up to
about twice the cap. Files that end up empty are not published (§12 leaves the number of sidecars
to the writer, §17.4 lets a V2 writer cluster file actions into sidecars as it likes).
"""

from __future__ import annotations

import math

#: delta-spark's default ``checkpoint.partSize`` for V2 checkpoints (see the module docs).
DELTA_SPARK_ACTIONS_PER_SIDECAR = 50_000
#: Estimated (uncompressed) action bytes per sidecar at most.
TARGET_SIDECAR_BYTES = 64 * 1024 * 1024
#: A sidecar added only to use another core holds at least this many actions.
MIN_ACTIONS_PER_CORE_SIDECAR = 5_000
#: Incremental checkpoints (:mod:`~reference_impl.write.incremental`): a sidecar is *small* below
#: the per-sidecar cap divided by this, and small base sidecars are compacted once
#: :data:`MAX_SMALL_SIDECARS` (the default ``max_small_sidecars``) of them would be reused.
SMALL_SHARE = 4
MAX_SMALL_SIDECARS = 8
#: Bytes of a commit file (JSON lines) per file action, and of a checkpoint file (Parquet) per
#: action, that :func:`log_estimate` assumes (both below the usual size: the estimate errs high).
COMMIT_BYTES_PER_ACTION = 256
CHECKPOINT_BYTES_PER_ACTION = 64


def small_rows(actions_per_sidecar: int | None) -> int:
    """Rows below which a sidecar is small: the per-sidecar cap divided by :data:`SMALL_SHARE`."""
    return max(1, (actions_per_sidecar or DELTA_SPARK_ACTIONS_PER_SIDECAR) // SMALL_SHARE)


def sidecar_count(actions: int, estimated_bytes: int, cores: int, actions_per_sidecar: int | None) -> int:
    """The number of sidecars for ``actions`` file actions (at least 1; see the module docs)."""
    if actions_per_sidecar is not None:
        return max(1, math.ceil(actions / actions_per_sidecar))
    by_actions = math.ceil(actions / DELTA_SPARK_ACTIONS_PER_SIDECAR)
    by_bytes = math.ceil(estimated_bytes / TARGET_SIDECAR_BYTES)
    by_cores = min(max(cores, 1), actions // MIN_ACTIONS_PER_CORE_SIDECAR)
    return max(1, by_actions, by_bytes, by_cores)


def log_estimate(commit_bytes: int, checkpoint_bytes: int) -> tuple[int, int]:
    """(file actions, action bytes) of a state replayed from ``commit_bytes`` of commit files and
    ``checkpoint_bytes`` of checkpoint files (top-level files and sidecars), estimated without a pass
    over the state (see the module docs); the bytes of a checkpoint count as those of commit lines."""
    actions = commit_bytes // COMMIT_BYTES_PER_ACTION + checkpoint_bytes // CHECKPOINT_BYTES_PER_ACTION
    return actions, commit_bytes + checkpoint_bytes * (COMMIT_BYTES_PER_ACTION // CHECKPOINT_BYTES_PER_ACTION)
