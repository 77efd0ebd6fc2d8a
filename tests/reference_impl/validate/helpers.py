"""Copies of golden tables to damage one rule at a time, and the hint rewritten with a fresh checksum."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixtures import FIXTURES_DIR
from reference_impl.log.last_checkpoint import checksum
from reference_impl.validate import Report, validate_table

#: Damages a copied table in place.
Mutation = Callable[[Path], object]  # what it returns is ignored


def copy_fixture(name: str, tmp_path: Path) -> Path:
    """A private copy of the table of fixture ``name`` (valid, invalid or foreign)."""
    source = next(p.parent for p in FIXTURES_DIR.rglob("fixture.json") if p.parent.name == name)
    table = tmp_path / name
    shutil.copytree(source / "table", table, symlinks=True)
    return table


def log(table: Path) -> Path:
    return table / "_delta_log"


def hint(table: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((log(table) / "_last_checkpoint").read_text(encoding="utf-8"))
    return document


def write_hint(table: Path, document: dict[str, Any], *, with_checksum: bool = True) -> None:
    """Write ``document`` as ``_last_checkpoint`` (members in the given order), checksum recomputed last."""
    body = {k: v for k, v in document.items() if k != "checksum"}
    if with_checksum:
        body["checksum"] = checksum(body)
    (log(table) / "_last_checkpoint").write_text(json.dumps(body, separators=(",", ":")), encoding="utf-8")


def edit_hint(change: Callable[[dict[str, Any]], None]) -> Mutation:
    def mutate(table: Path) -> None:
        document = hint(table)
        change(document)
        write_hint(table, document)

    return mutate


def rules(report: Report) -> dict[str, str]:
    """rule -> level of every finding."""
    return {f.rule: str(f.level) for f in report.findings}


def describe(report: Report) -> str:
    return "\n".join(
        f"  {f.level} {f.rule} {f.file}: {f.seen} ({f.message})" for f in report.sorted_findings()
    )


def validate(table: Path) -> Report:
    return validate_table(table)


def top_level_json(table: Path) -> Path:
    """The (only) UUID-named JSON top-level file of the table."""
    return next(log(table).glob("*.checkpoint.*-*-*-*-*.json"))


def edit_top_level(change: Callable[[list[dict[str, Any]]], None]) -> Mutation:
    """Rewrite the UUID-named JSON top-level file after ``change`` edits its actions (in order)."""

    def mutate(table: Path) -> None:
        path = top_level_json(table)
        actions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        change(actions)
        text = "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in actions)
        path.write_bytes(text.encode("utf-8", "surrogateescape"))  # lone surrogates: invalid UTF-8 on purpose

    return mutate


def first(actions: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The body of the first action of ``kind``."""
    body: dict[str, Any] = next(a[kind] for a in actions if kind in a)
    return body


def rewrite_parquet(path: Path, drop: str) -> None:
    """Write the Parquet file at ``path`` again without its top-level column ``drop``."""
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(path).drop_columns([drop]), path)


def retype_field(path: Path, column: str, field: str, *, type_: Any = None, nullable: bool = True) -> None:
    """Write the Parquet file at ``path`` again with ``column.field`` of another type or declared required."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    struct = table.column(column).combine_chunks()
    fields, children = [], []
    for index, f in enumerate(struct.type):
        child = struct.field(index)
        if f.name == field and type_ is not None:
            child = child.cast(type_)
        if f.name == field and not nullable:  # values under a null parent only: hidden by its mask
            child = pc.fill_null(child, pa.scalar("", child.type) if pa.types.is_string(child.type) else 0)
        fields.append(pa.field(f.name, child.type, nullable=nullable or f.name != field))
        children.append(child)
    rebuilt = pa.StructArray.from_arrays(children, fields=fields, mask=pc.is_null(struct))
    pq.write_table(table.set_column(table.schema.get_field_index(column), column, rebuilt), path)
