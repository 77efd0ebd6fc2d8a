"""A fake adapter program for the plugin's meta-tests (subprocess protocol 1.0), no Spark needed.

Behaviour is chosen by environment variables:

* ``FAKE_STATE`` — a path to a TableState JSON returned by every ``read``;
* ``FAKE_ERROR`` — if set, every ``read`` fails with this error code instead;
* ``FAKE_MISBEHAVE`` — a way to break the protocol on every ``read`` of a table not named ``good``
  (see :data:`MISBEHAVIOURS`);
* ``FAKE_PURGE`` — if set, the program is a cleaner (only) whose ``cleanup`` deletes every commit file
  but the latest: the data loss the cleaner tests must catch;
* ``FAKE_COMPAT`` — if set, the program is a cleaner (only) whose ``cleanup`` deletes nothing but writes a
  compatibility checkpoint at the newest checkpoint's version that holds the protocol and metadata and no
  file: the wrong state the compatibility tests must catch;
* ``FAKE_ROLES`` — if set (comma-separated), the roles the program declares instead;
* ``FAKE_READS`` — if set (a file), every ``read`` first appends ``TABLE VERSION`` to it;
* ``FAKE_WRITE_CRASH`` — if set (a file), the program is a writer (only, profile ``v1``) whose
  ``write_checkpoint`` appends a line to that file and exits with status 3 before answering.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

#: ``FAKE_MISBEHAVE`` values: what the program does instead of answering a read.
MISBEHAVIOURS: dict[str, str] = {
    "garbage": "answers with a line that is not JSON",
    "crash": "exits with status 3",
    "close-stdout": "closes its stdout, then never exits",
    "hang": "never answers",
    "partial": "writes half a line, then never finishes it",
    "huge": "answers with a 4 MB line",
    "extra": "answers, then writes a line nobody asked for",
    "wrong-id": "answers with the id of another request",
    "empty-protocol": 'answers with "protocol": {}',
    "bad-code": "fails with a code the spec does not define (UNSUPPORTED)",
}


def _misbehave(mode: str, request: dict[str, object], state: dict[str, object]) -> None:
    out = sys.stdout
    good = {"id": request["id"], "ok": True, "result": {"state": state}}
    if mode == "garbage":
        out.write("this is not json\n")
    elif mode == "crash":
        sys.exit(3)
    elif mode == "close-stdout":
        out.flush()
        os.close(out.fileno())
        time.sleep(120)
    elif mode in ("hang", "partial"):
        out.write('{"id": ' if mode == "partial" else "")
        out.flush()
        time.sleep(120)
    elif mode == "huge":
        out.write(json.dumps({**good, "padding": "x" * 4_000_000}) + "\n")
    elif mode == "extra":
        out.write(json.dumps(good) + "\nDEBUG: read done\n")
    elif mode == "wrong-id":
        out.write(json.dumps({**good, "id": int(str(request["id"])) + 7}) + "\n")
    elif mode == "empty-protocol":
        out.write(json.dumps({**good, "result": {"state": {**state, "protocol": {}}}}) + "\n")
    elif mode == "bad-code":
        out.write(
            json.dumps({"id": request["id"], "ok": False, "error": {"code": "UNSUPPORTED", "message": "no"}})
        )
        out.write("\n")
    out.flush()


def _write_compatibility_checkpoint_without_files(log: Path) -> None:
    """A classic-named checkpoint at the newest checkpoint's version with the last protocol and metaData of
    the commits and no ``add``: a compatibility checkpoint that does not describe the state."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    newest = max(int(p.name[:20]) for p in log.glob("[0-9]" * 20 + ".checkpoint.*"))
    last: dict[str, object] = {}
    for commit in sorted(log.glob("[0-9]" * 20 + ".json")):
        for line in commit.read_text(encoding="utf-8").splitlines():
            action = json.loads(line) if line.strip() else {}
            last.update({k: v for k, v in action.items() if k in ("protocol", "metaData")})
    strings, texts = pa.map_(pa.string(), pa.string()), pa.list_(pa.string())
    protocol_type = pa.struct(
        [("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32()),
         ("readerFeatures", texts), ("writerFeatures", texts)]
    )  # fmt: skip
    metadata_type = pa.struct(
        [("id", pa.string()), ("name", pa.string()), ("description", pa.string()),
         ("format", pa.struct([("provider", pa.string()), ("options", strings)])),
         ("schemaString", pa.string()), ("partitionColumns", texts), ("configuration", strings),
         ("createdTime", pa.int64())]
    )  # fmt: skip
    protocol = dict(last["protocol"])  # type: ignore[call-overload]
    metadata = dict(last["metaData"])  # type: ignore[call-overload]
    metadata["configuration"] = list((metadata.get("configuration") or {}).items())
    metadata["format"] = {
        **metadata["format"],
        "options": list((metadata["format"].get("options") or {}).items()),
    }
    schema = pa.schema([("protocol", protocol_type), ("metaData", metadata_type)])
    rows = [{"protocol": protocol, "metaData": None}, {"protocol": None, "metaData": metadata}]
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), log / f"{newest:020d}.checkpoint.parquet")


def _state() -> dict[str, object]:
    with open(os.environ["FAKE_STATE"]) as handle:
        state: dict[str, object] = json.load(handle)
    state.pop("source", None)
    return state


def _roles() -> list[str]:
    if os.environ.get("FAKE_ROLES"):
        return os.environ["FAKE_ROLES"].split(",")
    return ["cleaner"] if os.environ.get("FAKE_PURGE") or os.environ.get("FAKE_COMPAT") else ["reader"]


def main() -> int:
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "read" and os.environ.get("FAKE_READS"):
            with open(os.environ["FAKE_READS"], "a") as reads:
                reads.write(f"{request['table']} {request['version']}\n")
        if op == "hello":
            result = {
                "name": "fake",
                "version": "0.0.1",
                "protocolVersion": "1.0",
                "roles": _roles(),
                "unavailableFields": ["tombstones"],
                "reportsCheckpoint": False,
            }
            if os.environ.get("FAKE_WRITE_CRASH"):
                profile = {"name": "v1", "description": "crashes", "spec": "v1", "naming": "classic"}
                result = {**result, "roles": ["writer"], "profiles": [{**profile, "needsV2Table": False}]}
            response = {"ok": True, "result": result}
        elif op == "write_checkpoint" and os.environ.get("FAKE_WRITE_CRASH"):
            with open(os.environ["FAKE_WRITE_CRASH"], "a") as runs:
                runs.write(f"{request['table']}\n")
            return 3
        elif op == "read" and os.environ.get("FAKE_MISBEHAVE") and Path(request["table"]).name != "good":
            _misbehave(os.environ["FAKE_MISBEHAVE"], request, _state())
            continue
        elif op == "read" and os.environ.get("FAKE_ERROR"):
            response = {"ok": False, "error": {"code": os.environ["FAKE_ERROR"], "message": "fake failure"}}
        elif op == "read":
            response = {"ok": True, "result": {"state": _state(), "rows": None, "checkpoint": None}}
        elif op == "cleanup" and os.environ.get("FAKE_COMPAT"):
            _write_compatibility_checkpoint_without_files(Path(request["table"], "_delta_log"))
            response = {"ok": True, "result": {}}
        elif op == "cleanup":
            commits = sorted(Path(request["table"], "_delta_log").glob("[0-9]*[0-9].json"))
            for commit in commits[:-1]:
                commit.unlink()
            response = {"ok": True, "result": {}}
        else:
            response = {"ok": True, "result": {}}
        sys.stdout.write(json.dumps({"id": request["id"], **response}) + "\n")
        sys.stdout.flush()
        if op == "shutdown":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
