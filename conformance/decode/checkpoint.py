"""Decode a written checkpoint with pyarrow and ``json`` only — the writer tests' independent view.

The writer conformance tests must not trust any one reader, so they open the files themselves:
the top-level file (JSON lines or Parquet), every part, every referenced sidecar, and
``_last_checkpoint``. Every row becomes ``{"<action kind>": {...}}`` with null fields dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from reference_impl.log.naming import SIDECAR_DIR, LogFileKind, parse_log_file_name
from spec.table_state import drop_nulls


@dataclass
class DecodedFile:
    name: str  # relative to _delta_log
    format: str  # "json" | "parquet"
    rows: list[dict[str, Any]]  # single-action dicts, nulls dropped
    schema: Any = None  # pyarrow schema for Parquet files
    null_rows: int = 0  # rows with no action at all


@dataclass
class DecodedCheckpoint:
    version: int
    kind: LogFileKind
    top: list[DecodedFile]
    sidecars: list[DecodedFile] = field(default_factory=list)

    @property
    def all_rows(self) -> list[dict[str, Any]]:
        return [r for f in [*self.top, *self.sidecars] for r in f.rows]

    def actions(self, kind: str) -> list[dict[str, Any]]:
        return [r[kind] for r in self.all_rows if kind in r]


def _rows_of_table(table: Any) -> tuple[list[dict[str, Any]], int]:
    rows, empty = [], 0
    for raw in table.to_pylist():
        present = {k: v for k, v in raw.items() if v is not None}
        if not present:
            empty += 1
            continue
        rows.append({k: drop_nulls(v) for k, v in present.items()})
    return rows, empty


def decode_file(log_dir: Path, name: str) -> DecodedFile:
    path = log_dir / name
    if name.endswith(".json"):
        rows = [drop_nulls(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
        return DecodedFile(name, "json", rows)
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    rows, empty = _rows_of_table(table)
    return DecodedFile(name, "parquet", rows, schema=pq.read_schema(path), null_rows=empty)


def sidecar_name(action: dict[str, Any]) -> str:
    return unquote(str(action["path"]))


def decode_checkpoint(log_dir: Path, names: list[str]) -> DecodedCheckpoint:
    """Decode the checkpoint made of ``names`` (its top-level file, or all its parts)."""
    parsed = parse_log_file_name(names[0])
    assert parsed.version is not None
    top = [decode_file(log_dir, n) for n in sorted(names)]
    decoded = DecodedCheckpoint(parsed.version, parsed.kind, top)
    for action in decoded.actions("sidecar"):
        decoded.sidecars.append(decode_file(log_dir, f"{SIDECAR_DIR}/{sidecar_name(action)}"))
    return decoded


def checkpoint_names(log_dir: Path, version: int) -> dict[str, list[str]]:
    """The checkpoints of ``version`` grouped by instance: classic, each UUID-named, each part set."""
    groups: dict[str, list[str]] = {}
    for path in sorted(log_dir.iterdir()):
        parsed = parse_log_file_name(path.name)
        if not parsed.kind.is_checkpoint or parsed.version != version or path.stat().st_size == 0:
            continue
        key = f"parts-{parsed.num_parts}" if parsed.kind is LogFileKind.CHECKPOINT_PART else path.name
        groups.setdefault(key, []).append(path.name)
    return groups


def read_last_checkpoint(log_dir: Path) -> tuple[str, dict[str, Any]] | None:
    path = log_dir / "_last_checkpoint"
    if not path.is_file():
        return None
    text = path.read_text()
    return text, json.loads(text)
