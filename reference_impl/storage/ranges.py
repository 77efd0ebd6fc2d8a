"""A seekable, buffered stream over a remote file read by byte ranges (Parquet footers, first lines).

Used by the stores whose files are not local: :class:`RangeReader` asks its store for the ranges a
reader needs (pyarrow reads a Parquet footer with two small reads at the end of a file), so a
footer check never downloads a whole sidecar.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import BinaryIO, cast

#: ``(start, length) -> bytes``: a range of one file.
ReadRange = Callable[[int, int], bytes]


class RangeReader(io.RawIOBase):
    """A raw stream of ``size`` bytes served by ``read_range``; wrap it in :func:`buffered`."""

    def __init__(self, size: int, read_range: ReadRange, on_close: Callable[[], None] | None = None) -> None:
        super().__init__()
        self._size = size
        self._read_range = read_range
        self._on_close = on_close
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        length = min(len(buffer), self._size - self._pos)
        if length <= 0:
            return 0
        data = self._read_range(self._pos, length)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def close(self) -> None:
        if not self.closed and self._on_close is not None:
            self._on_close()
        super().close()


def buffered(raw: RangeReader, buffer_size: int = 64 * 1024) -> BinaryIO:
    """``raw`` with a read buffer (``readline``, small reads served from one range)."""
    return cast(BinaryIO, io.BufferedReader(raw, buffer_size=buffer_size))
