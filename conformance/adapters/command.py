"""Any implementation, in any language, as a program speaking the subprocess protocol (version 1.0).

The suite starts the program once per session and exchanges JSON lines: one request on the
program's stdin, one response on its stdout (``spec/schemas/harness/request.schema.json``,
``response.schema.json``). Every message is validated against those schemas, so a malformed
program fails with a precise message instead of a confusing test result. The program's stderr is
passed through. See ``conformance/README.md`` for an example exchange.
"""

from __future__ import annotations

import contextlib
import json
import select
import shlex
import subprocess
from pathlib import Path
from typing import Any

from conformance.adapter import ROLE_NAMES, AdapterError, ImplementationInfo, ReadResult, Role, WriterProfile
from spec.schemas import validator
from spec.table_state import TableState

PROTOCOL_VERSION = "1.0"
DEFAULT_TIMEOUT_S = 900.0
_FIELDS = {"protocol", "metadata", "files", "tombstones", "txns", "domainMetadata"}


class ProtocolViolation(RuntimeError):
    """The program broke the subprocess protocol (bad JSON, schema violation, wrong id, exit)."""


class CommandImplementation:
    """An adapter program started with ``command`` (a shell-style string)."""

    def __init__(self, name: str, command: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.name = name
        self.command = command
        self.timeout_s = timeout_s
        self._next_id = 0
        self._request_schema = validator("harness/request.schema.json")
        self._response_schema = validator("harness/response.schema.json")
        self._hello_schema = validator("harness/response.schema.json", fragment="#/$defs/hello")
        self._proc = subprocess.Popen(
            shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        hello = self._call({"op": "hello", "protocolVersion": PROTOCOL_VERSION})
        self._check(self._hello_schema, hello, "hello result")
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
            )
            for p in hello.get("profiles", [])
        )
        self.info = ImplementationInfo(
            name=name,
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

    def _check(self, schema: Any, message: Any, what: str) -> None:
        errors = sorted(schema.iter_errors(message), key=lambda e: list(e.path))
        if errors:
            raise ProtocolViolation(
                f"{self.name}: {what} violates the protocol: {errors[0].message} in {message!r}"
            )

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        message = {"id": self._next_id, **request}
        self._check(self._request_schema, message, "request")  # a bug in the suite if this fails
        proc = self._proc
        if proc.poll() is not None or proc.stdin is None or proc.stdout is None:
            raise ProtocolViolation(f"{self.name}: the program exited with status {proc.returncode}")
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], self.timeout_s)
        if not ready:
            raise ProtocolViolation(
                f"{self.name}: no response to {request['op']} within {self.timeout_s:.0f}s"
            )
        line = proc.stdout.readline()
        if not line:
            raise ProtocolViolation(f"{self.name}: the program closed stdout (exit status {proc.poll()})")
        try:
            response = json.loads(line)
        except ValueError as exc:
            raise ProtocolViolation(f"{self.name}: response is not JSON: {line[:200]!r}") from exc
        self._check(self._response_schema, response, "response")
        if response["id"] != message["id"]:
            raise ProtocolViolation(f"{self.name}: response id {response['id']} for request {message['id']}")
        if not response["ok"]:
            raise AdapterError(response["error"]["code"], response["error"]["message"])
        result: dict[str, Any] = response["result"]
        return result

    def read(self, table: Path, *, version: int | None = None, now_ms: int | None = None) -> ReadResult:
        result = self._call(
            {"op": "read", "table": str(Path(table).resolve()), "version": version, "nowMs": now_ms}
        )
        raw = result["state"]
        state = TableState.build(
            version=raw["version"],
            protocol=raw["protocol"],
            metadata=raw["metadata"],
            files=raw["files"],
            tombstones=raw.get("tombstones", []),
            txns=raw.get("txns", []),
            domain_metadata=raw.get("domainMetadata", []),
            source={"unavailable": sorted(self.info.unavailable_fields)},
        )
        return ReadResult(state=state, rows=result.get("rows"), checkpoint=result.get("checkpoint"))

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
        if self._proc.poll() is None:
            with contextlib.suppress(ProtocolViolation, AdapterError, OSError):
                self._call({"op": "shutdown"})
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
