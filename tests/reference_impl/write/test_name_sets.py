"""Name sets of sidecars (``reference_impl.write.name_sets``): trusted only as their tag records them.

Spec: ``spec/checkpoints.md`` §12.1 Sidecar reuse (``CKPT-INC-007``, ``CKPT-INC-008``). No Spark: the
hashes here are arbitrary integers; ``test_incremental.py`` checks that a written name set holds
Spark's hashes of the sidecar's names.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from reference_impl.storage import Location
from reference_impl.storage.local import LocalStorage
from reference_impl.write import name_sets

HASHES = [7, -3, 2**62, -(2**63), 7]  # unsorted, one duplicate, the extremes of int64


def _written(tmp_path: Path) -> tuple[LocalStorage, Location, str]:
    sidecar = Location.parse(str(tmp_path / "s.parquet"))
    storage = LocalStorage()
    return storage, sidecar, name_sets.write(storage, sidecar, HASHES, None)


@pytest.mark.requirement("CKPT-INC-007", "CKPT-INC-008")
def test_a_name_set_reads_back_sorted_and_distinct_and_is_probed_with_others(tmp_path: Path) -> None:
    """Spec: CKPT-INC-007
    "A writer that records a name set for a sidecar file in its `sidecar` action's tags … MUST write
    it … as the file `<sidecar file name>.names` in the sidecar's directory …"

    Spec: CKPT-INC-008
    "A writer MUST NOT conclude from a name set that a sidecar file holds no file touched by the
    commits after its checkpoint unless the name-set file exists and has the digest the tag records …"
    """
    storage, sidecar, tag = _written(tmp_path)
    loaded, unusable = name_sets.load_all(storage, [(sidecar, tag), (sidecar, "4:" + "0" * 64)])
    assert unusable is None, f"{sidecar}.names used under another digest"
    assert loaded is not None and loaded.tolist() == sorted(set(HASHES)), (
        f"{sidecar}.names: {loaded}, tag {tag}"
    )
    assert tag.startswith("4:") and (tmp_path / "s.parquet.names").is_file(), f"{tmp_path}: tag {tag}"
    # One probe of several sets: a hit on the last hash of one set and on the first of the next are
    # told apart; an empty set and a set without a hit hold none.
    sets = {
        "loaded": loaded,
        "empty": pa.array([], pa.int64()),
        "next": pa.array([-100, 11, 12], pa.int64()),
        "missed": pa.array([1, 2], pa.int64()),
    }
    for probes, want in (
        ([-5, 2**62], {"loaded"}),
        ([-100, 0], {"next"}),
        ([2**62, -100], {"loaded", "next"}),
        ([-4, 8, 2**63 - 1], set()),
        ([], set()),
    ):
        got = name_sets.holders(sets, pa.array(probes, pa.int64()))
        assert got == want, f"probes {probes} against {sets}: held by {got}, want {want}"


def _remove(path: Path) -> None:
    path.unlink()


def _unsorted(path: Path) -> None:
    path.write_bytes(name_sets.MAGIC + struct.pack("<2q", 5, 1))


@pytest.mark.requirement("CKPT-INC-008")
@pytest.mark.parametrize(
    ("damage", "retag"),
    [
        (_remove, False),
        (lambda p: p.write_bytes(p.read_bytes()[:-8]), False),  # cut short
        (lambda p: p.write_bytes(name_sets.encode([1, 2, 3, 4])), False),  # replaced
        (lambda p: p.write_bytes(p.read_bytes()[:-3]), True),  # not whole hashes
        (lambda p: p.write_bytes(b"XXXXXXXX" + p.read_bytes()[8:]), True),  # another header
        (_unsorted, True),
    ],
    ids=["missing", "cut-short", "replaced", "ragged", "header", "unsorted"],
)
def test_a_name_set_that_does_not_match_its_tag_is_not_used(
    tmp_path: Path, damage: Callable[[Path], None], retag: bool
) -> None:
    """Spec: CKPT-INC-008
    "A writer MUST NOT conclude from a name set that a sidecar file holds no file touched by the
    commits after its checkpoint unless the name-set file exists and has the digest the tag records;
    otherwise it MUST decide for that sidecar as if it had no name set."

    With ``retag`` the tag is recomputed for the damaged bytes: the file's shape alone refuses it."""
    storage, sidecar, tag = _written(tmp_path)
    path = tmp_path / "s.parquet.names"
    damage(path)
    if retag:
        tag = name_sets.tag_value(path.read_bytes())
    assert name_sets.load(storage, sidecar, tag) is None, f"{path}: used although damaged (tag {tag})"
