"""Any implementation, in any language, as a program speaking the subprocess protocol (version 1.0).

The suite starts the program and exchanges JSON lines: one request on the program's stdin, one
response on its stdout (``spec/schemas/harness/request.schema.json``, ``response.schema.json``);
the program's stderr is passed through. See ``conformance/README.md`` for an example exchange.

A program that misbehaves gets a verdict, never an internal error of the suite: every response is
checked against the response schema *for the operation asked* (a read's state down to each action
field) before the suite uses it, and any breach — no JSON, a missing or mistyped field, output
nobody asked for, a crash, no answer within the timeout, a line over the size bound — raises
:class:`ProtocolViolation` naming the program, the request and the field. The test that made the
request fails with that message. After a breach that leaves the conversation out of step (a
timeout, a crash, stray output) the program is stopped and started afresh for the next request,
so one bad answer fails only the tests that use it (a write's outcome is kept for all tests of that
output, a failure too: ``conformance/suite/conftest.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from conformance.adapter import ROLE_NAMES, AdapterError, ImplementationInfo, ReadResult, Role, WriterProfile
from spec.schemas import validator
from spec.table_state import TableState

PROTOCOL_VERSION = "1.0"
#: Seconds to wait for one response (``--impl-timeout``).
DEFAULT_TIMEOUT_S = 600.0
#: The longest response line accepted (a read of the 10,000-files shape is a few MB).
DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024
#: Seconds to wait for a program that closed its stdout to exit, for its exit status (at most the timeout).
EXIT_WAIT_S = 5.0
_CHUNK = 1 << 20
_MAX_QUOTED = 300


class ProtocolViolation(RuntimeError):
    """The program broke the subprocess protocol; the message names program, request and field."""


class OutOfStep(ProtocolViolation):
    """A violation after which requests and responses no longer pair up (the program is restarted)."""


def _schema(fragment: str) -> Draft202012Validator:
    return validator("harness/response.schema.json", fragment=fragment)


class ResponseDecoder:
    """Checks one response line against the protocol and returns its result (no I/O).

    Separate from the process handling so that every malformed answer can be tried cheaply
    (``tests/conformance/test_command_protocol.py`` mutates valid responses with hypothesis).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._envelope = validator("harness/response.schema.json")
        self._results = {
            "hello": _schema("#/$defs/hello"),
            "read": _schema("#/$defs/read"),
            "write_checkpoint": _schema("#/$defs/done"),
            "cleanup": _schema("#/$defs/done"),
            "shutdown": _schema("#/$defs/done"),
        }

    def where(self, request: Mapping[str, Any]) -> str:
        """``harness 'x', request #3 read /path/to/table``: who was asked what."""
        target = f" {request['table']}" if "table" in request else ""
        return f"harness {self.name!r}, request #{request['id']} {request['op']}{target}"

    def violation(
        self, request: Mapping[str, Any], problem: str, kind: type[ProtocolViolation] = ProtocolViolation
    ) -> ProtocolViolation:
        return kind(f"{self.where(request)}: {problem}")

    def _check(self, schema: Draft202012Validator, value: Any, request: Mapping[str, Any], at: str) -> None:
        errors = sorted(schema.iter_errors(value), key=lambda e: (len(e.path), list(map(str, e.path))))
        if errors:
            error = errors[0]
            field = at + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
            message = error.message
            if error.validator == "enum":  # the whole list: the author needs the allowed names
                message = f"{error.instance!r} is not one of {', '.join(map(str, error.validator_value))}"
            elif len(message) > _MAX_QUOTED:
                message = message[: _MAX_QUOTED - 3] + "..."
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise self.violation(request, f"field {field}: {message}{more}")

    def result(self, request: Mapping[str, Any], line: bytes) -> dict[str, Any]:
        """The ``result`` of a successful response; :class:`AdapterError` for a coded error."""
        try:
            response = json.loads(line)
        except ValueError:
            raise self.violation(request, f"response is not JSON: {_quote(line)}") from None
        self._check(self._envelope, response, request, "response")
        if response["id"] != request["id"]:
            raise self.violation(
                request, f"field response.id: {response['id']} answers another request", OutOfStep
            )
        if not response["ok"]:
            raise AdapterError(response["error"]["code"], response["error"]["message"])
        result: dict[str, Any] = response["result"]
        self._check(self._results[request["op"]], result, request, "response.result")
        return result

    def read_result(
        self, request: Mapping[str, Any], result: Mapping[str, Any], unavailable: frozenset[str]
    ) -> ReadResult:
        """A schema-checked read result as a :class:`ReadResult` (normalised TableState)."""
        raw = result["state"]
        try:
            state = TableState.build(
                version=raw["version"],
                protocol=raw["protocol"],
                metadata=raw["metadata"],
                files=raw["files"],
                tombstones=raw.get("tombstones", []),
                txns=raw.get("txns", []),
                domain_metadata=raw.get("domainMetadata", []),
                source={"unavailable": sorted(unavailable)},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # the schema should prevent it
            raise self.violation(
                request, f"response.result.state cannot be normalised: {type(exc).__name__}: {exc}"
            ) from None
        return ReadResult(state=state, rows=result.get("rows"), checkpoint=result.get("checkpoint"))

    def info(self, command: str, hello: Mapping[str, Any]) -> ImplementationInfo:
        """The implementation a schema-checked hello result describes."""
        roles = Role(0)
        for role in hello["roles"]:
            roles |= ROLE_NAMES[role]
        profiles = tuple(
            WriterProfile(
                name=p["name"],
                description=p["description"],
                spec=p["spec"],
                naming=p["naming"],
                top_level_format=p.get("manifest"),
                sidecars=bool(p.get("sidecars", False)),
                needs_v2_table=bool(p.get("needsV2Table", False)),
                writes_last_checkpoint=bool(p.get("writesLastCheckpoint", True)),
                explicit=bool(p.get("explicit", False)),
            )
            for p in hello.get("profiles", [])
        )
        return ImplementationInfo(
            name=self.name,
            version=hello["version"],
            roles=roles,
            description=hello.get("description", f"subprocess adapter: {command}"),
            homepage=hello.get("homepage"),
            unavailable_fields=frozenset(hello.get("unavailableFields", [])),
            reports_checkpoint=bool(hello.get("reportsCheckpoint", False)),
            honours_clock=bool(hello.get("honoursClock", False)),
            reads_data=bool(hello.get("readsData", False)),
            profiles=profiles,
        )


def _quote(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return repr(text if len(text) <= _MAX_QUOTED else text[: _MAX_QUOTED - 3] + "...")


class CommandImplementation:
    """An adapter program started with ``command`` (a shell-style string)."""

    def __init__(
        self,
        name: str,
        command: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.name = name
        self.command = command
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self._next_id = 0
        self._request_schema = validator("harness/request.schema.json")
        self._decoder = ResponseDecoder(name)
        self._proc: subprocess.Popen[bytes] | None = None
        self._pending = b""
        self.info = self._decoder.info(command, self._start())

    # -- the process ----------------------------------------------------------------------------

    def _start(self) -> dict[str, Any]:
        """Start the program and return its hello result."""
        self._proc = subprocess.Popen(
            shlex.split(self.command), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self._pending = b""
        return self._exchange({"op": "hello", "protocolVersion": PROTOCOL_VERSION})

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _exit_status(self) -> str:
        """How the program that closed its stdout ended: its exit status once it exits, within
        :data:`EXIT_WAIT_S` (a program that just closed its stdout may be slow to exit, but one that
        closed it and hangs must not cost the request's whole timeout), else "still running"."""
        proc = self._proc
        if proc is None:
            return "stopped"
        try:
            return f"exit status {proc.wait(timeout=min(self.timeout_s, EXIT_WAIT_S))}"
        except subprocess.TimeoutExpired:
            return "still running"

    def _read_line(self, request: Mapping[str, Any]) -> bytes:
        """One response line, within the timeout and the size bound."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        chunks = [self._pending]
        size = len(self._pending)
        deadline = time.monotonic() + self.timeout_s
        while b"\n" not in chunks[-1]:
            if size > self.max_response_bytes:
                raise self._decoder.violation(
                    request,
                    f"response longer than {self.max_response_bytes} bytes (no newline yet)",
                    OutOfStep,
                )
            remaining = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(remaining, 0))[0] if remaining > 0 else []
            if not ready:
                raise self._decoder.violation(request, f"no response within {self.timeout_s:g}s", OutOfStep)
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                raise self._decoder.violation(
                    request,
                    f"the program closed its stdout before answering ({self._exit_status()})",
                    OutOfStep,
                )
            chunks.append(chunk)
            size += len(chunk)
        line, _, self._pending = b"".join(chunks).partition(b"\n")
        if len(line) > self.max_response_bytes:
            raise self._decoder.violation(
                request, f"response longer than {self.max_response_bytes} bytes", OutOfStep
            )
        return line

    def _stray_output(self) -> bytes:
        """Whatever the program wrote since its last response (nothing, if it behaves)."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        stray = self._pending
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            stray += chunk
            if len(stray) > _MAX_QUOTED:
                break
        return stray

    def _exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        message = {"id": self._next_id, **request}
        for error in self._request_schema.iter_errors(message):  # a bug in the suite, not the program
            raise RuntimeError(f"the suite built an invalid request {message!r}: {error.message}")
        try:
            if self._proc is None:
                raise self._decoder.violation(message, "the program is not running", OutOfStep)
            if self._proc.poll() is not None:
                raise self._decoder.violation(
                    message,
                    f"the program exited with status {self._proc.returncode} before the request",
                    OutOfStep,
                )
            stray = self._stray_output()
            if stray:
                raise self._decoder.violation(
                    message, f"output nobody asked for before this request: {_quote(stray)}", OutOfStep
                )
            assert self._proc.stdin is not None
            try:
                self._proc.stdin.write(json.dumps(message).encode() + b"\n")
                self._proc.stdin.flush()
            except OSError as exc:
                raise self._decoder.violation(message, f"cannot send the request: {exc}", OutOfStep) from None
            return self._decoder.result(message, self._read_line(message))
        except ProtocolViolation as exc:
            if isinstance(exc, OutOfStep) or message["op"] == "hello":
                self._stop()  # the next request starts the program afresh
            raise

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._proc is None:
            self._start()
        return self._exchange(request)

    # -- the operations -------------------------------------------------------------------------

    def read(self, table: Path, *, version: int | None = None, now_ms: int | None = None) -> ReadResult:
        request = {"op": "read", "table": str(Path(table).resolve()), "version": version, "nowMs": now_ms}
        result = self._call(request)
        return self._decoder.read_result(
            {"id": self._next_id, **request}, result, self.info.unavailable_fields
        )

    def write_checkpoint(self, table: Path, *, profile: str, version: int | None = None) -> None:
        self._call(
            {
                "op": "write_checkpoint",
                "table": str(Path(table).resolve()),
                "profile": profile,
                "version": version,
            }
        )

    def cleanup(self, table: Path, *, now_ms: int | None = None) -> None:
        self._call({"op": "cleanup", "table": str(Path(table).resolve()), "nowMs": now_ms})

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(ProtocolViolation, AdapterError):
                self._exchange({"op": "shutdown"})
            if self._proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(timeout=10)
        self._stop()
