"""The conformance suite's own file-name grammar and checksum (:mod:`conformance.decode`) against the spec's vectors.

``spec/vectors/`` holds the truth as data (spec §4 and §15.2); the reference implementation's own
grammar and checksum are tested against the same files (``tests/reference_impl/log/test_vectors.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.decode.checksum import canonical_form, checksum
from conformance.decode.names import parse_name
from conformance.decode.paths import canonical_path
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
    parsed = parse_name(vector["name"])
    seen = {
        "kind": parsed.kind,
        "version": parsed.version,
        "end_version": parsed.end_version,
        "part": parsed.part,
        "parts": parsed.parts,
        "token": parsed.token,
        "format": parsed.format,
        "strict": parsed.strict,
    }
    expected = {key: vector.get(key) for key in seen}
    assert seen == expected, vector["name"]


@pytest.mark.requirement("CKPT-CKSUM-001")
@pytest.mark.parametrize("vector", CHECKSUMS, ids=[str(v["id"]) for v in CHECKSUMS])
def test_checksum_vectors(vector: dict[str, Any]) -> None:
    """The suite's checksum (and canonical form, where the spec gives it) of each §15.2 vector.

    Spec: CKPT-CKSUM-001
    > When a writer includes `checksum` in `_last_checkpoint`, its value MUST be the checksum that §15.1
    > computes for the written text.
    """
    assert checksum(vector["input"]) == vector["checksum"], vector["id"]
    if vector["canonical"] is not None:
        assert canonical_form(vector["input"]) == vector["canonical"], vector["id"]


PATHS = json.loads((SPEC_DIR / "vectors" / "file_paths.json").read_text(encoding="utf-8"))


@pytest.mark.requirement("CKPT-CONTENT-014")
@pytest.mark.parametrize("vector", PATHS["vectors"], ids=[v["case"] for v in PATHS["vectors"]])
def test_file_path_vectors(vector: dict[str, Any]) -> None:
    """Each spelling of a path has the canonical form the vector gives (the suite's own canonicalisation).

    Spec: CKPT-CONTENT-014
    > An implementation MUST compute file identity from the canonical form of `path`.
    """
    seen = canonical_path(vector["path"], PATHS["root"])
    assert seen == vector["canonical"], (
        f"spec/vectors/file_paths.json {vector['path']!r}: canonical {seen!r}, expected {vector['canonical']!r}"
    )
