"""Hadoop checksum files (``.<name>.crc``) beside checkpoint files: a mismatch makes the file unreadable.

Spec: ``spec/checkpoints.md`` §16.4 Invalid and unreadable checkpoints (``CKPT-READ-026``).

Hadoop's local file system (``ChecksumFileSystem``, which Spark uses for ``file:`` paths) keeps a
hidden ``.<name>.crc`` beside every file it writes and fails every read of the file whose bytes no
longer match it (``ChecksumException``) — on an executor, long after the reader chose the
checkpoint. The reader checks such a file on the driver before it uses a checkpoint, so that a
stale ``.crc`` makes it fall back (``CKPT-READ-012``) like any other unreadable file instead of
failing a later job.

Format (Hadoop ``ChecksumFileSystem``): the 4 bytes ``crc`` NUL, the chunk size as a big-endian
32-bit int, then one big-endian CRC-32 per chunk of the file.
"""

from __future__ import annotations

import zlib
from typing import BinaryIO

from reference_impl.errors import CheckpointCorrupt
from reference_impl.log.naming import hadoop_checksum_name
from reference_impl.storage import Location, Storage

MAGIC = b"crc\x00"
RULE = "CKPT-READ-026"


def verify_hadoop_checksum(storage: Storage, path: Location) -> None:
    """Raise :class:`CheckpointCorrupt` naming ``path`` when a ``.<name>.crc`` beside it does not match it.

    No checksum file, or one this reader cannot interpret (another header), is no finding: only
    a checksum file Hadoop would verify, and that fails, makes the file unreadable.
    """
    checksum = path.parent / hadoop_checksum_name(path.name)
    if storage.stat(checksum) is None:
        return
    crc = storage.read_bytes(checksum)
    if len(crc) < 8 or crc[:4] != MAGIC:
        return
    chunk = int.from_bytes(crc[4:8], "big")
    if chunk <= 0:
        return
    expected = crc[8:]
    block = chunk * max(1, _BLOCK_BYTES // chunk)  # whole chunks per read: the file is never held whole
    start = 0
    with storage.open_read(path) as handle:
        while data := _read_up_to(handle, block):
            for offset in range(0, len(data), chunk):
                index = (start + offset) // chunk
                recorded = expected[4 * index : 4 * index + 4]
                if recorded != zlib.crc32(data[offset : offset + chunk]).to_bytes(4, "big"):
                    raise CheckpointCorrupt(
                        f"the file does not match its Hadoop checksum file {checksum.name} at byte "
                        f"{start + offset} (Hadoop's local file system would fail every read of it)",
                        path=str(path),
                        rule=RULE,
                    )
            start += len(data)


def _read_up_to(handle: BinaryIO, size: int) -> bytes:
    """``size`` bytes of ``handle``, fewer only at its end (a stream may return less per read)."""
    data = bytearray()
    while len(data) < size and (piece := handle.read(size - len(data))):
        data += piece
    return bytes(data)


#: How much of a file :func:`verify_hadoop_checksum` reads at a time (rounded down to whole chunks).
_BLOCK_BYTES = 4 << 20
