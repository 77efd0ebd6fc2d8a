"""What one checkpoint file holds, read on the driver in one streaming pass (no Spark).

Spec: ``spec/checkpoints.md`` §5 Checkpoint file schemas (``CKPT-SCHEMA-*``), §11 V2-spec
checkpoints (JSON top-level files, ``CKPT-V2-005``) and §12 Sidecar files.

:func:`summarise` reads a Parquet file with pyarrow batch by batch (its footer first) or a JSON
top-level file line by line (a line that is not JSON makes the file unreadable, as it does for
readers; a line that is not UTF-8 is only recorded), and keeps only what the checks need: the schema, the row count, how
many rows hold each action, how many rows hold other than exactly one action, how many ``remove``
rows carry ``stats`` or ``tags``, and the non-file actions themselves (few). File actions are
counted, never kept, so a checkpoint of millions of files costs one batch of memory.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from reference_impl.storage import FileInfo, Location, Storage
from spec.schemas import validator

FILE_ACTION_COLUMNS = ("add", "remove")
_BATCH_ROWS = 65_536


@dataclass
class FileSummary:
    """One checkpoint file (top-level, part or sidecar) as the checks see it.

    ``error`` is set (and the rest empty) when the file cannot be read; ``schema`` is a
    ``pyarrow.Schema`` for Parquet files and ``None`` for JSON ones.
    """

    name: str
    info: FileInfo
    is_json: bool
    error: str | None = None
    schema: Any = None
    rows: int = 0
    actions: Counter[str] = field(default_factory=Counter)
    rows_not_one_action: int = 0
    removes_with_stats_or_tags: int = 0
    non_file_actions: list[dict[str, Any]] = field(default_factory=list)
    invalid_lines: list[str] = field(default_factory=list)  # JSON only: "line N: why"

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names) if self.schema is not None else []


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def summarise(storage: Storage, location: Location, info: FileInfo) -> FileSummary:
    """The summary of the file ``info`` at ``location``; a read failure is recorded, never raised."""
    is_json = info.name.endswith(".json")
    summary = FileSummary(info.name, info, is_json)
    try:
        if is_json:
            _summarise_json(storage.read_bytes(location), summary)
        else:
            with storage.open_read(location) as handle:
                _summarise_parquet(handle, summary)
    except Exception as exc:  # pyarrow / JSON / storage: the file cannot be read as a checkpoint file
        return FileSummary(info.name, info, is_json, error=_first_line(exc))
    return summary


def _summarise_parquet(handle: Any, summary: FileSummary) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(handle)
    summary.schema = parquet.schema_arrow
    names = summary.columns
    remove_extra = []
    if "remove" in names:
        remove_type = summary.schema.field("remove").type
        if pa.types.is_struct(remove_type):
            remove_extra = [f.name for f in remove_type if f.name in ("stats", "tags")]
    for batch in parquet.iter_batches(batch_size=_BATCH_ROWS):
        summary.rows += batch.num_rows
        present = pa.array([0] * batch.num_rows, pa.int32())
        for name in names:
            valid = pc.is_valid(batch.column(name))
            count = pc.sum(valid).as_py() or 0
            summary.actions[name] += count
            present = pc.add(present, pc.cast(valid, pa.int32()))
            if name not in FILE_ACTION_COLUMNS and count:
                values = pc.filter(batch.column(name), valid).to_pylist()
                summary.non_file_actions += [{name: _drop_nulls(v)} for v in values]
        summary.rows_not_one_action += pc.sum(pc.not_equal(present, 1)).as_py() or 0
        for extra in remove_extra:
            child = pc.struct_field(batch.column("remove"), extra)
            summary.removes_with_stats_or_tags += pc.sum(pc.is_valid(child)).as_py() or 0


def _summarise_json(data: bytes, summary: FileSummary) -> None:
    check = validator("checkpoint_action.schema.json")
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        summary.rows += 1
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:  # kept (as surrogates) so the actions are still checked
            summary.invalid_lines.append(f"line {number}: not UTF-8 at byte {exc.start}")
            line = raw.decode("utf-8", "surrogateescape")
        try:
            action = json.loads(line)
        except ValueError as exc:  # readers read JSON lines FAILFAST: the whole file is unreadable
            raise ValueError(f"line {number} is not JSON ({exc})") from exc
        errors = sorted(check.iter_errors(action), key=lambda e: list(e.absolute_path))
        if errors:
            where = "/".join(map(str, errors[0].absolute_path)) or "<root>"
            summary.invalid_lines.append(f"line {number}: {where}: {errors[0].message}")
        present = [k for k, v in action.items() if v is not None] if isinstance(action, dict) else []
        if len(present) != 1:
            summary.rows_not_one_action += 1
            continue
        kind = present[0]
        summary.actions[kind] += 1
        body = action[kind]
        if (
            kind == "remove"
            and isinstance(body, dict)
            and any(body.get(k) is not None for k in ("stats", "tags"))
        ):
            summary.removes_with_stats_or_tags += 1
        if kind not in FILE_ACTION_COLUMNS:
            summary.non_file_actions.append({kind: _drop_nulls(action[kind])})


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):  # a Parquet map
            return {k: _drop_nulls(v) for k, v in value}
        return [_drop_nulls(v) for v in value]
    return value
