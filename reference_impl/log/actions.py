"""The action vocabulary of the log and of checkpoint files: which columns, in which order.

Spec: ``spec/checkpoints.md`` §6 Checkpoint content and §7 Parquet layout (``CKPT-SCHEMA-*``);
PROTOCOL.md "Actions" and "Checkpoint Schema". No Spark here: the Spark types of these actions are
in :mod:`reference_impl.spark.schemas`.

| action | in commits | in a V1 checkpoint | in a V2 top-level file | in a sidecar |
|---|---|---|---|---|
| ``txn`` | yes | yes | yes | no |
| ``add`` | yes | yes | only without sidecars | yes |
| ``remove`` | yes | yes (no stats/tags) | only without sidecars | yes (no stats/tags) |
| ``metaData`` | yes | yes | yes | no |
| ``protocol`` | yes | yes | yes | no |
| ``domainMetadata`` | yes | live ones | live ones | no |
| ``checkpointMetadata`` | never | never | exactly one | no |
| ``sidecar`` | never | never | 0..n | no |
| ``commitInfo``, ``cdc`` | yes (replay ignores them) | never | never | never |

Column orders follow delta-spark 4.4 (``actions.scala``, ``Checkpoints.buildCheckpoint``).
"""

from __future__ import annotations

#: The file actions (reconciled by ``(path, deletion-vector id)``).
FILE_ACTIONS: tuple[str, ...] = ("add", "remove")

#: Action columns in the order delta-spark writes them in checkpoint Parquet files.
V1_CHECKPOINT_COLUMNS: tuple[str, ...] = ("txn", "add", "remove", "metaData", "protocol", "domainMetadata")
V2_TOP_LEVEL_COLUMNS: tuple[str, ...] = (*V1_CHECKPOINT_COLUMNS, "checkpointMetadata", "sidecar")

#: The non-file actions a checkpoint's top-level file may hold (collected to the driver on read).
NON_FILE_COLUMNS: tuple[str, ...] = (
    "txn",
    "metaData",
    "protocol",
    "domainMetadata",
    "checkpointMetadata",
    "sidecar",
)

#: The non-file actions replay keeps, in the order a checkpoint's rows are sorted.
REPLAYED_NON_FILE: tuple[str, ...] = ("protocol", "metaData", "txn", "domainMetadata")

#: Field order of ``add`` in V1 checkpoints and sidecars (delta-spark ``Checkpoints.buildCheckpoint``):
#: ``stats`` moves after ``clusteringProvider``; ``partitionValues_parsed`` and ``stats_parsed``
#: follow when written.
CHECKPOINT_ADD_FIELDS: tuple[str, ...] = (
    "path",
    "partitionValues",
    "size",
    "modificationTime",
    "dataChange",
    "tags",
    "deletionVector",
    "baseRowId",
    "defaultRowCommitVersion",
    "clusteringProvider",
)

#: Field order of ``remove`` in V1 checkpoints and sidecars: no ``tags``, no ``stats``.
CHECKPOINT_REMOVE_FIELDS: tuple[str, ...] = (
    "path",
    "deletionTimestamp",
    "dataChange",
    "extendedFileMetadata",
    "partitionValues",
    "size",
    "deletionVector",
    "baseRowId",
    "defaultRowCommitVersion",
)
