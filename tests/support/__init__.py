"""What the project's tests share: the one place for listings, fault injection and skip-or-fail rules.

| module | holds |
|---|---|
| :mod:`~tests.support.listings` | names and file-tree snapshots of a table (on :mod:`conformance.decode.files`, shared with the suite) |
| :mod:`~tests.support.faults` | fault hooks: crash or raise at a publication point, fail a Spark task |
| :mod:`~tests.support.stores` | a local store that declares weaker guarantees (no atomic create-if-absent), for the refusals no bundled store triggers |
| :mod:`~tests.support.fault_cli` | ``python -m tests.support.fault_cli DIRECTIVES ARGS…``: ``delta-ckpt`` with fault hooks |

Skip-or-fail-in-CI is :func:`conformance.plugin.unavailable` (the suite and the tests share one
rule); schemas are loaded with :mod:`spec.schemas`; requirements with :mod:`spec.requirements`.
"""

from pathlib import Path

#: The repository root (the tests run from a source checkout).
REPO_ROOT = Path(__file__).resolve().parents[2]
