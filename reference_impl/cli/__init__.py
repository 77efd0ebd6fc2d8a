"""``delta-ckpt``: the command line (its root, and the reference implementation's own commands).

| module | holds |
|---|---|
| :mod:`~reference_impl.cli.main` | the root parser, the entry-point group of command groups, the error convention |
| :mod:`~reference_impl.cli.common` | shared arguments, the session from ``--master``/``--conf``, JSON output |
| :mod:`~reference_impl.cli.snapshot` | ``delta-ckpt snapshot``: reconstruct a version with the reference reader |
| :mod:`~reference_impl.cli.checkpoint` | ``delta-ckpt checkpoint``: write a checkpoint |
| :mod:`~reference_impl.cli.cleanup` | ``delta-ckpt cleanup``: metadata cleanup |
| :mod:`~reference_impl.cli.validate` | ``delta-ckpt validate``: check a table's checkpoints against the spec (read-only) |
| :mod:`~reference_impl.cli.env` | ``delta-ckpt env``: versions of what this environment runs |

Other command groups (``conformance``, ``spec``, ``demo``, ``fixtures``) plug in through the
entry-point group ``delta_ckpt.commands``; nothing here imports them.
"""
