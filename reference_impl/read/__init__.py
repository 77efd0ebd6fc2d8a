"""The reference reader: reconstruct a table version from its log, on Spark.

Modules, in pipeline order:

| module | holds |
|---|---|
| :mod:`~reference_impl.read.sidecars` | the one interpretation of ``sidecar.path``; a top-level file's sidecar references |
| :mod:`~reference_impl.read.checkpoint` | load one checkpoint (V1 classic or multi-part, V2 JSON/Parquet, with sidecars); a file that cannot be read is ``CHECKPOINT_CORRUPT`` (fall back), a store that fails to serve it ``STORAGE_ERROR`` (no fall-back, ``CKPT-READ-027``) |
| :mod:`~reference_impl.read.commits` | the commits after it: file actions by one Spark scan, non-file actions by a driver pass that skips file-action lines |
| :mod:`~reference_impl.read.snapshot` | :func:`~reference_impl.read.snapshot.read_snapshot`: segment → checkpoint → commits → reconciled :class:`~reference_impl.read.snapshot.Snapshot` |

``read`` imports ``log``, ``storage``, ``spark``, ``errors`` and :mod:`spec`; ``write`` and
``cleanup`` use it.
"""
