"""The log: what is on disk under ``_delta_log`` and what it means — no SparkSession.

Modules, in pipeline order (a reader lists the log, reads the hint, picks a segment; a writer and
a cleaner use the same vocabulary):

| module | holds |
|---|---|
| :mod:`~reference_impl.log.naming` | the file-name grammar: parse and format every kind of ``_delta_log`` name |
| :mod:`~reference_impl.log.actions` | the action vocabulary: which action columns, in which order, go where |
| :mod:`~reference_impl.log.table_properties` | the only reader of ``delta.*`` table properties, with delta-spark's defaults |
| :mod:`~reference_impl.log.features` | which writer features the writer and the cleaner support: one table for both roles |
| :mod:`~reference_impl.log.last_checkpoint` | ``_last_checkpoint``: parse, validate, serialise, its checksum, and reading it |
| :mod:`~reference_impl.log.listing` | one listing of ``_delta_log`` classified: commits, complete checkpoints, ignored names |
| :mod:`~reference_impl.log.segment` | the checkpoint and commits that reconstruct a version, and the fallbacks |

The log imports :mod:`reference_impl.storage`, :mod:`reference_impl.errors` and :mod:`spec`; never
``spark``, ``read``, ``write``, ``cleanup`` or ``cli``.
"""
