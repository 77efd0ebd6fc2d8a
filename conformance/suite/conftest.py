"""Shared state of the conformance tests: source tables and what each writer wrote to them.

Each ``(writer, profile, shape)`` is written once per session and cached — a failed write too, a
coded error or a broken harness (:func:`attempt`), so one broken writer costs one run and each of its
tests fails with the harness's message; the writer tests inspect the files, the cross tests read a copy whose commits before the checkpoint are deleted
(the one at the checkpoint version is kept), so readers can only get the state from the checkpoint.
"""

from __future__ import annotations

import copy
import dataclasses
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn, TypeVar, cast

import pytest

from conformance.adapter import AdapterError, Implementation, WriterProfile
from conformance.adapters.command import ProtocolViolation
from conformance.decode.checkpoint import DecodedCheckpoint, checkpoint_names, decode_checkpoint
from conformance.decode.files import Files, files
from conformance.decode.names import DELTA_LOG
from conformance.tables.mutations import delete_commits_before
from conformance.tables.shapes import BuiltShape, Variant, build_shape

Listing = Files
#: How an implementation's write or cleanup can fail: a coded error, or a breach of the subprocess
#: protocol (a crash, no answer, a malformed one).
Failure = AdapterError | ProtocolViolation


def listing(table: Path, *, outside_log: bool = False) -> Listing:
    """Every file under ``_delta_log`` (recursively), or with ``outside_log`` every other file of the
    table: relative name -> (size, mtime ns)."""
    return files(table, exclude=DELTA_LOG) if outside_log else files(table / DELTA_LOG)


@dataclass
class WrittenTable:
    implementation: str
    profile: WriterProfile
    shape: BuiltShape
    before: Listing
    after: Listing
    error: Failure | None
    checkpoint: list[str]  # the new checkpoint's top-level file or parts (relative to _delta_log)
    readable: Path | None  # copy with the commits before the checkpoint deleted
    _decoded: DecodedCheckpoint | None = field(default=None, repr=False)

    @property
    def log_dir(self) -> Path:
        return self.shape.path / "_delta_log"

    def decoded(self) -> DecodedCheckpoint:
        """The new checkpoint's files decoded by the suite, once: the writer tests only read them (the
        10,000-files shape takes a second or more to decode, and some twenty tests inspect each output); a
        referenced sidecar that is missing is listed in ``missing``, for CKPT-SIDE-001."""
        if self._decoded is None:
            self._decoded = decode_checkpoint(self.log_dir, self.checkpoint, missing_ok=True)
        return self._decoded

    @property
    def label(self) -> str:
        return f"{self.implementation}:{self.profile.name} on {self.shape.name} ({self.shape.path})"


_CACHE: dict[tuple[str, str, str], WrittenTable] = {}


def attempt(action: Callable[[], object]) -> Failure | None:
    """Run one write or cleanup of an implementation: None, or its failure — which the caller caches with
    the outcome, keyed as a success is, so a harness that crashes runs once, not once a test."""
    try:
        action()
    except (AdapterError, ProtocolViolation) as exc:
        return exc
    return None


def fail_with(label: str, role: str, failure: Failure) -> NoReturn:
    """Fail a test of ``label`` whose ``role``'s write or cleanup failed (:func:`attempt`), with the
    harness's message (a breach as the plugin reports one in a test's call)."""
    if isinstance(failure, ProtocolViolation):
        pytest.fail(f"{label}: protocol violation: {failure}", pytrace=False)
    pytest.fail(f"{label}: the {role} failed: {failure}", pytrace=False)


def new_checkpoint(table: Path, version: int, before: Listing) -> list[str]:
    """The top-level file or parts (relative to ``_delta_log``) of a checkpoint of ``version`` that has a
    file not in ``before``, the listing taken before the write; ``[]`` when there is none."""
    groups = checkpoint_names(table / DELTA_LOG, version)
    new = [names for names in groups.values() if any(n not in before for n in names)]
    return sorted(new[0]) if new else []


def shape_variant(profile: WriterProfile) -> Variant:
    return "v2" if profile.needs_v2_table else "classic"


T = TypeVar("T")
#: The tables this process built first, by key (a source table: shape, variant, directory name; a
#: writer-only case of test_writer_output: its name): their directory and what their build returned.
_TEMPLATES: dict[tuple[str, ...], tuple[Path, object]] = {}


def from_template(
    key: tuple[str, ...], build: Callable[[Path], T], path: Path, factory: pytest.TempPathFactory
) -> T:
    """Copy to ``path`` the table ``build`` made for ``key`` the first time this process asked (in a
    directory of its own, named as ``path``), and return what that build returned. ``copy2`` keeps sizes,
    bytes and modification times."""
    if key not in _TEMPLATES:
        template = factory.mktemp("-".join(key)) / path.name
        _TEMPLATES[key] = (template, build(template))
    template, built = _TEMPLATES[key]
    shutil.copytree(template, path)
    return cast(T, built)


def source_table(
    shape_name: str, variant: Variant, path: Path, factory: pytest.TempPathFactory
) -> BuiltShape:
    """Shape ``shape_name`` in ``variant`` at ``path``: a copy of the one this process built first.

    The builder's clock is fixed and its ids are seeded by the directory's name, so a copy (``copy2``
    keeps modification times) holds the bytes and times a table built at ``path`` would: the
    10,000-file shape's log is then made once per variant, not once per writer profile
    (``benchmarks/MATRIX_RESULTS.md``, stop 28). The expected state is a copy too (0.09 s of CPU for that
    shape's): what one writer's tests do to theirs cannot reach what the next writer is judged against."""
    key = ("shape", shape_name, variant, path.name)
    shape = from_template(key, lambda template: build_shape(shape_name, variant, template), path, factory)
    return dataclasses.replace(shape, path=path, state=copy.deepcopy(shape.state))


def written_table(
    impl: Implementation, profile: WriterProfile, shape_name: str, factory: pytest.TempPathFactory
) -> WrittenTable:
    key = (impl.info.name, profile.name, shape_name)
    if key in _CACHE:
        return _CACHE[key]
    base = factory.mktemp(f"{impl.info.name}-{profile.name}-{shape_name}".replace(":", "_"))
    shape = source_table(shape_name, shape_variant(profile), base / "table", factory)
    before = listing(shape.path)
    error = attempt(lambda: impl.write_checkpoint(shape.path, profile=profile.name, version=shape.version))
    after = listing(shape.path)
    checkpoint = new_checkpoint(shape.path, shape.version, before)
    readable = None
    if checkpoint:
        readable = base / "readable"
        shutil.copytree(shape.path, readable)
        delete_commits_before(readable / "_delta_log", shape.version)
    result = WrittenTable(impl.info.name, profile, shape, before, after, error, checkpoint, readable)
    _CACHE[key] = result
    return result


@pytest.fixture
def written(
    writer: tuple[Implementation, WriterProfile], shape_name: str, tmp_path_factory: pytest.TempPathFactory
) -> WrittenTable:
    impl, profile = writer
    result = written_table(impl, profile, shape_name, tmp_path_factory)
    if result.error is not None:
        fail_with(result.label, "writer", result.error)
    if not result.checkpoint:
        pytest.fail(
            f"{result.label}: the writer reported success but no new checkpoint file appeared at "
            f"version {result.shape.version}",
            pytrace=False,
        )
    return result
