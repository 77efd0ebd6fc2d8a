"""The adapter contract: how an implementation plugs into the conformance suite.

Spec: ``conformance/README.md`` "Implementing an adapter" (contract version :data:`CONTRACT_VERSION`).

An implementation is an object with an :class:`ImplementationInfo` and up to four operations:

| operation | role | what the suite asks |
|---|---|---|
| :meth:`Implementation.read` | reader | reconstruct a version: a :class:`~spec.table_state.TableState` (+ visible rows and the checkpoint used, when it can tell) |
| :meth:`Implementation.write_checkpoint` | writer | write a checkpoint of a version with one of the writer's declared *profiles* |
| :meth:`Implementation.cleanup` | cleaner | metadata cleanup with the table's own ``delta.logRetentionDuration`` (spec §18) |
| :meth:`Implementation.close` | all | release resources |

The suite calls an operation only when the implementation declares its role.

An implementation signals an expected protocol error (a corrupt table, an illegal request) by
raising :class:`AdapterError` with a stable code from ``spec/checkpoints.md`` § Error codes; the
suite compares codes, never messages. Anything else raised is a failure of the implementation.

Writers declare :class:`WriterProfile`\\ s — named ways of writing (``v1``, ``v2-json``, …) with the
shape they promise — and the suite inspects what each profile produced against that promise.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from spec import vocabulary
from spec.table_state import TableState
from spec.vocabulary import CheckpointNaming, CheckpointSpec, TopLevelFormat

CONTRACT_VERSION = "1.0"
#: Bundled writer profiles that split a checkpoint (sidecars, parts) pick actions per file so that a
#: checkpoint has at most this many files: 10,000 files at 2 per file would be 5,000 files and
#: minutes per cell that test nothing the small shapes do not.
MAX_CHECKPOINT_FILES = 8


class Role(enum.Flag):
    READER = enum.auto()
    WRITER = enum.auto()
    CLEANER = enum.auto()


#: Role names (the spec's :class:`~spec.vocabulary.Role` values) as they appear in results.json,
#: the report and the subprocess protocol's hello.
ROLE_NAMES: dict[str, Role] = {
    name: Role[name.name]
    for name in (vocabulary.Role.READER, vocabulary.Role.WRITER, vocabulary.Role.CLEANER)
}


def role_names(roles: Role) -> list[str]:
    return [name for name, flag in ROLE_NAMES.items() if flag in roles]


@dataclass(frozen=True)
class WriterProfile:
    """A named way of writing, and the checkpoint shape it promises.

    ``spec``, ``naming`` and ``top_level_format`` accept the enums or their string values
    (``"v2"``, ``"uuid"``, ``"json"``); ``top_level_format`` is ``"manifest"`` in the subprocess
    protocol and applies to UUID-named checkpoints only.
    """

    name: str
    description: str
    spec: CheckpointSpec
    naming: CheckpointNaming
    top_level_format: TopLevelFormat | None = None
    sidecars: bool = False  # file actions in sidecars
    needs_v2_table: bool = False  # only on tables that support v2Checkpoint
    writes_last_checkpoint: bool = True
    #: The profile asks the writer outright for its spec and naming (an option of the write, not the
    #: table's properties): the suite also asks it where the table's protocol forbids them and expects
    #: the refusal CKPT-FEAT-003 / CKPT-FEAT-005 name. False: the kind follows from the table, and those
    #: tests are not applicable (asking would mean changing the table's protocol).
    explicit: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", CheckpointSpec(self.spec))
        object.__setattr__(self, "naming", CheckpointNaming(self.naming))
        if self.top_level_format is not None:
            object.__setattr__(self, "top_level_format", TopLevelFormat(self.top_level_format))


@dataclass(frozen=True)
class ImplementationInfo:
    name: str
    version: str
    roles: Role
    description: str = ""
    homepage: str | None = None
    #: TableState fields this reader cannot report (e.g. deltalake has no tombstones).
    unavailable_fields: frozenset[str] = frozenset()
    #: Whether :meth:`Implementation.read` reports the checkpoint it used.
    reports_checkpoint: bool = False
    #: Whether :meth:`Implementation.read` (expiry) and :meth:`Implementation.cleanup` (the cutoff)
    #: use the clock ``now_ms`` they are given; if not, they use the real time.
    honours_clock: bool = False
    #: Whether :meth:`Implementation.read` also counts visible data rows.
    reads_data: bool = False
    profiles: tuple[WriterProfile, ...] = ()

    def profile(self, name: str) -> WriterProfile:
        for p in self.profiles:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no writer profile {name!r}")


@dataclass
class ReadResult:
    """What a reader reports for one version.

    ``count`` is for a reader whose row count is a scan of its own (delta-spark, deltalake): it counts
    the visible rows when a test asks for them (:meth:`visible_rows`), so the reads of tests that
    compare no rows (log-only tables, hostile tables, cleaned tables) do not scan the data files.
    """

    state: TableState
    rows: int | None = None
    checkpoint: str | None = None  # top-level file (first part) of the checkpoint used
    details: dict[str, object] = field(default_factory=dict)
    count: Callable[[], int | None] | None = field(default=None, repr=False, compare=False)

    def visible_rows(self) -> int | None:
        """The visible rows: ``rows``, else counted now by ``count`` (once), else None."""
        if self.rows is None and self.count is not None:
            self.rows, self.count = self.count(), None
        return self.rows


class AdapterError(Exception):
    """An expected, coded error reported by the implementation under test."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@runtime_checkable
class Implementation(Protocol):
    info: ImplementationInfo

    def read(self, table: Path, *, version: int | None = None, now_ms: int | None = None) -> ReadResult:
        """Reconstruct ``version`` (None = latest). Raise :class:`AdapterError` for coded errors."""
        ...

    def write_checkpoint(self, table: Path, *, profile: str, version: int | None = None) -> None:
        """Write a checkpoint of ``version`` (None = latest) the way ``profile`` says."""
        ...

    def cleanup(self, table: Path, *, now_ms: int | None = None) -> None:
        """Clean up the table's metadata as of ``now_ms`` (None = now), keeping the table's
        ``delta.logRetentionDuration``. Raise :class:`AdapterError` for coded refusals."""
        ...

    def close(self) -> None: ...
