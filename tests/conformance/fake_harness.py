"""A fake adapter program for the plugin's meta-tests (subprocess protocol 1.0), no Spark needed.

Behaviour is chosen by environment variables:

* ``FAKE_STATE`` — a path to a TableState JSON returned by every ``read``;
* ``FAKE_ERROR`` — if set, every ``read`` fails with this error code instead;
* ``FAKE_GARBAGE`` — if set, the program answers ``read`` with a line that is not JSON;
* ``FAKE_PURGE`` — if set, the program is a cleaner (only) whose ``cleanup`` deletes every commit file
  but the latest: the data loss the cleaner tests must catch.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main() -> int:
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "hello":
            result = {
                "name": "fake",
                "version": "0.0.1",
                "protocolVersion": "1.0",
                "roles": ["cleaner"] if os.environ.get("FAKE_PURGE") else ["reader"],
                "unavailableFields": ["tombstones"],
                "reportsCheckpoint": False,
            }
            response = {"ok": True, "result": result}
        elif op == "read" and os.environ.get("FAKE_GARBAGE"):
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            continue
        elif op == "read" and os.environ.get("FAKE_ERROR"):
            response = {"ok": False, "error": {"code": os.environ["FAKE_ERROR"], "message": "fake failure"}}
        elif op == "read":
            with open(os.environ["FAKE_STATE"]) as handle:
                state = json.load(handle)
            state.pop("source", None)
            response = {"ok": True, "result": {"state": state, "rows": None, "checkpoint": None}}
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
