"""The suite's own, independent view of what an implementation wrote: names, files, checksums.

The conformance suite judges implementations, so it never reuses the code under test: it reads
names, checkpoint files and ``_last_checkpoint`` with its own code, written from the spec's text
and tested against the same ``spec/vectors/`` as the reference implementation.

| module | holds |
|---|---|
| :mod:`~conformance.decode.names` | the file-name grammar of spec §4 (lenient and strict) |
| :mod:`~conformance.decode.checksum` | the ``_last_checkpoint`` checksum of spec §15.1 |
| :mod:`~conformance.decode.checkpoint` | a checkpoint's files decoded with pyarrow and ``json`` (top-level, parts, sidecars, hint) |
| :mod:`~conformance.decode.spark_hash` | Spark's hash partitioning in pure Python (which part an action belongs in) |
| :mod:`~conformance.decode.files` | file-tree snapshots and their differences |

``decode`` imports only :mod:`spec` (and pyarrow).
"""
