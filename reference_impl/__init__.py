"""The reference implementation of Delta Lake checkpoints on PySpark: reader, writer and cleaner.

Spec: ``spec/checkpoints.md``. Needs only pyspark and pyarrow (and the :mod:`spec` package); it
never imports the conformance suite, the fixture generator or delta-spark.

Packages and modules, in pipeline order (the way delta-kernel-rs documents its modules):

| module | what it holds |
|---|---|
| :mod:`~reference_impl.errors` | the one error hierarchy; every error carries a :class:`~spec.error_codes.ErrorCode` |
| :mod:`~reference_impl.progress` | phases with timings, printed to stderr and kept for ``--json`` reports |
| :mod:`~reference_impl.hooks` | the seam where tests observe the writer's and the cleaner's publication points |
| :mod:`~reference_impl.storage` | every file operation, behind :class:`~reference_impl.storage.base.Storage`; chosen by URI scheme |
| :mod:`~reference_impl.log` | what is on disk: file names, actions, table properties, ``_last_checkpoint``, the listing, the segment of a version |
| :mod:`~reference_impl.spark` | the plain SparkSession, action ``StructType``\\ s, column helpers, statistics columns, job groups |
| :mod:`~reference_impl.read` | the reader: one checkpoint, sidecars, snapshot replay and reconciliation |
| :mod:`~reference_impl.write` | the writer: options, rows, staging, publication, ``_last_checkpoint`` |
| :mod:`~reference_impl.cleanup` | the cleaner: plan, invariants, compatibility checkpoint, deletion |
| :mod:`~reference_impl.validate` | ``delta-ckpt validate``: every checkpoint and ``_last_checkpoint`` of a table checked against the spec's rules, read-only |
| :mod:`~reference_impl.cli` | ``delta-ckpt``: the root parser and the implementation's commands |

Layering (``tests/test_boundaries.py``): ``storage`` ← ``log`` ← ``read`` ← ``write`` ←
``cleanup`` ← ``validate`` ← ``cli``; ``spark`` is used by ``read``, ``write`` and ``cleanup``; ``storage`` and
``log`` never import ``spark``, ``read``, ``write``, ``cleanup`` or ``cli``.
"""

from importlib import metadata

__version__ = metadata.version("delta-checkpoint-conformance")
