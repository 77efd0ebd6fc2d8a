"""Deliberate damage and noise applied to a generated table (after its expectations are recorded).

Each function changes ``_delta_log`` in one well-defined way, so an invalid fixture is "a valid
table + one named mutation" (parquet-testing's bad_data, delta-spark's golden-table corruptions).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.decode.names import LAST_CHECKPOINT, SIDECAR_DIR, hadoop_checksum_name, parse_name
from spec.vocabulary import LogFileKind


def delete_commits_before(log_dir: Path, version: int) -> list[str]:
    """Delete commit files (and .crc files) below ``version``; keep the one at it. Returns the names."""
    gone = []
    for path in sorted(log_dir.iterdir()):
        parsed = parse_name(path.name)
        if (
            parsed.kind in (LogFileKind.COMMIT, LogFileKind.CRC)
            and parsed.version is not None
            and parsed.version < version
        ):
            path.unlink()
            gone.append(path.name)
    return gone


def delete_checkpoints_before(log_dir: Path, version: int) -> list[str]:
    gone = []
    for path in sorted(log_dir.iterdir()):
        parsed = parse_name(path.name)
        if parsed.kind.is_checkpoint and parsed.version is not None and parsed.version < version:
            path.unlink()
            gone.append(path.name)
    return gone


def write_hint(log_dir: Path, content: str | bytes | dict[str, Any]) -> None:
    """Replace ``_last_checkpoint`` with ``content`` (a dict is written as compact JSON)."""
    data = (
        content
        if isinstance(content, bytes)
        else (json.dumps(content, separators=(",", ":")) if isinstance(content, dict) else content).encode(
            "utf-8"
        )
    )
    (log_dir / LAST_CHECKPOINT).write_bytes(data)


def read_hint(log_dir: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((log_dir / LAST_CHECKPOINT).read_text())
    return value


def _drop_stale_checksum(path: Path) -> None:
    """Remove Hadoop's ``.<name>.crc`` beside ``path``: after an edit it no longer matches, and Hadoop's
    local file system would then fail every read with a ChecksumException instead of showing the edit."""
    (path.parent / hadoop_checksum_name(path.name)).unlink(missing_ok=True)


def write_hadoop_checksum(path: Path, data: bytes) -> None:
    """Write Hadoop's ``.<name>.crc`` beside ``path`` as ``ChecksumFileSystem`` does, computed over ``data``.

    Format (``ChecksumFileSystem.java``): the 4 bytes ``crc\\0``, the chunk size as a big-endian int
    (512), then one big-endian CRC-32 per 512-byte chunk of ``data``. With ``data`` other than the
    file's bytes the checksum is *stale*: Hadoop's local file system then fails every read of the
    file with a ``ChecksumException``, while readers that ignore ``.crc`` files read it normally.
    """
    chunk = 512
    sums = b"".join(
        zlib.crc32(data[i : i + chunk]).to_bytes(4, "big") for i in range(0, max(len(data), 1), chunk)
    )
    (path.parent / hadoop_checksum_name(path.name)).write_bytes(
        b"crc\x00" + chunk.to_bytes(4, "big") + (sums if data else b"")
    )


def stale_hadoop_checksum(path: Path) -> None:
    """Leave ``path`` intact but give it a ``.crc`` of other bytes: as many zero bytes as it has.

    The checksum depends on the file's length only, which keeps regenerated fixtures identical
    (Spark's Parquet footers differ from run to run).
    """
    write_hadoop_checksum(path, bytes(path.stat().st_size))


def parquet_footer_start(path: Path) -> int:
    """The offset where ``path``'s Parquet footer starts (its last 8 bytes give the footer's length).

    Cutting a file there removes exactly the footer; the bytes before it (data pages) do not depend
    on the run that wrote them, the footer does.
    """
    data = path.read_bytes()
    return len(data) - 8 - int.from_bytes(data[-8:-4], "little")


def garble(path: Path, seed: str) -> None:
    """Replace every byte of ``path`` by deterministic noise of the same length (seeded by ``seed``)."""
    import random

    _drop_stale_checksum(path)
    size = path.stat().st_size
    path.write_bytes(random.Random(seed).randbytes(size))


def truncate(path: Path, size: int) -> None:
    _drop_stale_checksum(path)
    with open(path, "r+b") as handle:
        handle.truncate(size)


def rewrite_json_lines(path: Path, transform: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """Rewrite a JSON-lines file (commit or JSON top-level checkpoint) through ``transform``."""
    _drop_stale_checksum(path)
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(a, separators=(",", ":")) + "\n" for a in transform(lines)))


def rewrite_sidecar_paths(top_level: Path, new_path: Callable[[str], str]) -> list[str]:
    """Replace every ``sidecar.path`` of a JSON top-level checkpoint file by ``new_path(old path)``.

    Returns the new paths in file order.
    """
    paths: list[str] = []

    def rewrite(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for action in actions:
            if "sidecar" in action:
                action["sidecar"]["path"] = new_path(action["sidecar"]["path"])
                paths.append(action["sidecar"]["path"])
        return actions

    rewrite_json_lines(top_level, rewrite)
    return paths


def rewrite_parquet_rows(
    path: Path, transform: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
) -> None:
    """Rewrite a Parquet checkpoint file's rows through ``transform`` (same schema)."""
    import pyarrow.parquet as pq

    _drop_stale_checksum(path)
    table = pq.read_table(path)
    rows = transform(table.to_pylist())
    pq.write_table(table.schema.empty_table().from_pylist(rows, schema=table.schema), path)


def empty_parquet_like(source: Path, target: Path) -> int:
    """Write a 0-row Parquet file with ``source``'s schema at ``target``; returns its size."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(source)
    pq.write_table(schema.empty_table(), target)
    return target.stat().st_size


def sidecar_path(log_dir: Path, name: str) -> Path:
    return log_dir / SIDECAR_DIR / name
