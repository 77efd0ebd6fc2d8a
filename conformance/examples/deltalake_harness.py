#!/usr/bin/env python3
"""An example adapter *program* for the subprocess protocol (1.0): deltalake (delta-rs) behind stdin/stdout.

Run by the suite as ``--impl-cmd deltalake-cmd="python conformance/examples/deltalake_harness.py"``
(bundled as ``deltalake-cmd``); with ``--reader-only`` it declares only the ``reader`` role, as a
reader-only implementer's program would (``tests/conformance/test_reader_only.py`` runs it so, with no
Java on the machine). It reads one JSON request per line on stdin and writes one JSON
response per line on stdout; diagnostics go to stderr. An implementation in another language writes
this same loop in its own language — here the per-request work reuses the in-process deltalake
adapter's functions, so both adapters must produce identical results, which the matrix shows.

Exchange (see ``conformance/README.md``)::

    -> {"id": 1, "op": "hello", "protocolVersion": "1.0"}
    <- {"id": 1, "ok": true, "result": {"name": "deltalake-cmd", "version": "1.6.6", "roles": [...], ...}}
    -> {"id": 2, "op": "read", "table": "/abs/table", "version": null, "nowMs": null}
    <- {"id": 2, "ok": true, "result": {"state": {...}, "rows": 12, "checkpoint": null}}
    -> {"id": 3, "op": "cleanup", "table": "/abs/table", "nowMs": 1767225600000}
    <- {"id": 3, "ok": true, "result": {}}
    -> {"id": 4, "op": "shutdown"}
    <- {"id": 4, "ok": true, "result": {}}
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = "1.0"


def _adapter() -> Any:
    from conformance.adapters.deltalake import DeltalakeImplementation

    return DeltalakeImplementation()


def hello(impl: Any, *, reader_only: bool = False) -> dict[str, Any]:
    info = impl.info
    if reader_only:
        return {
            "name": "deltalake-cmd",
            "version": info.version,
            "protocolVersion": PROTOCOL_VERSION,
            "roles": ["reader"],
            "description": "deltalake (delta-rs) through the subprocess protocol, reader role only",
            "unavailableFields": sorted(info.unavailable_fields),
            "readsData": True,
        }
    return {
        "name": "deltalake-cmd",
        "version": info.version,
        "protocolVersion": PROTOCOL_VERSION,
        "roles": ["reader", "writer", "cleaner"],
        "description": "deltalake (delta-rs) through the subprocess protocol (example adapter program)",
        "homepage": "https://github.com/delta-io/delta-rs",
        "unavailableFields": sorted(info.unavailable_fields),
        "reportsCheckpoint": False,
        "honoursClock": False,
        "readsData": True,
        "profiles": [
            {
                "name": p.name,
                "description": p.description,
                "spec": p.spec,
                "naming": p.naming,
                "manifest": p.top_level_format,
                "sidecars": p.sidecars,
                "needsV2Table": p.needs_v2_table,
                "writesLastCheckpoint": p.writes_last_checkpoint,
                "explicit": p.explicit,
            }
            for p in info.profiles
        ],
    }


def handle(impl: Any, request: dict[str, Any], *, reader_only: bool = False) -> dict[str, Any]:
    from conformance.adapter import AdapterError

    op = request["op"]
    if reader_only and op in ("write_checkpoint", "cleanup"):
        return {
            "ok": False,
            "error": {"code": "INVALID_OPTION", "message": f"{op}: this program is a reader only"},
        }
    try:
        if op == "hello":
            return {"ok": True, "result": hello(impl, reader_only=reader_only)}
        if op == "read":
            result = impl.read(Path(request["table"]), version=request.get("version"))
            state = result.state.to_json()
            state.pop("source", None)
            return {"ok": True, "result": {"state": state, "rows": result.visible_rows(), "checkpoint": None}}
        if op == "write_checkpoint":
            impl.write_checkpoint(
                Path(request["table"]), profile=request["profile"], version=request.get("version")
            )
            return {"ok": True, "result": {}}
        if op == "cleanup":
            impl.cleanup(Path(request["table"]), now_ms=request.get("nowMs"))
            return {"ok": True, "result": {}}
        if op == "shutdown":
            return {"ok": True, "result": {}}
        return {"ok": False, "error": {"code": "INVALID_OPTION", "message": f"unknown op {op!r}"}}
    except AdapterError as exc:
        return {"ok": False, "error": {"code": exc.code, "message": exc.message}}


def main(argv: list[str]) -> int:
    if argv not in ([], ["--reader-only"]):
        print("usage: deltalake_harness.py [--reader-only]", file=sys.stderr)
        return 2
    reader_only = argv == ["--reader-only"]
    impl = _adapter()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            response = handle(impl, request, reader_only=reader_only)
        except Exception as exc:  # a bug in this program: report it as an error response, keep serving
            traceback.print_exc(file=sys.stderr)
            response = {
                "ok": False,
                "error": {"code": "INTERNAL_ERROR", "message": f"{type(exc).__name__}: {exc}"},
            }
        sys.stdout.write(json.dumps({"id": request["id"], **response}) + "\n")
        sys.stdout.flush()
        if request.get("op") == "shutdown":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
