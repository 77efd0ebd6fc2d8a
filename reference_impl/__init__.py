"""Reference implementation of Delta Lake checkpoints on PySpark.

Spec: ``spec/checkpoints.md``. Needs only pyspark and pyarrow.
"""

__version__ = "0.1.0"
