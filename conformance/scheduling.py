"""The pytest-xdist scheduler of ``conformance run --workers N`` (issue #15 item 7: the matrix over every core).

xdist's ``--dist loadgroup`` sends whole work units to workers; here a unit is one of the suite's groups
(:func:`conformance.plugin.xdist_group`): the writer tests and cross tests of one writer profile on
one shape, or every cleanup test of one cleanup case. So each writer output and each cleaned table is
made once, in one worker, and read there by every reader; every other test is a unit of its own and
goes to whichever worker is free. Larger units are sent first (xdist's ``loadscopereorder``), which
keeps both workers busy to the end.

The controller collects no tests, so the workers tell it the groups: each writes ``{test ID: group}``
to ``<groups dir>/<worker id>.json`` at collection (:func:`conformance.plugin._share_groups`), before
xdist calls :meth:`GroupScheduling.schedule`. A test missing from those files is a unit of its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling


class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist has no type information
    """``LoadScopeScheduling`` with the suite's groups as scopes."""

    def __init__(self, config: pytest.Config, log: Any, groups_dir: Path) -> None:
        super().__init__(config, log)
        self.groups_dir = groups_dir
        self._groups: dict[str, str] | None = None

    def groups(self) -> dict[str, str]:
        if self._groups is None:
            self._groups = {}
            for path in sorted(self.groups_dir.glob("*.json")):
                self._groups.update(json.loads(path.read_text()))
        return self._groups

    def _split_scope(self, nodeid: str) -> str:
        group = self.groups().get(nodeid)
        return f"group {group}" if group is not None else nodeid
