"""Decode a written checkpoint with pyarrow and ``json`` only — the suite's independent view of the files.

Spec: ``spec/checkpoints.md`` §7 Parquet layout, §11 V2-spec checkpoints, §12 Sidecar files, §14
The last-checkpoint file. The writer and cleaner conformance tests must not trust any one reader,
so they open the files themselves: the top-level file (JSON lines or Parquet), every part, every
referenced sidecar, and ``_last_checkpoint``. Every row becomes ``{"<action kind>": {...}}`` with
null fields dropped. Names are read with the suite's own grammar (:mod:`conformance.decode.names`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from conformance.decode.names import LAST_CHECKPOINT, SIDECAR_DIR, parse_name
from spec.table_state import TableState, drop_nulls
from spec.vocabulary import LogFileKind, TopLevelFormat


@dataclass
class DecodedFile:
    name: str  # relative to _delta_log
    format: TopLevelFormat
    rows: list[dict[str, Any]]  # single-action dicts, nulls dropped
    schema: Any = None  # pyarrow schema for Parquet files
    null_rows: int = 0  # rows with no action at all


@dataclass
class DecodedCheckpoint:
    version: int
    kind: LogFileKind
    top: list[DecodedFile]
    sidecars: list[DecodedFile] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # referenced sidecars not there (``missing_ok``)

    @property
    def all_rows(self) -> list[dict[str, Any]]:
        return [r for f in [*self.top, *self.sidecars] for r in f.rows]

    def actions(self, kind: str) -> list[dict[str, Any]]:
        return [r[kind] for r in self.all_rows if kind in r]

    @property
    def has_json_stats(self) -> bool:
        """Every ``add`` carries ``stats`` as JSON (a checkpoint may hold ``stats_parsed`` only)."""
        return all("stats" in a for a in self.actions("add"))

    def state(self, *, fallback: TableState) -> TableState:
        """The table state these actions describe, at this checkpoint's version. Its protocol and metadata
        are the one ``protocol`` and ``metaData`` action; where there is not exactly one, ``fallback``'s
        (the caller scores that apart, and compares the rest)."""
        protocols, metadatas = self.actions("protocol"), self.actions("metaData")
        return TableState.build(
            version=self.version,
            protocol=protocols[0] if len(protocols) == 1 else fallback.protocol,
            metadata=metadatas[0] if len(metadatas) == 1 else fallback.metadata,
            files=self.actions("add"),
            tombstones=self.actions("remove"),
            txns=self.actions("txn"),
            domain_metadata=self.actions("domainMetadata"),
        )


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
        return DecodedFile(name, TopLevelFormat.JSON, rows)
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    rows, empty = _rows_of_table(table)
    return DecodedFile(name, TopLevelFormat.PARQUET, rows, schema=pq.read_schema(path), null_rows=empty)


def sidecar_name(action: dict[str, Any]) -> str:
    """The file name a bare ``sidecar.path`` denotes (URI-decoded)."""
    return unquote(str(action["path"]))


def sidecar_file(log_dir: Path, action: dict[str, Any]) -> Path:
    """The file a ``sidecar`` action references (spec §19.1): an absolute ``file:`` URI as it says, a bare
    name inside ``_sidecars/`` — decoded, or literal when only the literal name exists."""
    raw = str(action["path"])
    if raw.startswith("file:"):
        return Path(unquote(urlparse(raw).path))
    decoded = log_dir / SIDECAR_DIR / unquote(raw)
    literal = log_dir / SIDECAR_DIR / raw
    return decoded if decoded.exists() or not literal.exists() else literal


def sidecar_actions(log_dir: Path, name: str) -> list[dict[str, Any]]:
    """The ``sidecar`` actions of the top-level checkpoint file ``name``."""
    return [row["sidecar"] for row in decode_file(log_dir, name).rows if "sidecar" in row]


def decode_checkpoint(log_dir: Path, names: list[str], *, missing_ok: bool = False) -> DecodedCheckpoint:
    """Decode the checkpoint made of ``names`` (its top-level file, or all its parts). A referenced sidecar
    that is not there raises ``FileNotFoundError``, or with ``missing_ok`` is listed in ``missing`` (the
    writer tests judge it under its rule, CKPT-SIDE-001, instead of failing every test that decodes)."""
    parsed = parse_name(names[0])
    assert parsed.version is not None
    top = [decode_file(log_dir, n) for n in sorted(names)]
    decoded = DecodedCheckpoint(parsed.version, parsed.kind, top)
    for action in decoded.actions("sidecar"):
        name = f"{SIDECAR_DIR}/{sidecar_name(action)}"
        if missing_ok and not (log_dir / name).is_file():
            decoded.missing.append(name)
            continue
        decoded.sidecars.append(decode_file(log_dir, name))
    return decoded


def checkpoint_names(log_dir: Path, version: int) -> dict[str, list[str]]:
    """The checkpoints of ``version`` grouped by instance: classic, each UUID-named, each part set."""
    groups: dict[str, list[str]] = {}
    for path in sorted(log_dir.iterdir()):
        parsed = parse_name(path.name)
        if not parsed.kind.is_checkpoint or parsed.version != version or path.stat().st_size == 0:
            continue
        key = f"parts-{parsed.parts}" if parsed.kind is LogFileKind.CHECKPOINT_PART else path.name
        groups.setdefault(key, []).append(path.name)
    return groups


def read_last_checkpoint(log_dir: Path) -> tuple[str, dict[str, Any]] | None:
    path = log_dir / LAST_CHECKPOINT
    if not path.is_file():
        return None
    text = path.read_text()
    return text, json.loads(text)
