"""Adapters: each wraps one implementation (reference, delta-spark, deltalake, any command) for the suite."""
