"""delta-spark as an oracle: its jars, its session, and its own view of a table.

| module | holds |
|---|---|
| :mod:`~conformance.oracles.delta_jars` | resolve delta-spark's jars from Maven Central once, cache them, reuse offline |
| :mod:`~conformance.oracles.session` | :func:`~conformance.oracles.session.get_delta_spark` (Spark + delta-spark), :func:`~conformance.oracles.session.temporary_conf` |
| :mod:`~conformance.oracles.delta_spark` | delta-spark's snapshot, state (as a ``TableState``) and metadata cleanup, through py4j |

The reference implementation never imports this package (``tests/test_boundaries.py``).
"""
