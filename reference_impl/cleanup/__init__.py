"""The reference cleaner: metadata cleanup with a compatibility checkpoint and sidecar garbage collection.

Modules, in pipeline order:

| module | holds |
|---|---|
| :mod:`~reference_impl.cleanup.plan` | pure decisions: clocks, cutoffs, commit timestamps, a :class:`~reference_impl.cleanup.plan.FileDecision` per file |
| :mod:`~reference_impl.cleanup.references` | the sidecars the remaining checkpoints reference |
| :mod:`~reference_impl.cleanup.invariants` | one function per ``CKPT-CLEAN`` rule, each an :class:`~reference_impl.cleanup.invariants.InvariantCheck` |
| :mod:`~reference_impl.cleanup.result` | :class:`~reference_impl.cleanup.result.CleanupResult` and the compatibility checkpoint decision |
| :mod:`~reference_impl.cleanup.compat` | the compatibility checkpoint: decide, write, verify |
| :mod:`~reference_impl.cleanup.cleaner` | :func:`~reference_impl.cleanup.cleaner.cleanup`: the steps in order |

``cleanup`` imports ``write``, ``read``, ``log``, ``storage``, ``hooks``, ``progress``, ``errors``
and :mod:`spec`; ``cli`` uses it.
"""
