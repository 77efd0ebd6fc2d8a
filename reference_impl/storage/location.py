"""Locations: where a table and its files are, as one normalised URI type.

Spec: ``spec/checkpoints.md`` §3 Terminology (the table location), §19.1 Sidecar paths (absolute
sidecar URIs are compared with the table's own ``_sidecars/`` directory).

A :class:`Location` is ``scheme://authority/path``:

| given | location |
|---|---|
| ``/data/t``, ``t`` (a local path) | ``file:///data/t`` (absolute, symbolic links resolved) |
| ``file:/data/t``, ``file:///data/t`` | ``file:///data/t`` |
| ``hdfs://nn:8020/data/t`` | itself (scheme and host lower-case, no trailing ``/``) |
| ``s3://bucket/data/t`` | itself; Spark reaches it as ``s3a://bucket/data/t`` (:meth:`Location.spark_uri`) |

Paths are kept decoded (``%20`` is a space), the way Hadoop's ``Path`` takes them. ``str()`` of a
local location is its plain path, so messages name files the way users typed them.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import PurePath
from urllib.parse import unquote, urlsplit

#: Schemes Spark reaches under another name (Hadoop's S3 connector is ``s3a``).
SPARK_SCHEMES: dict[str, str] = {"s3": "s3a"}


@dataclass(frozen=True, order=True)
class Location:
    """A normalised URI (see the module docs); join with ``/``."""

    scheme: str
    authority: str
    path: str  # absolute, "/"-separated, decoded, no trailing "/" (except the root)

    @classmethod
    def parse(cls, text: str | os.PathLike[str] | Location) -> Location:
        """The location of a local path, a ``file:`` URI or any ``scheme://authority/path`` URI."""
        if isinstance(text, Location):
            return text
        raw = os.fspath(text)
        if isinstance(text, PurePath) or not (raw.startswith("file:") or "://" in raw):
            return cls("file", "", os.path.realpath(raw))
        parts = urlsplit(raw)
        scheme = parts.scheme.lower()
        if scheme == "file":
            if parts.netloc not in ("", "localhost"):
                raise ValueError(f"a file: URI must not name a host: {raw!r}")
            return cls("file", "", os.path.realpath(unquote(parts.path) or "/"))
        path = posixpath.normpath("/" + unquote(parts.path).lstrip("/"))
        return cls(scheme, parts.netloc.lower() if scheme != "s3" else parts.netloc, path)

    @property
    def uri(self) -> str:
        """``scheme://authority/path`` (decoded, as Hadoop's ``Path`` reads it)."""
        return f"{self.scheme}://{self.authority}{self.path}"

    def spark_uri(self) -> str:
        """The URI Spark (Hadoop) reads and writes this location with (``s3://`` becomes ``s3a://``)."""
        return f"{SPARK_SCHEMES.get(self.scheme, self.scheme)}://{self.authority}{self.path}"

    @property
    def is_local(self) -> bool:
        return self.scheme == "file"

    @property
    def name(self) -> str:
        """The last path segment (``""`` for the root)."""
        return posixpath.basename(self.path)

    @property
    def parent(self) -> Location:
        return Location(self.scheme, self.authority, posixpath.dirname(self.path))

    @property
    def key(self) -> str:
        """The path without its leading ``/`` (an object store's key)."""
        return self.path.lstrip("/")

    def __truediv__(self, relative: str) -> Location:
        joined = posixpath.normpath(posixpath.join(self.path, relative))
        if not (joined == self.path or joined.startswith(self.path.rstrip("/") + "/")):
            raise ValueError(f"{relative!r} leaves {self}")
        return Location(self.scheme, self.authority, joined)

    def is_inside(self, directory: Location) -> bool:
        """Whether this location is directly inside ``directory``."""
        return self.parent == directory

    def __str__(self) -> str:
        return self.path if self.is_local else self.uri
