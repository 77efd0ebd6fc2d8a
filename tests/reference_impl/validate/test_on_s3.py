"""``delta-ckpt validate`` on an S3 table (SeaweedFS on 127.0.0.1): the same findings as on local disk, bucket unchanged.

The table is uploaded by an independent client (obstore) and validated through the storage seam
(``s3://`` + storage options); the bucket's listing — keys, sizes, ETags and modification times —
is the same before and after.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import obstore
import pytest
from obstore.store import S3Store

from reference_impl.validate import Report, validate_table
from tests.reference_impl.validate.helpers import copy_fixture, describe
from tests.support.servers.seaweed import S3Server


def _listing(store: S3Store) -> list[tuple[str, int, str | None, str]]:
    return sorted(
        (str(m["path"]), int(m["size"]), m.get("e_tag"), str(m["last_modified"]))
        for chunk in obstore.list(store)
        for m in chunk
    )


def _key(report: Report) -> list[tuple[str, str, str, str]]:
    return sorted((f.rule, str(f.level), f.file, f.seen) for f in report.findings)


@pytest.mark.parametrize(
    "fixture", ["v2_uuid_json_sidecars", "invalid_sidecar_wrong_size", "hint_wrong_checksum"]
)
def test_same_findings_on_s3_and_nothing_written(fixture: str, s3_server: S3Server, tmp_path: Path) -> None:
    """Findings on s3:// equal those on the local copy (rule, level, file, value seen); the bucket is unchanged."""
    local = copy_fixture(fixture, tmp_path)
    prefix = f"validate-{uuid.uuid4().hex[:8]}"
    store = s3_server.raw_store()
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        obstore.put(store, f"{prefix}/{path.relative_to(local).as_posix()}", path.read_bytes())
    before = _listing(store)
    remote = validate_table(s3_server.uri(prefix), s3_server.storage_options(), state=False)
    assert not [line for line in _listing(store) if line not in before] and len(_listing(store)) == len(
        before
    )
    expected = validate_table(local, state=False)

    def key(report_findings: list[object]) -> list[tuple[str, str, str, str]]:
        return sorted((f.rule, str(f.level), f.file, f.seen) for f in report_findings)  # type: ignore[attr-defined]

    assert key(list(remote.findings)) == key(list(expected.findings)), (
        f"s3:\n{describe(remote)}\nlocal:\n{describe(expected)}"
    )
    assert remote.exit_status == expected.exit_status
