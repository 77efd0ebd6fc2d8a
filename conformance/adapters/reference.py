"""The reference implementation (``reference_impl``) as a conformance adapter: reader, writer, cleaner.

The only module of the suite that imports ``reference_impl`` (``tests/test_boundaries.py``).
Writer profiles map to :class:`~reference_impl.write.options.CheckpointOptions` (``v2-incremental``
first writes a checkpoint of the previous version, so the version's checkpoint reuses its sidecars:
spec §12.1, ``CKPT-INC-001``); sidecar profiles use two file actions per sidecar so that the suite's small tables get several sidecars,
and more on large tables so that no checkpoint has more than
:data:`~conformance.adapter.MAX_CHECKPOINT_FILES` sidecars.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

from conformance.adapter import (
    MAX_CHECKPOINT_FILES,
    AdapterError,
    ImplementationInfo,
    ReadResult,
    Role,
    WriterProfile,
)
from reference_impl import __version__
from reference_impl.cleanup.cleaner import cleanup
from reference_impl.errors import CheckpointError
from reference_impl.log.features import check_writer_features
from reference_impl.log.naming import parse_log_file_name
from reference_impl.read.snapshot import read_snapshot
from reference_impl.spark.session import get_spark
from reference_impl.write.options import CheckpointOptions, resolve_plan
from reference_impl.write.writer import write_checkpoint
from spec.vocabulary import CheckpointNaming, CheckpointSpec, LogFileKind, TopLevelFormat

_V1, _V2 = CheckpointSpec.V1, CheckpointSpec.V2
_JSON, _PARQUET = TopLevelFormat.JSON, TopLevelFormat.PARQUET
_OPTIONS: dict[str, CheckpointOptions] = {
    "v1": CheckpointOptions(spec=_V1),
    "v1-multipart": CheckpointOptions(spec=_V1, parts=3),
    "v2-json": CheckpointOptions(spec=_V2, top_level_format=_JSON, actions_per_sidecar=2),
    "v2-parquet": CheckpointOptions(spec=_V2, top_level_format=_PARQUET, actions_per_sidecar=2),
    "v2-classic": CheckpointOptions(spec=_V2, naming=CheckpointNaming.CLASSIC, actions_per_sidecar=2),
    "v2-inline": CheckpointOptions(spec=_V2, top_level_format=_JSON, sidecars=False),
    "v2-incremental": CheckpointOptions(
        spec=_V2, top_level_format=_JSON, actions_per_sidecar=2, incremental=True
    ),
}

_UUID, _CLASSIC = CheckpointNaming.UUID, CheckpointNaming.CLASSIC
_SIDECARS = "2 file actions per sidecar (at most 8 sidecars)"
PROFILES = (
    WriterProfile("v1", "one classic V1 checkpoint file", _V1, _CLASSIC, explicit=True),
    WriterProfile("v1-multipart", "a 3-part V1 checkpoint", _V1, CheckpointNaming.MULTI_PART, explicit=True),
    WriterProfile(
        "v2-json",
        f"UUID-named JSON top-level file, {_SIDECARS}",
        _V2,
        _UUID,
        _JSON,
        True,
        needs_v2_table=True,
        explicit=True,
    ),
    WriterProfile(
        "v2-parquet",
        f"UUID-named Parquet top-level file, {_SIDECARS}",
        _V2,
        _UUID,
        _PARQUET,
        True,
        needs_v2_table=True,
        explicit=True,
    ),
    WriterProfile(
        "v2-classic",
        "classic-named V2 checkpoint with sidecars",
        _V2,
        _CLASSIC,
        sidecars=True,
        needs_v2_table=True,
        explicit=True,
    ),
    WriterProfile(
        "v2-incremental",
        f"--incremental: a checkpoint of the previous version, then the version's, listing the first's "
        f"sidecars no commit since touched again; UUID-named JSON top-level file, {_SIDECARS}",
        _V2,
        _UUID,
        _JSON,
        True,
        needs_v2_table=True,
        explicit=True,
    ),
    WriterProfile(
        "v2-inline",
        "UUID-named JSON top-level file with every file action inline",
        _V2,
        _UUID,
        _JSON,
        needs_v2_table=True,
        explicit=True,
    ),
)


def _commits(table: Path) -> dict[int, Path]:
    """The table's commit files by version (names as the reference parses them)."""
    log = table / "_delta_log"
    out = {}
    for path in log.iterdir():
        parsed = parse_log_file_name(path.name)
        if (
            parsed.kind is LogFileKind.COMMIT
            and parsed.conforms
            and parsed.version is not None
            and path.is_file()
        ):
            out[parsed.version] = path
    return out


def _file_actions_bound(table: Path, version: int | None) -> int | None:
    """At least the live files plus tombstones of ``version``'s state (default: the latest): the ``add`` and
    ``remove`` actions of commits 0 to ``version``, counted without Spark (each live file and each tombstone
    has one of its own); None when one of them is missing or unreadable."""
    commits = _commits(table)
    last = max(commits, default=-1) if version is None else version
    if last < 0 or any(v not in commits for v in range(last + 1)):
        return None
    count = 0
    try:
        for v in range(last + 1):
            for line in commits[v].read_text().splitlines():
                action = json.loads(line) if line.strip() else None
                count += isinstance(action, dict) and ("add" in action or "remove" in action)
    except ValueError:  # not UTF-8 or not JSON: the reference's own replay reports it
        return None
    return count


def _options(table: Path, profile: str, version: int | None) -> CheckpointOptions:
    """The profile's options, with enough actions per sidecar for at most ``MAX_CHECKPOINT_FILES`` sidecars.

    The state is replayed (with Spark) only when the log's file actions could need more than the profile's
    actions per sidecar: on the suite's small tables the bound from the commits settles it. The replay
    counts live files and tombstones in one aggregation, without collecting them (the 10,000-file shape)."""
    options = _OPTIONS[profile]
    if options.actions_per_sidecar is None:
        return options
    bound = _file_actions_bound(table, version)
    if bound is not None and math.ceil(bound / MAX_CHECKPOINT_FILES) <= options.actions_per_sidecar:
        return options
    summary = read_snapshot(get_spark(), table, version=version).summary()
    needed = math.ceil((summary["numFiles"] + summary["numTombstones"]) / MAX_CHECKPOINT_FILES)
    return dataclasses.replace(options, actions_per_sidecar=max(options.actions_per_sidecar, needed))


def _previous_version(table: Path, version: int | None) -> int | None:
    """The version before ``version`` (default: the latest) when its commit file is in the log."""
    commits = _commits(table)
    previous = (max(commits, default=0) if version is None else version) - 1
    return previous if previous in commits else None


class ReferenceImplementation:
    """``reference``: the PySpark reader and writer of this project."""

    info = ImplementationInfo(
        name="reference",
        version=__version__,
        roles=Role.READER | Role.WRITER | Role.CLEANER,
        description="delta-checkpoint-conformance reference reader, writer and cleaner (PySpark)",
        reports_checkpoint=True,
        honours_clock=True,
        profiles=PROFILES,
    )

    def read(self, table: Path, *, version: int | None = None, now_ms: int | None = None) -> ReadResult:
        try:
            snap = read_snapshot(get_spark(), table, version=version, now_ms=now_ms)
            state = snap.table_state()
        except CheckpointError as exc:
            raise AdapterError(exc.code, str(exc)) from exc
        checkpoint = state.source.get("checkpoint")
        return ReadResult(state=state, checkpoint=checkpoint["files"][0] if checkpoint else None)

    def write_checkpoint(self, table: Path, *, profile: str, version: int | None = None) -> None:
        try:
            options = _options(table, profile, version)
            base = _previous_version(table, version) if options.incremental else None
            if base is not None:  # the checkpoint whose sidecars the version's checkpoint reuses
                # nothing is written when the version's checkpoint would be refused: an unknown writer
                # feature (CKPT-WRITE-010), an invalid option or delta.checkpointPolicy (CKPT-FEAT-009)
                snap = read_snapshot(get_spark(), table, version=version)
                check_writer_features(snap.protocol, str(table / "_delta_log"), role="writer")
                resolve_plan(options, snap)
                write_checkpoint(table, base, options, spark=get_spark())
            write_checkpoint(table, version, options, spark=get_spark())
        except CheckpointError as exc:
            raise AdapterError(exc.code, str(exc)) from exc

    def cleanup(self, table: Path, *, now_ms: int | None = None) -> None:
        try:
            cleanup(table, now_ms=now_ms, spark=get_spark())
        except CheckpointError as exc:
            raise AdapterError(exc.code, str(exc)) from exc

    def close(self) -> None:
        return None
