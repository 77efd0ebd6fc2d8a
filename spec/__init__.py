"""The specification as a package: the contract's vocabulary and data, importable by every implementation.

The normative text is ``spec/checkpoints.md``; this package holds what code needs of it — words,
not verdicts. It imports only the standard library, ``jsonschema`` and ``referencing``: no Spark,
no pytest, no pass/fail logic, and nothing of ``reference_impl``, ``conformance`` or ``fixtures``
(``tests/test_boundaries.py`` checks that).

Modules:

| module | holds |
|---|---|
| :mod:`spec.vocabulary` | the closed sets of strings the spec names, as enums: checkpoint spec and naming, top-level file format, stats mode, ``_delta_log`` file kinds, roles, levels |
| :mod:`spec.error_codes` | :class:`~spec.error_codes.ErrorCode`, every stable code of §21 |
| :mod:`spec.table_state` | :class:`~spec.table_state.TableState`, the normalised state of a version every reader reports, and its normalisation |
| :mod:`spec.requirements` | the requirement index: ``checkpoints.md`` → ``requirements.json``, and loading it |
| :mod:`spec.history` | the version history: each released version's index (``releases/``) and the ID policy checked across versions and ``CHANGELOG.md`` |
| :mod:`spec.schemas` | the JSON Schemas of ``spec/schemas/``, with a validator that resolves their cross-references |
| :mod:`spec.cache` | not a rule: where the project caches what it builds or downloads (``$DELTA_CKPT_CACHE``), the one neutral home for both sides |
| :mod:`spec.spark_conf` | not a rule: the Spark defaults, settings variables and session environment both sides' sessions start with (one copy) |

Data (next to the modules): ``checkpoints.md``, ``CHANGELOG.md``, ``requirements.json``, ``releases/``, ``schemas/``,
``schema-tests/``, ``spark-conf/`` (the sessions' quiet ``log4j2.properties``), and ``vectors/`` — the checksum test vectors of §15.2 and the file-name vectors
of §4, which the reference implementation's own parsers and the conformance suite's own decoders
are both tested against (each side keeps its own code; the spec keeps the truth as text and data).
"""
