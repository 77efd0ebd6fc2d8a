"""Hostile sidecar references: validate names each one, and reads nothing outside the table.

A copy of a V2 table sits next to another table whose sidecar is the target of each attack
(encoded and double-encoded traversal, backslashes, absolute URIs of this store and another,
symbolic links as the sidecar and as ``_sidecars/`` itself, a NUL byte, an over-long name). Each
case reports a MUST finding with the reader's code (``SIDECAR_MISSING`` or ``SIDECAR_PATH_INVALID``):
had the other table's sidecar been read, the reference would have resolved and no such finding
would exist. Nothing under either table changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.reference_impl.validate.helpers import copy_fixture, describe, edit_top_level, first, log, validate
from tests.support.listings import listing_diff, tree_listing

SIDECARS = "_delta_log/_sidecars"
#: Builds the attack in ``table`` given the other table's sidecar file.
Attack = Callable[[Path, Path], None]


def _path(make: Callable[[Path, Path], str]) -> Attack:
    def attack(table: Path, target: Path) -> None:
        value = make(table, target)
        edit_top_level(lambda actions: first(actions, "sidecar").__setitem__("path", value))(table)

    return attack


def _relative(table: Path, target: Path) -> str:
    """The other table's sidecar, relative to this table's ``_sidecars/`` (``../../../other/...``)."""
    return os.path.relpath(target, table / SIDECARS)


def _link_sidecar(table: Path, target: Path) -> None:
    def change(actions: list[dict[str, Any]]) -> None:
        name = first(actions, "sidecar")["path"]
        (table / SIDECARS / name).unlink()
        (table / SIDECARS / name).symlink_to(target)

    edit_top_level(change)(table)


def _link_sidecars_dir(table: Path, target: Path) -> None:
    for path in (table / SIDECARS).iterdir():
        (target.parent / path.name).write_bytes(path.read_bytes())
        path.unlink()
    (table / SIDECARS).rmdir()
    (table / SIDECARS).symlink_to(target.parent, target_is_directory=True)


ATTACKS: dict[str, tuple[Attack, str]] = {
    "encoded-traversal": (_path(lambda t, x: _relative(t, x).replace("/", "%2F")), "SIDECAR_MISSING"),
    "double-encoded-traversal": (_path(lambda t, x: _relative(t, x).replace("/", "%252F")), "SIDECAR_MISSING"),
    "backslashes": (_path(lambda t, x: _relative(t, x).replace("/", "\\")), "SIDECAR_PATH_INVALID"),
    "plain-traversal": (_path(_relative), "SIDECAR_PATH_INVALID"),
    "file-uri-of-other-table": (_path(lambda t, x: x.as_uri()), "SIDECAR_PATH_INVALID"),
    "uri-of-other-store": (_path(lambda t, x: f"s3://elsewhere/t/_delta_log/_sidecars/{x.name}"), "SIDECAR_PATH_INVALID"),
    "invalid-utf8": (_path(lambda t, x: "..%2F" + x.name + "\udcff"), "SIDECAR_MISSING"),
    "nul-byte": (_path(lambda t, x: f"{x.name}\x00.parquet"), "SIDECAR_PATH_INVALID"),
    "over-long-name": (_path(lambda t, x: "a" * 300 + ".parquet"), "SIDECAR_PATH_INVALID"),
    "sidecar-is-a-link-out": (_link_sidecar, "SIDECAR_PATH_INVALID"),
    "sidecars-dir-is-a-link-out": (_link_sidecars_dir, "SIDECAR_PATH_INVALID"),
}  # fmt: skip


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_hostile_reference_is_a_must_finding_and_nothing_outside_is_read(attack: str, tmp_path: Path) -> None:
    """The attack gives a MUST finding with the reader's code; neither table changes."""
    other = copy_fixture("v2_uuid_parquet_sidecars", tmp_path / "other")
    target = sorted((other / SIDECARS).iterdir())[0]
    table = copy_fixture("v2_uuid_json_sidecars", tmp_path / "table")
    make, code = ATTACKS[attack]
    make(table, target)
    before = tree_listing(tmp_path)
    report = validate(table)
    assert not listing_diff(before, tree_listing(tmp_path)), "validate changed a file"
    codes = {str(f.code) for f in report.findings if f.level == "MUST" and f.area == "SIDE"}
    assert code in codes, f"{attack}: expected {code} among {sorted(codes)}:\n{describe(report)}"
    assert report.exit_status == 1
    assert all(str(other) not in f.file for f in report.findings), describe(report)
    assert (log(other) / "_sidecars").is_dir()
