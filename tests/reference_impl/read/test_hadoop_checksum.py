"""The driver's check of a Hadoop checksum file (``.<name>.crc``) beside a checkpoint file, read in blocks.

Spec: CKPT-READ-026 (``reference_impl/read/hadoop_checksum.py``).
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from reference_impl.errors import CheckpointCorrupt
from reference_impl.read import hadoop_checksum
from reference_impl.storage import Location, storage_for

CHUNK = 512


def _crc_file(data: bytes) -> bytes:
    """Hadoop's checksum file of ``data``: magic, bytes per checksum, one CRC-32 a chunk (big-endian)."""
    sums = b"".join(zlib.crc32(data[i : i + CHUNK]).to_bytes(4, "big") for i in range(0, len(data), CHUNK))
    return b"crc\x00" + CHUNK.to_bytes(4, "big") + sums


@pytest.mark.requirement("CKPT-READ-026")
@pytest.mark.parametrize(
    "block", [CHUNK, 3 * CHUNK, 1 << 20], ids=["one-chunk", "three-chunks", "whole-file"]
)
def test_a_mismatch_is_found_at_its_byte_whatever_the_read_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """A file of 7½ chunks with a matching ``.crc`` passes; one byte changed in chunk 5 fails naming byte
    5 × 512, whether the file is read a chunk, three chunks or all at once.

    Spec: CKPT-READ-026
    > A reader MUST either ignore a Hadoop checksum file `.<name>.crc` beside a checkpoint file, or, when
    > the file's bytes do not match it, treat that checkpoint as unreadable
    """
    monkeypatch.setattr(hadoop_checksum, "_BLOCK_BYTES", block)
    data = bytes(range(256)) * 15  # 3,840 bytes: 7 whole chunks and a half
    target = tmp_path / "00000000000000000001.checkpoint.parquet"
    target.write_bytes(data)
    (tmp_path / f".{target.name}.crc").write_bytes(_crc_file(data))
    location = Location.parse(str(target))
    storage = storage_for(location)
    hadoop_checksum.verify_hadoop_checksum(storage, location)
    target.write_bytes(data[: 5 * CHUNK + 7] + b"\xff" + data[5 * CHUNK + 8 :])
    with pytest.raises(CheckpointCorrupt, match=f"at byte {5 * CHUNK} ") as caught:
        hadoop_checksum.verify_hadoop_checksum(storage, location)
    assert caught.value.path == str(location), caught.value
