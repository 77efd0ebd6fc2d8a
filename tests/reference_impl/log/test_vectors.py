"""The reference implementation's own file-name grammar and checksum against the spec's vectors.

``spec/vectors/`` holds the truth as data (spec §4 and §15.2); the conformance suite's own
grammar and checksum are tested against the same files (``tests/conformance/test_decode.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from reference_impl.log.last_checkpoint import canonical_pairs, canonical_string, checksum
from reference_impl.log.naming import parse_log_file_name
from spec.requirements import SPEC_DIR

NAMES = json.loads((SPEC_DIR / "vectors" / "file_names.json").read_text(encoding="utf-8"))["vectors"]
CHECKSUMS = json.loads((SPEC_DIR / "vectors" / "checksums.json").read_text(encoding="utf-8"))["vectors"]


@pytest.mark.requirement("CKPT-NAME-004", "CKPT-NAME-005", "CKPT-NAME-008", "CKPT-NAME-007")
@pytest.mark.parametrize("vector", NAMES, ids=[v["name"] for v in NAMES])
def test_file_name_vectors(vector: dict[str, Any]) -> None:
    """Each name is read as the kind and numbers the vector gives, strict exactly when it says so.

    Spec: CKPT-NAME-004
    > A reader MUST recognise every file whose whole name matches one of the strict checkpoint patterns
    > of the table above as a checkpoint file of the kind and version that the name encodes.
    """
    parsed = parse_log_file_name(vector["name"])
    seen = {
        "kind": parsed.kind,
        "version": parsed.version,
        "end_version": parsed.end_version,
        "part": parsed.part,
        "parts": parsed.num_parts,
        "token": parsed.token,
        "format": parsed.fmt if vector["kind"] == "uuid" else None,
        "strict": parsed.conforms,
    }
    expected = {key: vector.get(key) for key in seen}
    assert seen == expected, vector["name"]


@pytest.mark.requirement("CKPT-CKSUM-001")
@pytest.mark.parametrize("vector", CHECKSUMS, ids=[str(v["id"]) for v in CHECKSUMS])
def test_checksum_vectors(vector: dict[str, Any]) -> None:
    """The reference's checksum (and canonical form, where the spec gives it) of each §15.2 vector.

    Spec: CKPT-CKSUM-001
    > When a writer includes `checksum` in `_last_checkpoint`, its value MUST be the checksum that §15.1
    > computes for the written text.
    """
    assert checksum(vector["input"]) == vector["checksum"], vector["id"]
    if vector["canonical"] is not None:
        assert canonical_string(vector["input"]) == vector["canonical"], vector["id"]
    if "pairs" in vector:  # §15.2 gives only the pair count of vector 5
        assert len(canonical_pairs(vector["input"])) == vector["pairs"], vector["id"]
