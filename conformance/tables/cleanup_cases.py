"""Source tables for the cleaner tests (spec §18 Metadata cleanup), built the same way for every cleaner.

Each case is a table with commits 0..8 (appends, then a remove at 8), checkpoints written by the
reference writer (through its adapter, :mod:`conformance.adapters.reference`), and ``delta.logRetentionDuration = interval 8 days``:

| case | checkpoints | what a cleaner should delete (CKPT-CLEAN-009, -017) |
|---|---|---|
| ``classic`` | V1 classic at 2, 4, 7 | commits 0-3 and checkpoint 2 |
| ``v2-sidecars`` | UUID-named V2 (JSON top-level file, sidecars) at 2, 4, 7; hidden files planted in ``_sidecars/`` (below) | the same and checkpoint 2's sidecars; and it should write a classic-named compatibility checkpoint at 4 (CKPT-COMPAT-004) |
| ``checkpoint-after-cutoff`` | V1 classic at 6 only, the version right after the cutoff commit | nothing: no checkpoint at or before the cutoff commit (CKPT-CLEAN-004); delta-spark deletes commits 0-5 (spec D12) |
| ``unknown-writer-feature`` | V1 classic at 2, 4, 7; commit 8 adds the writer feature ``madeUpWriterFeature`` instead of the remove | nothing, and fail with ``UNSUPPORTED_WRITER_FEATURE`` (CKPT-CLEAN-011) |
| ``v2-dropped`` | UUID-named V2 (JSON top-level file, sidecar) at 2, V1 classic at 4 and 5; ``v2Checkpoint`` dropped at 5 | commits 0-4, checkpoints 2 and 4 and every sidecar, all history before *P* = 5 in one run (CKPT-CLEAN-021, -023) |

``v2-dropped`` is what delta-spark's DROP FEATURE leaves (spec CKPT-CLEAN-023 note): commit 4 sets
``delta.checkpointPolicy = classic`` and gets a classic V1 checkpoint (the barrier: delta-spark drops the
feature only when the policy is classic and the snapshot before the drop was loaded from a V1 checkpoint,
``TableFeature.scala`` L1229-1242); commit 5 removes ``v2Checkpoint`` from the protocol, adds
``checkpointProtection`` with ``delta.requireCheckpointProtectionBeforeVersion = 5``
(:meth:`~conformance.tables.builder.TableBuilder.drop_feature`) and gets a classic V1 checkpoint (the
protected one, ``commands/alterDeltaTableCommands.scala`` L568-569). The sidecar of 2 is an orphan once that
checkpoint goes.

``v2-sidecars`` also holds the hidden files writers leave in ``_sidecars/`` (spec CKPT-CLEAN-027,
CKPT-CLEAN-028, D26): Hadoop's ``.crc`` of every sidecar, as a Spark task on the local file system
writes it (valid, stamped as its sidecar); a sidecar temporary ``.<sidecar>.<uuid>.tmp`` of one of
checkpoint 2's sidecars stamped as version 2 (a cleaner may delete it); one modified at the build's
``now``, after every cleaner's one-day floor, and an old ``.<sidecar>.tmp`` without a UUID (both must
stay, and so must the ``.crc`` of every sidecar that stays). In ``_delta_log`` itself it holds what a
log store's killed rename leaves, ``.<commit 0>.<uuid>.tmp`` stamped as version 0, which every cleaner
must keep (spec CKPT-CLEAN-028 note).

**Clock.** The files of version ``v`` (commit, checksum, checkpoint files, sidecars, and Hadoop's
hidden ``.crc`` companions) get the modification time ``M − (3·(8 − v) + 0.5)`` days, ``M`` being
today's midnight UTC. A cleaner's cutoff — now minus 8 days, truncated to midnight or not, even if
midnight passes during the run — then falls between version 5 (``M − 9.5 d``) and version 6
(``M − 6.5 d``): the cutoff commit is 5 for every cleaner, whether it honours the suite's clock or
reads the real time. The cutoff checkpoint is the newest at or before 5.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from conformance.decode.checkpoint import checkpoint_names, decode_checkpoint
from conformance.decode.names import DELTA_LOG, LAST_CHECKPOINT, SIDECAR_DIR, checksum_owner, parse_name
from conformance.tables.builder import rows
from conformance.tables.mutations import write_hadoop_checksum
from conformance.tables.shapes import Variant, new_table
from spec.table_state import TableState

DAY_MS = 86_400_000


LATEST = 8
CUTOFF_COMMIT = 5
RETENTION = "interval 8 days"

UNKNOWN_WRITER_FEATURE = "madeUpWriterFeature"
V2_DROPPED_AT = 5


@dataclass(frozen=True)
class _Recipe:
    """How a case is built (module docs): the table variant, the checkpoints (version -> the reference
    adapter's writer profile: ``v1`` one classic file, ``v2-json`` UUID-named JSON + sidecars of 2 actions),
    the writer feature commit 8 adds instead of the remove, and the version where ``v2Checkpoint`` is
    dropped (the version before sets the policy to classic)."""

    variant: Variant
    checkpoints: Mapping[int, str]
    writer_feature: str | None = None
    drop_v2_at: int | None = None
    plant_temporaries: bool = False


def _every(profile: str, *versions: int) -> dict[int, str]:
    """Checkpoints of ``profile`` at ``versions``."""
    return dict.fromkeys(versions, profile)


_RECIPES: dict[str, _Recipe] = {
    "classic": _Recipe("classic", _every("v1", 2, 4, 7)),
    "v2-sidecars": _Recipe("v2", _every("v2-json", 2, 4, 7), plant_temporaries=True),
    "checkpoint-after-cutoff": _Recipe("classic", _every("v1", 6)),
    "unknown-writer-feature": _Recipe(
        "classic", _every("v1", 2, 4, 7), writer_feature=UNKNOWN_WRITER_FEATURE
    ),
    "v2-dropped": _Recipe(
        "v2", {**_every("v2-json", 2), **_every("v1", 4, V2_DROPPED_AT)}, drop_v2_at=V2_DROPPED_AT
    ),
}
CLEANUP_CASES: tuple[str, ...] = tuple(_RECIPES)


@dataclass(frozen=True)
class CleanupCase:
    """A table to clean and what is known about it by construction."""

    name: str
    path: Path
    now_ms: int
    states: dict[int, TableState]  # the state of every version 0..LATEST
    checkpoints: dict[int, tuple[str, ...]]  # version -> top-level file names (relative to _delta_log)
    sidecars: dict[int, frozenset[str]]  # version -> "_sidecars/<name>" its checkpoint references
    expected_error: str | None = None  # the code a cleaner must fail with, deleting nothing
    protected_before: int | None = None  # P of checkpointProtection (None: the protocol does not list it)
    old_temporaries: frozenset[str] = frozenset()  # "_sidecars/.<sidecar>.<uuid>.tmp" a cleaner may delete

    @property
    def log_dir(self) -> Path:
        return self.path / DELTA_LOG

    @property
    def cutoff_checkpoint(self) -> int | None:
        """The newest checkpoint at or before the cutoff commit (None: a cleaner must delete nothing)."""
        return max((v for v in self.checkpoints if v <= CUTOFF_COMMIT), default=None)


def stamp_ms(version: int, now_ms: int) -> int:
    """The modification time of version ``version``'s files (see the module docs)."""
    midnight = now_ms - now_ms % DAY_MS
    return midnight - (3 * (LATEST - version) * 2 + 1) * DAY_MS // 2


def _file_version(relative: str) -> int | None:
    """The version a file under ``_delta_log`` belongs to (sidecars and ``.crc`` companions included)."""
    name = relative.rsplit("/", 1)[-1]
    name = checksum_owner(name) or name
    if relative.startswith(f"{SIDECAR_DIR}/"):
        head = name.split(".", 1)[0]
        return int(head) if head.isdigit() else None
    return parse_name(name).version


def build_cleanup_case(name: str, path: Path) -> CleanupCase:
    """Build case ``name`` at ``path`` and stamp its files (module docs)."""
    from conformance.adapters.reference import ReferenceImplementation

    writer = ReferenceImplementation()
    recipe = _RECIPES[name]
    builder = new_table(path, recipe.variant, config={"delta.logRetentionDuration": RETENTION})
    for version in range(1, LATEST):
        if recipe.drop_v2_at is not None and version == recipe.drop_v2_at - 1:
            builder.set_properties({"delta.checkpointPolicy": "classic"})
        elif version == recipe.drop_v2_at:
            builder.drop_feature("v2Checkpoint")
        else:
            builder.append(rows((version - 1) * 2, 2))
    if recipe.writer_feature is None:
        builder.remove(builder.live_paths[:1])
    else:
        builder.set_features(writer_features=[recipe.writer_feature])
    assert builder.version == LATEST, f"{path}: built {builder.version} versions, expected {LATEST}"
    checkpoints, sidecars = {}, {}
    log_dir = path / DELTA_LOG
    versions = sorted(recipe.checkpoints)
    for version in versions:
        writer.write_checkpoint(path, profile=recipe.checkpoints[version], version=version)
        (names,) = checkpoint_names(log_dir, version).values()
        checkpoints[version] = tuple(sorted(names))
        sidecars[version] = frozenset(f.name for f in decode_checkpoint(log_dir, list(names)).sidecars)
    now = int(time.time() * 1000)
    for file in log_dir.rglob("*"):
        relative = file.relative_to(log_dir).as_posix()
        owner = max(versions) if relative == LAST_CHECKPOINT else _file_version(relative)
        if file.is_file() and owner is not None:
            ns = stamp_ms(owner, now) * 1_000_000
            os.utime(file, ns=(ns, ns))
    states = {v: builder.expected_state(v, now_ms=now) for v in range(LATEST + 1)}
    error = None if recipe.writer_feature is None else "UNSUPPORTED_WRITER_FEATURE"
    old = _plant_hidden_files(log_dir, sidecars, now) if recipe.plant_temporaries else frozenset()
    return CleanupCase(name, path, now, states, checkpoints, sidecars, error, recipe.drop_v2_at, old)


#: The canonical UUIDs of the planted temporaries (fixed, so that every build has the same names).
_OLD_TOKEN, _YOUNG_TOKEN = "0c1e4f2a-8d3b-4e6f-9a7c-5b2d1e0f3a41", "6f3a9c2e-1b4d-4a8e-b7c5-2d9e0f1a3b62"


def _plant_hidden_files(log_dir: Path, sidecars: Mapping[int, frozenset[str]], now_ms: int) -> frozenset[str]:
    """Plant the hidden files of ``v2-sidecars`` (module docs) among the ``sidecars`` of its checkpoints
    (``_sidecars/<name>``); returns the temporary a cleaner may delete."""
    for version, names in sidecars.items():
        for relative in names:
            write_hadoop_checksum(log_dir / relative, (log_dir / relative).read_bytes())
            crc = log_dir / SIDECAR_DIR / f".{relative.split('/', 1)[1]}.crc"
            os.utime(crc, ns=(stamp_ms(version, now_ms) * 1_000_000,) * 2)
    directory, name = min(sidecars[2]).split("/", 1)
    old = f"{directory}/.{name}.{_OLD_TOKEN}.tmp"
    planted = {
        old: stamp_ms(2, now_ms),
        f"{directory}/.{name}.{_YOUNG_TOKEN}.tmp": now_ms,
        f"{directory}/.{name}.tmp": stamp_ms(2, now_ms),
        f".{0:020d}.json.{_OLD_TOKEN}.tmp": stamp_ms(0, now_ms),
    }
    for relative, mtime_ms in planted.items():
        (log_dir / relative).write_bytes(b"PAR1, cut short by a killed task")
        os.utime(log_dir / relative, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    return frozenset({old})
