"""Helpers of the cleanup tests: the actions of a top-level checkpoint file, as plain JSON."""

from __future__ import annotations

import json
from pathlib import Path


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plain(value: object) -> object:
    """A Parquet-read (pyarrow ``to_pylist``) or JSON action as plain JSON: nulls dropped, maps as dicts."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        if value and all(isinstance(i, tuple) and len(i) == 2 for i in value):
            return {k: plain(v) for k, v in value}
        return [plain(i) for i in value]
    return value


def top_level_actions(path: Path) -> list[dict[str, object]]:
    """The actions of a top-level checkpoint file (JSON or Parquet), each ``{kind: value}``, plain."""
    if path.name.endswith(".json"):
        rows = _lines(path)
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist(maps_as_pydicts="strict")
    out = []
    for row in rows:
        present = {k: v for k, v in row.items() if v is not None}
        assert len(present) == 1, f"{path.name}: a row with {sorted(present)}"
        out.append(plain(present))
    return out  # type: ignore[return-value]
