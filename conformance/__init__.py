"""The conformance suite: judges any Delta checkpoint writer, reader or cleaner against ``spec/checkpoints.md``.

It imports :mod:`spec`; only :mod:`conformance.adapters.reference` imports ``reference_impl`` (the
reference implementation is one implementation under test, never a judge), and nothing here
imports the fixture generator (``tests/test_boundaries.py``).

Modules and packages, in the order a run uses them:

| module | holds |
|---|---|
| :mod:`~conformance.adapter` | the adapter contract: :class:`~conformance.adapter.Implementation`, roles, writer profiles, :class:`~conformance.adapter.AdapterError` |
| :mod:`~conformance.adapters` | the bundled adapters (reference, delta-spark, deltalake, any program speaking the subprocess protocol) and the error-message mapping |
| :mod:`~conformance.registry` | find and start the implementations under test (``--impl``, ``--impl-cmd``, entry points) |
| :mod:`~conformance.plugin` | the pytest plugin: parameters, requirement markers, expectations, ``results.json`` |
| :mod:`~conformance.expectations` | per-implementation skip/xfail files |
| :mod:`~conformance.oracles` | delta-spark as an oracle: jars, session, its own state of a table |
| :mod:`~conformance.tables` | the tables to test with: the one log-level builder, mutations, shapes, cleanup cases, tables of the real writers |
| :mod:`~conformance.decode` | the suite's own view of written files: names, checkpoint files, the checksum, file trees |
| :mod:`~conformance.compare` | field-by-field comparison of two ``TableState``\\ s, with readable differences |
| :mod:`~conformance.suite` | the tests: reader × fixtures, writer output, writer × reader, cleaner × reader |
| :mod:`~conformance.verdicts` | what a test result says per requirement and implementation: levels apart, sub-results (``check``), roles, ``--fail-on`` |
| :mod:`~conformance.report` | ``results.json`` → ``MATRIX.md`` and ``index.html`` |
| :mod:`~conformance.coverage` | which tests prove which requirement (``delta-ckpt spec coverage``) |
| :mod:`~conformance.cli` | the ``conformance``, ``spec`` and ``demo`` commands and ``env --resolve-jars`` |
"""
