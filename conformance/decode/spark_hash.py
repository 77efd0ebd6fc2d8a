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


_P1, _P2, _P3, _P4, _P5 = (
    0x9E3779B185EBCA87,
    0xC2B2AE3D27D4EB4F,
    0x165667B19E3779F9,
    0x85EBCA77C2B2AE63,
    0x27D4EB2F165667C5,
)
_MASK64 = (1 << 64) - 1


def _rotl64(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK64


def _round64(acc: int, lane: int) -> int:
    return (_rotl64((acc + lane * _P2) & _MASK64, 31) * _P1) & _MASK64


def spark_xxhash64(value: str, seed: int = SEED) -> int:
    """Spark's ``xxhash64(value)`` for a string (an int64): XXH64 of its UTF-8 bytes with ``seed``
    (Spark's ``XXH64.hashUnsafeBytes`` is the standard algorithm: 32-byte stripes, 8-byte words, one
    4-byte word, single bytes). Spec: CKPT-INC-007 (the hashes of a name-set file)."""
    data = value.encode("utf-8")
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _MASK64, (seed + _P2) & _MASK64, seed & _MASK64, (seed - _P1) & _MASK64]
        while i + 32 <= n:
            for lane in range(4):
                v[lane] = _round64(v[lane], int.from_bytes(data[i + 8 * lane : i + 8 * lane + 8], "little"))
            i += 32
        h = (_rotl64(v[0], 1) + _rotl64(v[1], 7) + _rotl64(v[2], 12) + _rotl64(v[3], 18)) & _MASK64
        for lane in v:
            h = ((h ^ _round64(0, lane)) * _P1 + _P4) & _MASK64
    else:
        h = (seed + _P5) & _MASK64
    h = (h + n) & _MASK64
    while i + 8 <= n:
        h = (_rotl64(h ^ _round64(0, int.from_bytes(data[i : i + 8], "little")), 27) * _P1 + _P4) & _MASK64
        i += 8
    if i + 4 <= n:
        h = (
            _rotl64(h ^ (int.from_bytes(data[i : i + 4], "little") * _P1 & _MASK64), 23) * _P2 + _P3
        ) & _MASK64
        i += 4
    for b in data[i:]:
        h = (_rotl64(h ^ (b * _P5 & _MASK64), 11) * _P1) & _MASK64
    h = ((h ^ (h >> 33)) * _P2) & _MASK64
    h = ((h ^ (h >> 29)) * _P3) & _MASK64
    h ^= h >> 32
    return h - (1 << 64) if h >> 63 else h
