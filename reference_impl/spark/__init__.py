"""Spark: the session and the Spark-side building blocks the reader, writer and cleaner share.

Modules:

| module | holds |
|---|---|
| :mod:`~reference_impl.spark.session` | :func:`~reference_impl.spark.session.get_spark`: the plain session (Spark's built-in sources only), its settings, :func:`~reference_impl.spark.session.start_spark` (its JVM launched in the background) |
| :mod:`~reference_impl.spark.schemas` | the ``StructType`` of every action, the single-action row schema |
| :mod:`~reference_impl.spark.columns` | conform a column to a schema, make types nullable, deletion-vector ids |
| :mod:`~reference_impl.spark.stats` | ``stats_parsed`` and ``partitionValues_parsed``: schemas and columns |
| :mod:`~reference_impl.spark.jobs` | job groups, waiting for a failed job's tasks, Spark's exception types, whose fault a failed read job is (the store's or the file's: ``CKPT-READ-027``), observed aggregates |

``spark`` imports ``log``, ``storage``, ``errors`` and :mod:`spec`; ``read``, ``write`` and
``cleanup`` use it. It never mentions delta-spark: the oracle's session is
``conformance.oracles.session``.
"""
