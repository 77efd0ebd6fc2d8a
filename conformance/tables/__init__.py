"""Tables to test with: built at the log level, damaged on purpose, or written by the real writers.

| module | holds |
|---|---|
| :mod:`~conformance.tables.builder` | the one log-level table builder: action constructors, hand-written logs, :class:`~conformance.tables.builder.TableBuilder` (which knows every version's expected state) |
| :mod:`~conformance.tables.deletion_vectors` | inline deletion vectors (RoaringBitmap + Z85), per PROTOCOL.md |
| :mod:`~conformance.tables.mutations` | deliberate damage and noise applied to a table after its expectations are recorded |
| :mod:`~conformance.tables.shapes` | the suite's source shapes for the writer and cross tests (classic and v2 variants) |
| :mod:`~conformance.tables.cleanup_cases` | the suite's cleanup cases (spec §18), with checkpoints written by the reference writer |
| :mod:`~conformance.tables.real_writers` | tables written by delta-spark and deltalake themselves (reader, writer and cleanup tests) |

``tables`` imports :mod:`spec`, :mod:`conformance.decode` and :mod:`conformance.oracles`; only
``cleanup_cases`` writes checkpoints with the reference implementation, through its adapter.
"""
