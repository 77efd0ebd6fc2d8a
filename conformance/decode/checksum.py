"""The suite's own ``_last_checkpoint`` checksum, written from the spec's algorithm (not the reference's code).

Spec: ``spec/checkpoints.md`` §15.1 Algorithm (``CKPT-CKSUM-*``); tested against
``spec/vectors/checksums.json`` (§15.2), as the reference implementation's checksum is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

_KEEP = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _encode(text: str) -> str:
    """Rule 5: UTF-8 bytes, unreserved bytes kept, every other byte ``%XX`` (upper case), quoted."""
    return '"' + "".join(chr(b) if b in _KEEP else f"%{b:02X}" for b in text.encode("utf-8")) + '"'


def _value(leaf: Any) -> str:
    """Rule 4 (integers and the three literals; the spec asks writers to avoid other numbers)."""
    if leaf is None:
        return "null"
    if isinstance(leaf, bool):
        return "true" if leaf else "false"
    if isinstance(leaf, str):
        return _encode(leaf)
    if isinstance(leaf, int):
        return str(leaf)
    raise ValueError(f"the suite's checksum handles strings, integers and literals, not {leaf!r}")


def _pairs(node: Any, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """Rules 2-3: one ``(path, value)`` per scalar leaf; empty objects and arrays give none."""
    if isinstance(node, Mapping):
        for key, child in node.items():
            yield from _pairs(child, (*path, _encode(key)))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _pairs(child, (*path, str(index)))
    else:
        yield "+".join(path), _value(node)


def canonical_form(document: Mapping[str, Any]) -> str:
    """Rules 6-7: ``path=value`` strings without the top-level ``checksum``, sorted by bytes, joined by ``,``."""
    entries = [f"{p}={v}" for p, v in _pairs(document, ()) if p != '"checksum"']
    return ",".join(sorted(entries, key=lambda e: e.encode("utf-8")))


def checksum(document: Mapping[str, Any]) -> str:
    """Rule 8: the MD5 of the canonical form, 32 lower-case hexadecimal digits."""
    return hashlib.md5(canonical_form(document).encode("utf-8")).hexdigest()
