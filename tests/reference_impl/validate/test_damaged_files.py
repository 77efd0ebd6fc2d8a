"""Every checkpoint file, sidecar and hint cut in half, one at a time: validate reports it, never fails.

For each kind of file (classic V1, multi-part part, UUID-named JSON and Parquet top-level files,
classic-named V2, sidecar, ``_last_checkpoint``) of a golden table, a copy with that one file
truncated to half its length gives a report (no exception) with a MUST finding naming that file,
and exit status 1. Parquet files report ``CHECKPOINT_CORRUPT``, the code a reader gives when it
cannot fall back (a sidecar also ``SIDECAR_SIZE_MISMATCH``: its recorded size no longer holds).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures import FIXTURES_DIR
from reference_impl.log.naming import hadoop_checksum_name
from reference_impl.validate import validate_table
from tests.reference_impl.validate.helpers import copy_fixture, describe, validate

#: Tables with one checkpoint of each kind.
TABLES = [
    "v1_classic",
    "multipart_2",
    "v2_uuid_json_sidecars",
    "v2_uuid_parquet_sidecars",
    "v2_classic_named_sidecars",
]


def _damageable(fixture: str) -> list[str]:
    """Checkpoint files, sidecars and the hint of ``fixture``'s table, relative to the table root."""
    table = next(p.parent for p in FIXTURES_DIR.rglob("fixture.json") if p.parent.name == fixture) / "table"
    log = table / "_delta_log"
    names = [p for p in log.iterdir() if ".checkpoint." in p.name or p.name == "_last_checkpoint"]
    names += sorted((log / "_sidecars").glob("*.parquet")) if (log / "_sidecars").is_dir() else []
    return sorted(p.relative_to(table).as_posix() for p in names if not p.name.startswith("."))


CASES = [(fixture, name) for fixture in TABLES for name in _damageable(fixture)]


@pytest.mark.parametrize(
    ("fixture", "name"), CASES, ids=[f"{f}:{n.rsplit('/', 1)[-1][:40]}" for f, n in CASES]
)
def test_a_file_cut_in_half_is_a_must_finding_on_that_file(fixture: str, name: str, tmp_path: Path) -> None:
    """The truncated file is named by a MUST finding (CHECKPOINT_CORRUPT for Parquet); exit status 1."""
    table = copy_fixture(fixture, tmp_path)
    path = table / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    report = validate(table)
    on_file = [f for f in report.findings if f.file == name and f.level == "MUST"]
    if name.endswith(".parquet"):
        assert "CHECKPOINT_CORRUPT" in {str(f.code) for f in on_file}, describe(report)
    else:
        assert on_file, f"{name} cut in half: no MUST finding on it:\n{describe(report)}"
    assert report.exit_status == 1


def test_a_stale_hadoop_checksum_is_reported_and_a_matching_one_is_not(tmp_path: Path) -> None:
    """A .crc beside a checkpoint that no longer matches it: MUST CKPT-READ-026 (CHECKPOINT_CORRUPT); a
    matching one (Kernel writes them) is no finding."""
    clean = validate(copy_fixture("kernel_java_classic", tmp_path / "a"))
    assert "CKPT-READ-026" not in {f.rule for f in clean.findings}, describe(clean)
    table = copy_fixture("kernel_java_classic", tmp_path / "b")
    checkpoint = table / "_delta_log/00000000000000000005.checkpoint.parquet"
    data = bytearray(checkpoint.read_bytes())
    data[100] ^= 0xFF  # same length, one byte changed: the .crc no longer matches
    checkpoint.write_bytes(bytes(data))
    report = validate(table)
    found = [f for f in report.findings if f.rule == "CKPT-READ-026"]
    assert [(f.file, str(f.code)) for f in found] == [
        ("_delta_log/00000000000000000005.checkpoint.parquet", "CHECKPOINT_CORRUPT")
    ], describe(report)


@pytest.mark.requirement("CKPT-READ-026")
@pytest.mark.parametrize("version", [None, 4], ids=["whole-table", "version-4"])
def test_a_stale_sidecar_checksum_is_reported_with_or_without_a_version(version: int | None) -> None:
    """The stale ``.crc`` of a sidecar of version 4 is a MUST finding on that sidecar, also when only
    version 4 is validated (``delta-ckpt validate --version 4``: the sidecars in scope are those its
    checkpoint references; their checksums are hidden files beside them). Read-only: the golden table.

    Spec: CKPT-READ-026
    "A reader MUST either ignore a Hadoop checksum file `.<name>.crc` beside a checkpoint file, or, when
    the file's bytes do not match it, treat that checkpoint as unreadable"
    """
    table = FIXTURES_DIR / "valid/unreadable_sidecar_stalecrc_to_older/table"
    (sidecar,) = sorted((table / "_delta_log/_sidecars").glob("00000000000000000004.*.parquet"))
    assert (sidecar.parent / hadoop_checksum_name(sidecar.name)).is_file(), f"{sidecar}: no .crc beside it"
    report = validate_table(table, version=version)
    found = [f.file for f in report.findings if f.rule == "CKPT-READ-026"]
    assert found == [f"_delta_log/_sidecars/{sidecar.name}"], (
        f"{table} (version {version}): {describe(report)}"
    )
