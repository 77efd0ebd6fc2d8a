"""The table the cleanup tests share, and the log surgery and listings they use.

:func:`build_base` writes, with delta-spark (V2 checkpoints, JSON top-level files, two actions per
sidecar so each checkpoint has several sidecars):

| version | commit | checkpoint |
|---|---|---|
| 0 | CREATE TABLE (``checkpointInterval=2``, ``checkpointPolicy=v2``, ``logRetentionDuration=3 days``) | |
| 1, 2 | appends | UUID-named at 2 (delta-spark), sidecars ``S2`` |
| 3 | ``SET TBLPROPERTIES`` (no file change) | UUID-named at 3 written here: **shares** ``S2`` |
| 4 | append | UUID-named at 4 (delta-spark) |
| 5, 6 | appends | UUID-named at 6 (delta-spark); ``_last_checkpoint`` names it |

plus a log compaction file ``1.2.compacted.json``. Then every file of version ``v`` gets a
modification time ``v`` days apart (:func:`stamp`): the commit at ``D0 - (8 - v) days + 6 h``, its
``.crc`` one second later, its checkpoint files and their sidecars two seconds later, where ``D0``
is midnight UTC of the day the tests run. With ``NOW = D0 + 12 h`` and the table's 3-day retention
the cutoff is ``D0 - 3 days``: the cutoff commit is 4 and the cutoff checkpoint is 4.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.oracles.session import temporary_conf
from reference_impl.log.naming import DELTA_LOG, SIDECAR_DIR, LogFileKind, checksum_owner, parse_log_file_name
from reference_impl.log.table_properties import MS_PER_DAY

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

HOUR_MS = 3_600_000
D0 = int(time.time() * 1000) // MS_PER_DAY * MS_PER_DAY
NOW = D0 + 12 * HOUR_MS
NEWEST = 8  # commit v is (NEWEST - v) days before D0 (+6 h)


def commit_time(version: int) -> int:
    return D0 - (NEWEST - version) * MS_PER_DAY + 6 * HOUR_MS


@dataclass(frozen=True)
class Base:
    path: Path
    checkpoints: Mapping[int, str]  # version -> top-level file name
    sidecars: Mapping[int, tuple[str, ...]]  # version -> sidecar names its checkpoint references
    compaction: str

    @property
    def log_dir(self) -> Path:
        return self.path / DELTA_LOG


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_lines(path: Path, actions: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions))


def top_level_files(log_dir: Path) -> dict[int, str]:
    out = {}
    for name in sorted(os.listdir(log_dir)):
        parsed = parse_log_file_name(name)
        if parsed.kind is LogFileKind.CHECKPOINT_UUID and parsed.version is not None:
            out[parsed.version] = name
    return out


def sidecar_refs(log_dir: Path, top_level: str) -> tuple[str, ...]:
    return tuple(sorted(str(a["sidecar"]["path"]) for a in _lines(log_dir / top_level) if "sidecar" in a))  # type: ignore[index]


def build_base(spark: SparkSession, path: Path) -> Base:
    props = {
        "delta.checkpointInterval": "2",
        "delta.checkpointPolicy": "v2",
        "delta.logRetentionDuration": "interval 3 days",
        "delta.deletedFileRetentionDuration": "interval 1 days",
    }
    conf = {
        "spark.databricks.delta.checkpoint.partSize": "2",
        "spark.databricks.delta.checkpointV2.topLevelFileFormat": "json",
    }
    with temporary_conf(spark, conf):
        listed = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
        spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta TBLPROPERTIES ({listed})")
        for i in range(2):
            spark.range(i * 4, i * 4 + 4, 1, 2).write.format("delta").mode("append").save(str(path))
        spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('x' = '1')")
        for i in range(3):
            spark.range(100 + i * 4, 104 + i * 4, 1, 2).write.format("delta").mode("append").save(str(path))
    log_dir = path / DELTA_LOG
    tops = top_level_files(log_dir)
    assert sorted(tops) == [2, 4, 6], tops
    # A UUID-named checkpoint at 3 that shares checkpoint 2's sidecars: version 3 changed no file.
    at2 = _lines(log_dir / tops[2])
    commit3 = _lines(log_dir / f"{3:020d}.json")
    shared = [a for a in at2 if "sidecar" in a]
    protocol = [a for a in at2 if "protocol" in a]
    metadata = [a for a in commit3 if "metaData" in a]
    assert len(protocol) == 1 and len(metadata) == 1 and len(shared) >= 2
    name3 = f"{3:020d}.checkpoint.{uuid.uuid4()}.json"
    _write_lines(
        log_dir / name3, [{"checkpointMetadata": {"version": 3, "tags": {}}}, *shared, *protocol, *metadata]
    )
    tops[3] = name3
    # A log compaction of commits 1..2 (their file actions).
    compaction = f"{1:020d}.{2:020d}.compacted.json"
    actions = [a for v in (1, 2) for a in _lines(log_dir / f"{v:020d}.json") if "add" in a]
    _write_lines(log_dir / compaction, actions)
    base = Base(
        path, dict(sorted(tops.items())), {v: sidecar_refs(log_dir, n) for v, n in tops.items()}, compaction
    )
    stamp(base)
    return base


def _set(path: Path, ms: int) -> None:
    os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


def stamp(base: Base) -> None:
    """Set every log file's modification time from its version (see the module docs)."""
    log_dir = base.log_dir
    sidecar_version = {name: v for v, names in base.sidecars.items() for name in names if v != 3}
    for entry in os.listdir(log_dir):
        full = log_dir / entry
        if not full.is_file():
            continue
        bare = checksum_owner(entry) or entry
        parsed = parse_log_file_name(bare)
        if parsed.version is None:
            continue
        offset = {LogFileKind.COMMIT: 0, LogFileKind.CRC: 1_000}.get(parsed.kind, 2_000)
        if parsed.kind is LogFileKind.COMPACTION:
            version, offset = parsed.end_version or parsed.version, 3_000
        else:
            version = parsed.version
        _set(full, commit_time(version) + offset)
    for entry in os.listdir(log_dir / SIDECAR_DIR):
        bare = checksum_owner(entry) or entry
        _set(log_dir / SIDECAR_DIR / entry, commit_time(sidecar_version[bare]) + 2_000)


def copy_base(base: Base, target: Path) -> Base:
    """A private copy (modification times preserved)."""
    shutil.copytree(base.path, target)
    return Base(target, base.checkpoints, base.sidecars, base.compaction)


@dataclass(frozen=True)
class Entry:
    size: int
    mtime_ns: int


def snapshot_files(table: Path) -> dict[str, Entry]:
    """Every file under the table (relative path → size and mtime), to prove nothing changed."""
    out = {}
    for root, _, files in os.walk(table):
        for name in files:
            full = Path(root) / name
            st = full.stat()
            out[str(full.relative_to(table))] = Entry(st.st_size, st.st_mtime_ns)
    return out


def log_files(table: Path, *, hidden: bool = True) -> set[str]:
    """Files under ``_delta_log`` (relative to it), optionally without hidden ones."""
    log_dir = table / DELTA_LOG
    out = set()
    for root, _, files in os.walk(log_dir):
        for name in files:
            if not hidden and name.startswith("."):
                continue
            out.add(str((Path(root) / name).relative_to(log_dir)))
    return out


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
