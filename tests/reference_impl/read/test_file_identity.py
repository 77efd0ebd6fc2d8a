"""File identity in the reference reader: the canonical path of ``CKPT-CONTENT-014``, computed in Spark.

``spec/vectors/file_paths.json`` holds spellings and their canonical forms; the suite's own
canonicalisation is tested against the same file (``tests/conformance/test_decode.py``). The fixtures
``valid/path_spelling_*`` show the reader letting each spelling of a ``remove`` cancel a relative ``add``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from reference_impl.spark.columns import canonical_name, canonical_path, canonical_root, placement_key
from reference_impl.storage import Location
from spec.requirements import SPEC_DIR

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PATHS = json.loads((SPEC_DIR / "vectors" / "file_paths.json").read_text(encoding="utf-8"))


@pytest.mark.spark
@pytest.mark.requirement("CKPT-CONTENT-014", "CKPT-CONTENT-003")
def test_canonical_path_vectors(spark: SparkSession) -> None:
    """The Spark expression gives every vector's canonical form, in one job over all spellings; the
    cheap ``canonical_name`` (the incremental writer's pre-test) is null or what follows the last
    ``/`` of that form, so it never tells two spellings of one file apart; the writer's
    ``placement_key`` is equal for two spellings exactly when their canonical forms are, and is the
    path itself for a path the root and ``/`` prefix to make its canonical form (issue #12: the
    reconciliation's shuffle places rows in delta-spark's partitions of the raw path).

    Spec: CKPT-CONTENT-014
    > An implementation MUST compute file identity from the canonical form of `path`.
    """
    from pyspark.sql import functions as F

    vectors = PATHS["vectors"]
    frame = spark.createDataFrame([(v["path"],) for v in vectors], "path string")
    root = Location.parse(PATHS["root"])
    rows = frame.select(
        "path",
        canonical_path(F.col("path"), root).alias("canonical"),
        canonical_name(F.col("path")).alias("name"),
        placement_key(F.col("path"), root).alias("key"),
    ).collect()
    seen = {r["path"]: r["canonical"] for r in rows}
    named = {r["path"]: r["name"] for r in rows}
    keys = {r["path"]: r["key"] for r in rows}
    wrong = [
        f"{v['path']!r} ({v['case']}): {seen[v['path']]!r}, expected {v['canonical']!r}"
        for v in vectors
        if seen[v["path"]] != v["canonical"]
    ]
    wrong += [
        f"{v['path']!r} ({v['case']}): canonical_name {named[v['path']]!r}, canonical form {v['canonical']!r}"
        for v in vectors
        if named[v["path"]] not in (None, v["canonical"].rsplit("/", 1)[-1])
    ]
    wrong += [
        f"{a['path']!r} and {b['path']!r}: placement keys {keys[a['path']]!r} and {keys[b['path']]!r}"
        for a in vectors
        for b in vectors
        if (keys[a["path"]] == keys[b["path"]]) != (a["canonical"] == b["canonical"])
    ]
    wrong += [
        f"{v['path']!r} ({v['case']}): placement key {keys[v['path']]!r}, not the path"
        for v in vectors
        if v["canonical"] == canonical_root(root) + v["path"] and keys[v["path"]] != v["path"]
    ]
    assert not wrong, "spec/vectors/file_paths.json, root " + PATHS["root"] + ":\n" + "\n".join(wrong)
