"""The bundled Kernel Java harness (``conformance/adapters/kernel_java.py``): it builds, speaks the protocol, reads.

One JVM for the module (a few seconds); the build itself is cached under ``$DELTA_CKPT_CACHE`` by
source and classpath, so only the first run on a machine compiles (about 15 s). Its full behaviour
against the suite is the matrix's business (``conformance/expectations/kernel-java.yaml``).
Under ``CI=true`` a harness that cannot be built fails these tests instead of skipping them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.adapter import Role
from conformance.adapters import kernel_java
from conformance.compare import assert_states_equal
from conformance.plugin import unavailable
from conformance.registry import DEFAULT_IMPLEMENTATIONS
from spec.table_state import TableState

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "fixtures" / "valid" / "v1_classic"


@pytest.fixture(scope="module")
def kernel() -> Iterator[kernel_java.KernelJavaImplementation]:
    try:
        impl = kernel_java.KernelJavaImplementation()
    except (kernel_java.KernelHarnessUnavailable, OSError) as exc:
        unavailable("the Kernel Java harness", str(exc))
    yield impl
    impl.close()


def test_kernel_java_is_a_default_implementation() -> None:
    assert "kernel-java" in DEFAULT_IMPLEMENTATIONS


def test_harness_answers_hello(kernel: kernel_java.KernelJavaImplementation) -> None:
    """hello: the name, the Kernel version of the pinned classpath, the roles and the V1 writer profiles."""
    info = kernel.info
    assert info.name == "kernel-java"
    assert info.version == kernel_java.kernel_version(kernel_java.classpath()), info.version
    assert info.roles == Role.READER | Role.WRITER | Role.CLEANER, info.roles
    assert {(p.name, p.spec, p.naming, p.needs_v2_table) for p in info.profiles} == {
        ("classic", "v1", "classic", False),
        ("classic-on-v2", "v1", "classic", True),
    }, info.profiles
    assert "tombstones" in info.unavailable_fields and info.reads_data and info.reports_checkpoint


def test_harness_reads_a_fixture_from_its_checkpoint(
    kernel: kernel_java.KernelJavaImplementation, tmp_path: Path
) -> None:
    """The latest state of a golden table, read after the commits before its checkpoint are deleted."""
    descriptor = json.loads((CASE / "fixture.json").read_text())
    latest = descriptor["latestVersion"]
    table = tmp_path / "table"
    shutil.copytree(CASE / descriptor["table"], table)
    log = table / "_delta_log"
    checkpoints = sorted(int(p.name.split(".")[0]) for p in log.glob("*.checkpoint.parquet"))
    assert checkpoints, f"{log}: the fixture has no classic checkpoint"
    for commit in log.glob("*.json"):
        if int(commit.name.split(".")[0]) < checkpoints[-1]:
            commit.unlink()
    expected = TableState.from_json(
        json.loads((CASE / "expected" / f"v{latest}" / "table_state.json").read_text())
    )
    result = kernel.read(table, now_ms=descriptor["nowMs"])
    assert result.checkpoint == f"{checkpoints[-1]:020d}.checkpoint.parquet", result.checkpoint
    assert_states_equal(
        expected,
        result.state,
        context=f"{table} v{latest}: fixture (expected) vs kernel-java (actual)",
        ignore=sorted(kernel.info.unavailable_fields),
    )


def test_build_is_cached() -> None:
    """A second build with the same source and classpath returns the cached jar without compiling."""
    jar = kernel_java.build()
    before = jar.stat().st_mtime_ns
    assert kernel_java.build() == jar and jar.stat().st_mtime_ns == before, jar
