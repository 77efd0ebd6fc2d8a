"""The subprocess protocol's verdict on a program that misbehaves: a :class:`ProtocolViolation` that
names the harness, the request and the field — never an internal error of the suite.

Two layers: :class:`ResponseDecoder` (pure) is fed mutations of valid responses by hypothesis;
:class:`CommandImplementation` talks to the real fake program (``fake_harness.py``) that crashes,
hangs, floods or chatters on request, and must recover for the next request.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.adapter import AdapterError
from conformance.adapters.command import CommandImplementation, ProtocolViolation, ResponseDecoder
from conformance.adapters.deltalake import ADAPTER_UNAVAILABLE
from conformance.compare import diff_states
from conformance.registry import build_registry
from spec.error_codes import ErrorCode
from spec.schemas import schema
from spec.table_state import UNAVAILABLE_FIELD_PATHS, TableState

from .fake_harness import MISBEHAVIOURS

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).with_name("fake_harness.py")
#: Seconds a test lets the fake program take to start or answer (a loaded CI machine): generous, never slept through.
PATIENCE_S = 300.0
#: Expected states with files, deletion vectors, tombstones, txns and domains between them.
STATES = [
    ROOT / "fixtures" / "valid" / case / "expected" / version / "table_state.json"
    for case, version in (
        ("v1_classic", "v4"),
        ("deletion_vectors_same_path", "v4"),
        ("txn_multiple_apps", "v5"),
        ("tombstones_live_and_expired", "v5"),
        ("domain_metadata_removed", "v6"),
    )
]
READ = {"id": 5, "op": "read", "table": "/tables/t"}
HELLO = {"id": 1, "op": "hello", "protocolVersion": "1.0"}
VALID_HELLO = {
    "name": "fake",
    "version": "1",
    "protocolVersion": "1.0",
    "roles": ["reader", "writer"],
    "unavailableFields": ["tombstones", "files.tags"],
    "profiles": [{"name": "v1", "description": "d", "spec": "v1", "naming": "classic"}],
}


def test_response_schema_error_codes_are_the_spec_codes() -> None:
    """The response schema admits exactly the codes of ``spec.error_codes.ErrorCode`` (no ``UNSUPPORTED``)."""
    code = schema("harness/response.schema.json")["properties"]["error"]["properties"]["code"]
    assert code["enum"] == [c.value for c in ErrorCode], code


def test_capability_vocabulary_is_the_schema_enum() -> None:
    """``unavailableFields`` names come from one list, the TableState fields, and nothing else."""
    hello = schema("harness/response.schema.json")["$defs"]["hello"]["properties"]
    assert hello["unavailableFields"]["items"]["enum"] == list(UNAVAILABLE_FIELD_PATHS)
    assert set(ADAPTER_UNAVAILABLE) <= set(UNAVAILABLE_FIELD_PATHS), "the bundled deltalake adapter's names"
    decoder = ResponseDecoder("fake")
    bad = {**VALID_HELLO, "unavailableFields": ["tombstone"]}
    with pytest.raises(ProtocolViolation) as caught:
        decoder.result(HELLO, json.dumps({"id": 1, "ok": True, "result": bad}).encode())
    message = str(caught.value)
    assert "field response.result.unavailableFields[0]: 'tombstone' is not one of protocol, " in message
    assert message.endswith(", files.stats.tightBounds"), f"the allowed names are listed in full: {message}"


# -- property: any mutation of a valid response is decoded or refused with a ProtocolViolation --


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, sub in value.items():
            out += _paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value[:3]):
            out += _paths(sub, (*prefix, index))
    return out


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def _mutated(draw: st.DrawFn, valid: dict[str, Any]) -> bytes:
    document = json.loads(json.dumps(valid))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(document)))
        if not path:
            document = draw(_JSON)
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["delete", "replace", "add"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = draw(_JSON)
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(_JSON)
    text = json.dumps(document)
    cut = draw(st.sampled_from([None, None, None, len(text) // 2]))
    return text[:cut].encode() if cut is not None else text.encode()


def _valid_read(path: Path) -> dict[str, Any]:
    state = json.loads(path.read_text())
    state.pop("source", None)
    return {"id": READ["id"], "ok": True, "result": {"state": state, "rows": 3, "checkpoint": None}}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), which=st.sampled_from(STATES))
def test_mutated_read_response_is_decoded_or_a_violation(data: st.DataObject, which: Path) -> None:
    """Whatever a read response becomes, the suite decodes it into a state it can compare, or
    refuses it with a ProtocolViolation that names harness, request and (if any) field."""
    line = data.draw(_mutated(_valid_read(which)))
    decoder = ResponseDecoder("fake")
    try:
        result = decoder.read_result(READ, decoder.result(READ, line), frozenset())
    except ProtocolViolation as exc:
        assert str(exc).startswith("harness 'fake', request #5 read /tables/t: "), exc
        return
    except AdapterError as exc:
        assert exc.code in set(ErrorCode), exc
        return
    expected = TableState.from_json(json.loads(which.read_text()))
    diff_states(expected, result.state)  # comparing never crashes either


@settings(max_examples=150, deadline=None)
@given(line=_mutated({"id": 1, "ok": True, "result": VALID_HELLO}))
def test_mutated_hello_is_decoded_or_a_violation(line: bytes) -> None:
    """A mutated hello becomes an ImplementationInfo or a ProtocolViolation, nothing else."""
    decoder = ResponseDecoder("fake")
    try:
        info = decoder.info("cmd", decoder.result(HELLO, line))
    except ProtocolViolation as exc:
        assert str(exc).startswith("harness 'fake', request #1 hello: "), exc
        return
    except AdapterError as exc:
        assert exc.code in set(ErrorCode), exc
        return
    assert info.name == "fake" and info.roles


# -- the real program: crash, hang, flood, chatter ----------------------------------------------

_VERDICTS = {
    "garbage": "response is not JSON: 'this is not json'",
    "crash": "the program closed its stdout before answering (exit status 3)",
    "hang": "no response within 1s",
    "partial": "no response within 1s",
    "huge": "response longer than 1000000 bytes",
    "wrong-id": "field response.id: 9 answers another request",
    "empty-protocol": "field response.result.state.protocol: 'minReaderVersion' is a required property",
    "bad-code": "field response.error.code: 'UNSUPPORTED' is not one of",
}


@pytest.fixture(scope="module")
def fake_state() -> str:
    return str(STATES[0])


@pytest.mark.parametrize("mode", sorted(_VERDICTS))
def test_misbehaving_program_fails_the_request_then_recovers(
    mode: str, fake_state: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each misbehaviour is a ProtocolViolation naming harness, request and problem; the program is
    restarted and the next request is answered normally."""
    assert set(_VERDICTS) | {"extra", "close-stdout"} == set(MISBEHAVIOURS)
    monkeypatch.setenv("FAKE_MISBEHAVE", mode)
    monkeypatch.setenv("FAKE_STATE", fake_state)
    impl = CommandImplementation(
        "fake", f"{sys.executable} {HARNESS}", timeout_s=PATIENCE_S, max_response_bytes=1_000_000
    )
    try:
        # Only the hanging modes' request waits 1 s: a program start (hello) or a 4 MB answer on a loaded
        # machine may take longer, and the program's exit status is waited for within the timeout too.
        impl.timeout_s = 1 if mode in ("hang", "partial") else PATIENCE_S
        with pytest.raises(ProtocolViolation) as caught:
            impl.read(Path("/tables/bad"))
        impl.timeout_s = PATIENCE_S
        assert str(caught.value).startswith("harness 'fake', request #2 read /tables/bad: "), caught.value
        assert _VERDICTS[mode] in str(caught.value), caught.value
        assert impl.read(Path("/tables/good")).state.version == 4
    finally:
        impl.close()


def test_a_program_that_closed_its_stdout_but_runs_on_costs_seconds_not_the_timeout(
    fake_state: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program that closes its stdout and hangs: the verdict says it is still running after a few
    seconds' wait for its exit status (``EXIT_WAIT_S``), not after the request's whole timeout; the
    program is restarted and the next request is answered."""
    monkeypatch.setenv("FAKE_MISBEHAVE", "close-stdout")
    monkeypatch.setenv("FAKE_STATE", fake_state)
    impl = CommandImplementation("fake", f"{sys.executable} {HARNESS}", timeout_s=PATIENCE_S)
    try:
        impl.timeout_s = timeout_s = 60.0  # the program has started: this request alone has 60 s
        started = time.monotonic()
        with pytest.raises(ProtocolViolation) as caught:
            impl.read(Path("/tables/bad"))
        took = time.monotonic() - started
        impl.timeout_s = PATIENCE_S
        assert "the program closed its stdout before answering (still running)" in str(caught.value), (
            caught.value
        )
        assert took < timeout_s / 2, f"the verdict took {took:.1f} s of the request's {timeout_s:g} s timeout"
        assert impl.read(Path("/tables/good")).state.version == 4
    finally:
        impl.close()


def test_output_nobody_asked_for_fails_the_next_request(
    fake_state: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line after the response is reported at the next request, which then fails; the one after works."""
    monkeypatch.setenv("FAKE_MISBEHAVE", "extra")
    monkeypatch.setenv("FAKE_STATE", fake_state)
    impl = CommandImplementation("fake", f"{sys.executable} {HARNESS}", timeout_s=PATIENCE_S)
    try:
        assert impl.read(Path("/tables/bad")).state.version == 4
        with pytest.raises(ProtocolViolation, match=r"request #3 read /tables/good: output nobody asked for"):
            impl.read(Path("/tables/good"))
        assert impl.read(Path("/tables/good")).state.version == 4
    finally:
        impl.close()


def test_program_with_a_bad_hello_is_misbehaving_not_missing(tmp_path: Path) -> None:
    """A program that starts but answers hello wrongly is recorded as misbehaving (its tests fail);
    a program that cannot start at all is unavailable (skipped loudly, a failure under CI=true)."""
    liar = tmp_path / "liar.py"
    liar.write_text(
        "import sys, json\nfor line in sys.stdin:\n"
        "    print(json.dumps({'id': json.loads(line)['id'], 'ok': True, 'result': {'name': 'liar'}}), flush=True)\n"
    )
    registry = build_registry(
        [],
        [f"liar={sys.executable} {liar}", f"ghost={tmp_path / 'nope'}"],
        timeout_s=PATIENCE_S,
        cross_writers=[],
    )
    registry.close()
    assert registry.misbehaving == {"liar"}
    assert (
        "request #1 hello: field response.result: 'version' is a required property"
        in registry.unavailable["liar"]
    )
    assert "ghost" in registry.unavailable and "ghost" not in registry.misbehaving
