"""Source tables for writer and cross tests: one builder per shape, each in a classic and a v2 variant.

A *shape* is a small table with no checkpoint, built deterministically by
:class:`~conformance.tables.builder.TableBuilder` (no Spark). The builder also knows the
expected state of its latest version, which is what every reader must report after any writer's
checkpoint (with the commits before the checkpoint deleted).

| shape | what it exercises |
|---|---|
| ``unpartitioned`` | plain adds over several commits |
| ``partitioned`` | partition values, ``partitionValues_parsed`` |
| ``deletion-vectors`` | the same path with successive deletion vectors (file identity ``(path, dvId)``) |
| ``txn-domains`` | ``txn`` per app id and ``domainMetadata`` with a removed domain |
| ``tombstones`` | live tombstones (kept for 100 years: clock-independent) |
| ``empty`` | every file removed: no live file, only tombstones |
| ``no-files`` | a table that never had a file |
| ``many-files`` | 10,000 live files in one commit (no data files: log-level readers only) |

The ``v2`` variant adds the ``v2Checkpoint`` feature and ``delta.checkpointPolicy=v2`` in the
first commit, so V2 profiles and delta-spark's default write V2 checkpoints on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from conformance.tables.builder import Clock, Column, Ids, TableBuilder, rows
from spec.table_state import TableState

#: A source table's variant: without, or with the ``v2Checkpoint`` feature and policy.
Variant = Literal["classic", "v2"]

_KEEP = {
    "delta.deletedFileRetentionDuration": "interval 36500 days",
    "delta.logRetentionDuration": "interval 36500 days",
}
_V2 = {"delta.checkpointPolicy": "v2"}


@dataclass(frozen=True)
class BuiltShape:
    """A source table on disk and what readers must see at its latest version."""

    name: str
    variant: Variant
    path: Path
    version: int
    state: TableState
    rows: int | None  # visible rows, None when there are no data files
    now_ms: int


def new_table(
    path: Path,
    variant: Variant,
    *,
    partitioned: bool = False,
    write_data: bool = True,
    config: dict[str, str] | None = None,
    readers: tuple[str, ...] = (),
    writers: tuple[str, ...] = (),
) -> TableBuilder:
    """A created table (version 0) in ``variant``; tombstones and log files never expire unless
    ``config`` overrides the retention properties."""
    columns = [Column("id", "long"), Column("value", "string")] + (
        [Column("part", "string")] if partitioned else []
    )
    configuration = {**_KEEP, **(config or {})}
    reader_features, writer_features = set(readers), set(writers)
    if variant == "v2":
        configuration.update(_V2)
        reader_features.add("v2Checkpoint")
    b = TableBuilder(
        path,
        columns=columns,
        partition_columns=["part"] if partitioned else [],
        configuration=configuration,
        reader_features=reader_features,
        writer_features=writer_features,
        clock=Clock(),
        ids=Ids(f"{path.name}-{variant}"),
        write_data=write_data,
    )
    b.create()
    return b


def _unpartitioned(path: Path, variant: Variant) -> TableBuilder:
    b = new_table(path, variant)
    for i in range(4):
        b.append(rows(i * 3, 3))
    return b


def _partitioned(path: Path, variant: Variant) -> TableBuilder:
    b = new_table(path, variant, partitioned=True)
    for i in range(3):
        b.append(rows(i * 4, 4, parts=3))
    return b


def _deletion_vectors(path: Path, variant: Variant) -> TableBuilder:
    b = new_table(path, variant, config={"delta.enableDeletionVectors": "true"}, readers=("deletionVectors",))
    b.append(rows(0, 4))
    b.append(rows(4, 4))
    first = b.live_paths[0]
    b.delete_rows(first, [0])
    b.delete_rows(first, [2])
    b.delete_rows(b.live_paths[1], [1, 3])
    return b


def _txn_domains(path: Path, variant: Variant) -> TableBuilder:
    b = new_table(path, variant, writers=("domainMetadata",))
    b.append(rows(0, 2), txn=("app-a", 1))
    b.append(rows(2, 2), txn=("app-b", 5))
    b.append(rows(4, 2), txn=("app-a", 2))
    b.domain("test.one", '{"v":1}')
    b.domain("test.two", '{"v":2}')
    b.domain("test.one", "", removed=True)
    return b


def _tombstones(path: Path, variant: Variant) -> TableBuilder:
    b = _unpartitioned(path, variant)
    b.remove(b.live_paths[:2])
    return b


def _empty(path: Path, variant: Variant) -> TableBuilder:
    b = new_table(path, variant)
    b.append(rows(0, 3))
    b.append(rows(3, 3))
    b.remove(b.live_paths)
    return b


def _no_files(path: Path, variant: Variant) -> TableBuilder:
    b = new_table(path, variant)
    b.set_properties({"delta.appendOnly": "false"})
    return b


def _many_files(path: Path, variant: Variant) -> TableBuilder:
    b = new_table(path, variant, write_data=False)
    b.append(rows(0, 10_000), files_per_partition=10_000)
    return b


BUILDERS: dict[str, Callable[[Path, Variant], TableBuilder]] = {
    "unpartitioned": _unpartitioned,
    "partitioned": _partitioned,
    "deletion-vectors": _deletion_vectors,
    "txn-domains": _txn_domains,
    "tombstones": _tombstones,
    "empty": _empty,
    "no-files": _no_files,
    "many-files": _many_files,
}
SHAPES: tuple[str, ...] = tuple(BUILDERS)
#: A cheaper subset for quick runs (the project's own CI runs the full matrix through the main job).
QUICK_SHAPES: tuple[str, ...] = ("partitioned", "deletion-vectors", "txn-domains", "empty")


def build_shape(name: str, variant: Variant, path: Path) -> BuiltShape:
    """Build shape ``name`` (variant ``classic`` or ``v2``) at ``path``."""
    builder = BUILDERS[name](path, variant)
    now = builder.clock.now_ms
    return BuiltShape(
        name=name,
        variant=variant,
        path=path,
        version=builder.version,
        state=builder.expected_state(builder.version, now_ms=now),
        rows=builder.expected_rows(builder.version) if builder.write_data else None,
        now_ms=now,
    )
