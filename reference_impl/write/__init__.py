"""The reference checkpoint writer: V1 classic and multi-part, V2 with sidecars, and ``_last_checkpoint``.

Modules, in pipeline order:

| module | holds |
|---|---|
| :mod:`~reference_impl.write.preconditions` | the request's checks that need no Spark (table, writable log, the version's commit) |
| :mod:`~reference_impl.write.options` | :class:`~reference_impl.write.options.CheckpointOptions` and the resolved, validated :class:`~reference_impl.write.options.CheckpointPlan` |
| :mod:`~reference_impl.write.rows` | the state shaped as checkpoint rows (``dataChange`` false, stats as planned), in a deterministic order |
| :mod:`~reference_impl.write.staging` | Spark's executors write parts and classic or top-level files into hidden staging; the driver reads written files back and counts |
| :mod:`~reference_impl.write.task_files` | the sidecar job: each task encodes its sidecar with pyarrow and creates it at its final name in ``_sidecars/`` |
| :mod:`~reference_impl.write.incremental` | ``--incremental``: which base sidecars are listed again, the rows to write |
| :mod:`~reference_impl.write.name_sets` | a sidecar's name set (hashes of its canonical names, a file beside it), built in the read-back, probed by the next incremental write |
| :mod:`~reference_impl.write.publish` | create-if-absent publication, the sidecar re-check |
| :mod:`~reference_impl.write.hint` | the ``_last_checkpoint`` document, and writing it (never over a newer one) |
| :mod:`~reference_impl.write.result` | :class:`~reference_impl.write.result.CheckpointResult`: what was written |
| :mod:`~reference_impl.write.writer` | :func:`~reference_impl.write.writer.write_checkpoint`: the steps in order; :func:`~reference_impl.write.writer.write_top_level_file` for the cleaner |

``write`` imports ``read``, ``log``, ``storage``, ``spark``, ``hooks``, ``progress``, ``errors`` and
:mod:`spec`; ``cleanup`` and ``cli`` use it.
"""
