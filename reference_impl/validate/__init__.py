"""``delta-ckpt validate``: check a table's checkpoints and ``_last_checkpoint`` against the spec, read-only.

Spec: ``spec/checkpoints.md`` — each check module names the sections and rules it checks.

Modules, in the order a run uses them:

| module | holds |
|---|---|
| :mod:`~reference_impl.validate.finding` | :class:`~reference_impl.validate.finding.Finding` (rule, level from ``requirements.json``, file, value seen, message) and the :class:`~reference_impl.validate.finding.Report` |
| :mod:`~reference_impl.validate.files` | one checkpoint file read on the driver in one streaming pass: schema, rows, actions |
| :mod:`~reference_impl.validate.context` | :class:`~reference_impl.validate.context.TableView`: one listing, each file read once, sidecar references resolved as the reader resolves them |
| :mod:`~reference_impl.validate.field_types` | the Parquet types and nullability of the known action fields |
| :mod:`~reference_impl.validate.shapes` | the field-name shape of a Spark ``StructType`` JSON and of a Parquet schema |
| :mod:`~reference_impl.validate.names` | NAME: strict file names, no 0-byte checkpoint files |
| :mod:`~reference_impl.validate.hint` | LAST: ``_last_checkpoint`` form, checksum, and the checkpoint it describes |
| :mod:`~reference_impl.validate.content` | SCHEMA and CONTENT: each checkpoint file readable, one action per row; one protocol and metaData, V1/V2 structure, features |
| :mod:`~reference_impl.validate.sidecars` | SIDE: each sidecar reference resolved as the reader does, present, of the recorded size, file actions only, one schema; orphans |
| :mod:`~reference_impl.validate.multipart` | MULTI: every multi-part set is complete, with one schema |
| :mod:`~reference_impl.validate.log` | LOG: the remaining commits have no gap and start at 0 or at a complete checkpoint |
| :mod:`~reference_impl.validate.state` | STATE: each checkpoint's state equals its commits' state (Spark; skipped without a session) |
| :mod:`~reference_impl.validate.registry` | every check, in one table |
| :mod:`~reference_impl.validate.runner` | :func:`~reference_impl.validate.runner.validate_table` |

The layer sits above ``cleanup`` and below ``cli``; it never writes (a test compares the whole
listing of every fixture before and after).
"""

from reference_impl.validate.finding import Finding, Report
from reference_impl.validate.runner import validate_table

__all__ = ["Finding", "Report", "validate_table"]
