"""Spark's hash partitioning in pure Python: which part of a multi-part checkpoint an action belongs in.

Spec: ``spec/checkpoints.md`` CKPT-PART-002/003 — part ``pmod(hash(k), p) + 1`` where ``hash`` is
Spark's ``Murmur3Hash`` with seed 42. For a string ``k`` Spark hashes its UTF-8 bytes with
``Murmur3_x86_32.hashUnsafeBytes``: whole 4-byte little-endian words as in Murmur3, then — unlike
standard Murmur3 — every remaining byte mixed in *separately*, as a sign-extended int. A null key
hashes to the seed.
"""

from __future__ import annotations

SEED = 42
_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix_k1(k1: int) -> int:
    k1 = (k1 * _C1) & _MASK
    k1 = _rotl(k1, 15)
    return (k1 * _C2) & _MASK


def _mix_h1(h1: int, k1: int) -> int:
    h1 ^= k1
    h1 = _rotl(h1, 13)
    return (h1 * 5 + 0xE6546B64) & _MASK


def _fmix(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1


def _signed(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def spark_string_hash(value: str | None, seed: int = SEED) -> int:
    """Spark's ``hash(value)`` for a string (an int32)."""
    if value is None:
        return seed
    data = value.encode("utf-8")
    h1 = seed & _MASK
    aligned = len(data) - len(data) % 4
    for i in range(0, aligned, 4):
        h1 = _mix_h1(h1, _mix_k1(int.from_bytes(data[i : i + 4], "little")))
    for b in data[aligned:]:
        h1 = _mix_h1(h1, _mix_k1((b - 256 if b > 127 else b) & _MASK))
    return _signed(_fmix(h1, len(data)))


def part_of(key: str | None, num_parts: int) -> int:
    """The 1-based part Spark's ``repartition(num_parts, key)`` puts ``key`` in."""
    return spark_string_hash(key) % num_parts + 1  # Python's % is already pmod
