"""The conformance tests. Run: ``pytest --pyargs conformance.suite`` or ``delta-ckpt conformance run``."""
