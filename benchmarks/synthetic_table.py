"""Generate a synthetic Delta table with N ``add`` actions, written directly as commit JSON.

No data files are written: only ``_delta_log/``. Checkpoint writers (ours, delta-spark's,
deltalake's) and log replay never open data files, so the log alone is a faithful workload for
checkpoint benchmarks.

Shape of the table:

* schema ``id: long, value: double, name: string, day: date``, partitioned by ``day``;
* commit 0: ``protocol`` + ``metaData`` (+ nothing else); commits 1..: ``adds_per_commit`` adds
  each (default 1,000), plus one ``commitInfo`` per commit, as delta-spark writes;
* paths as delta-spark names them: ``day=2024-03-17/part-00042-<uuid>-c000.snappy.parquet``, spread
  over 365 partition directories;
* each add has realistic ``stats`` JSON (numRecords, min/max of id, value and name, nullCount of
  all three) — about 250 bytes — so the checkpoint is stats-heavy like real tables.

``--v2`` makes the table support ``v2Checkpoint`` with ``delta.checkpointPolicy=v2`` (so
delta-spark writes V2 checkpoints by default); without it the protocol is (1, 2) and the policy is
classic. The content is the same for the same ``--seed``.

Usage::

    python benchmarks/synthetic_table.py /tmp/bench/t100k --adds 100000 [--v2] [--adds-per-commit 1000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import time
import uuid
from pathlib import Path

SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "value", "type": "double", "nullable": True, "metadata": {}},
        {"name": "name", "type": "string", "nullable": True, "metadata": {}},
        {"name": "day", "type": "date", "nullable": True, "metadata": {}},
    ],
}
BASE_TIME_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DAYS = 365


def protocol(v2: bool) -> dict[str, object]:
    if v2:
        return {
            "minReaderVersion": 3,
            "minWriterVersion": 7,
            "readerFeatures": ["v2Checkpoint"],
            "writerFeatures": ["appendOnly", "invariants", "v2Checkpoint"],
        }
    return {"minReaderVersion": 1, "minWriterVersion": 2}


def metadata(v2: bool, table_id: str) -> dict[str, object]:
    configuration = {"delta.checkpointInterval": "1000000"}
    if v2:
        configuration["delta.checkpointPolicy"] = "v2"
    return {
        "id": table_id,
        "format": {"provider": "parquet", "options": {}},
        "schemaString": json.dumps(SCHEMA, separators=(",", ":")),
        "partitionColumns": ["day"],
        "configuration": configuration,
        "createdTime": BASE_TIME_MS,
    }


def _add_line(rng: random.Random, index: int, commit: int) -> str:
    day = (dt.date(2024, 1, 1) + dt.timedelta(days=index % DAYS)).isoformat()
    file_uuid = uuid.UUID(int=rng.getrandbits(128), version=4)
    path = f"day={day}/part-{index % 1000:05d}-{file_uuid}-c000.snappy.parquet"
    records = rng.randint(1_000, 100_000)
    first = index * 100_000
    lo, hi = sorted((rng.uniform(-1e6, 1e6), rng.uniform(-1e6, 1e6)))
    stats = {
        "numRecords": records,
        "minValues": {"id": first, "value": round(lo, 6), "name": f"name-{rng.randint(0, 999_999):06d}"},
        "maxValues": {
            "id": first + records - 1,
            "value": round(hi, 6),
            "name": f"zname-{rng.randint(0, 999_999):06d}",
        },
        "nullCount": {"id": 0, "value": rng.randint(0, 10), "name": rng.randint(0, 10)},
    }
    add = {
        "path": path,
        "partitionValues": {"day": day},
        "size": rng.randint(50_000, 5_000_000),
        "modificationTime": BASE_TIME_MS + commit * 1000,
        "dataChange": True,
        "stats": json.dumps(stats, separators=(",", ":")),
    }
    return json.dumps({"add": add}, separators=(",", ":"))


def generate(path: Path, adds: int, *, v2: bool, adds_per_commit: int = 1000, seed: int = 7) -> int:
    """Write the table; returns its latest version. ``path`` must not exist (or is replaced)."""
    if path.exists():
        shutil.rmtree(path)
    log = path / "_delta_log"
    log.mkdir(parents=True)
    rng = random.Random(seed)
    table_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    first = [
        json.dumps({"commitInfo": {"timestamp": BASE_TIME_MS, "operation": "CREATE TABLE"}}),
        json.dumps({"protocol": protocol(v2)}),
        json.dumps({"metaData": metadata(v2, table_id)}),
    ]
    (log / f"{0:020d}.json").write_text("\n".join(first) + "\n")
    version = 0
    index = 0
    while index < adds:
        version += 1
        count = min(adds_per_commit, adds - index)
        _write_append(log, rng, version, index, count)
        index += count
    return version


def _write_append(log: Path, rng: random.Random, version: int, start: int, adds: int) -> None:
    """Commit ``version``: a blind append of ``adds`` new adds with indices ``start``.."""
    info = {
        "commitInfo": {
            "timestamp": BASE_TIME_MS + version * 1000,
            "operation": "WRITE",
            "operationParameters": {"mode": "Append"},
            "isBlindAppend": True,
        }
    }
    lines = [json.dumps(info, separators=(",", ":"))]
    lines += [_add_line(rng, start + i, version) for i in range(adds)]
    (log / f"{version:020d}.json").write_text("\n".join(lines) + "\n")


def append(path: Path, adds: int, *, start: int, seed: int = 11) -> int:
    """Append one commit of ``adds`` new adds (indices ``start``.., new UUIDs) to the table at ``path``;
    returns its version (the benchmark's "1 % change" of an incrementally checkpointed table)."""
    log = path / "_delta_log"
    version = max(int(p.name.split(".")[0]) for p in log.glob("*.json")) + 1
    _write_append(log, random.Random(seed), version, start, adds)
    return version


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", type=Path)
    parser.add_argument("--adds", type=int, required=True)
    parser.add_argument("--adds-per-commit", type=int, default=1000)
    parser.add_argument("--v2", action="store_true", help="support v2Checkpoint, policy v2")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.perf_counter()
    version = generate(args.path, args.adds, v2=args.v2, adds_per_commit=args.adds_per_commit, seed=args.seed)
    print(f"{args.path}: {args.adds} adds in versions 1..{version} ({time.perf_counter() - started:.1f}s)")


if __name__ == "__main__":
    main()
