"""``spec.error_codes.ErrorCode`` is exactly the table of spec §21, and every code in use is one of it.

Spec: ``spec/checkpoints.md`` §21 Error codes. The subprocess protocol's response schema lists
exactly these codes (``tests/conformance/test_command_protocol.py`` checks it).
"""

from __future__ import annotations

import json
import re

from conformance.adapters.error_codes import _PATTERNS, UNMAPPED
from fixtures import descriptor_paths
from reference_impl import errors
from spec.error_codes import ErrorCode
from spec.requirements import CHECKPOINTS_MD

_ROW = re.compile(r"^\| `(?P<code>[A-Z0-9_]+)` \|")


def _spec_table() -> list[str]:
    text = CHECKPOINTS_MD.read_text(encoding="utf-8")
    section = text[text.index("## 21. Error codes") : text.index("## Appendix A")]
    return [m["code"] for line in section.splitlines() if (m := _ROW.match(line))]


def test_error_codes_are_the_spec_table() -> None:
    """The enum lists the codes of §21, in its order."""
    assert [c.value for c in ErrorCode] == _spec_table()


def test_reference_errors_use_spec_codes() -> None:
    """Every error class of the reference implementation carries a spec code (or a private, never-reported one)."""
    classes = [
        c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.CheckpointError)
    ]
    assert len(classes) > 20
    for cls in classes:
        assert isinstance(cls.code, ErrorCode | errors.PrivateCode), cls
    assert {c.code for c in classes if isinstance(c.code, ErrorCode)} == set(ErrorCode)


def test_codes_in_use_are_spec_codes() -> None:
    """Fixtures' expected errors and the adapters' message mapping name only spec codes."""
    expected = {
        e["error"]["code"]
        for path in descriptor_paths()
        for e in json.loads(path.read_text())["expectations"]
        if "error" in e
    }
    mapped = {code for _, code in _PATTERNS}
    assert expected and expected <= set(ErrorCode), expected - set(ErrorCode)
    assert mapped <= set(ErrorCode), mapped - set(ErrorCode)
    assert UNMAPPED not in set(ErrorCode)
