"""The package boundaries, checked on every import statement (``ast``; function-level and
``TYPE_CHECKING`` imports included). A violation fails with ``file:line``.

| package | must not import |
|---|---|
| ``spec`` | pyspark, py4j, pyarrow, pytest, delta, deltalake, ``reference_impl``, ``conformance``, ``fixtures``, ``tests`` |
| ``reference_impl`` | ``conformance``, ``fixtures``, ``tests``, delta (delta-spark's Python package), deltalake |
| ``conformance`` | ``reference_impl`` (except in ``conformance/adapters/reference.py``), ``fixtures.generator``, ``tests`` |
| anything but ``fixtures/generator`` and ``tests`` | ``fixtures.generator`` |

and the layers inside ``reference_impl``: ``storage`` ← ``log`` ← ``spark`` ← ``read`` ← ``write`` ←
``cleanup`` ← ``cli`` (a layer imports only lower ones; ``storage`` and ``log`` never import ``spark``,
``read``, ``write``, ``cleanup`` or ``cli``); the top-level modules (``errors``, ``progress``, ``hooks``)
import no layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

#: Layers of reference_impl, lowest first; the top-level modules are below every layer.
LAYERS: tuple[str, ...] = ("storage", "log", "spark", "read", "write", "cleanup", "cli")
SPEC_FORBIDDEN = (
    "pyspark",
    "py4j",
    "pyarrow",
    "pytest",
    "delta",
    "deltalake",
    "reference_impl",
    "conformance",
    "fixtures",
    "tests",
)
REFERENCE_FORBIDDEN = ("conformance", "fixtures", "tests", "delta", "deltalake")
REFERENCE_ADAPTER = "conformance/adapters/reference.py"
SCANNED = ("spec", "reference_impl", "conformance", "fixtures", "scripts", "benchmarks")


def module_of(relative: str) -> str:
    parts = relative.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(relative: str, source: str) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in ``source`` (a file at ``relative``)."""
    package = module_of(relative).split(".")
    if not relative.endswith("__init__.py"):
        package = package[:-1]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename=relative)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            out.append((node.lineno, target))
            out += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return out


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _layer(module: str) -> int | None:
    """The layer index of a ``reference_impl`` module; ``-1`` for the top-level modules."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in LAYERS:
        return -1
    return LAYERS.index(parts[1])


def violations(relative: str, source: str) -> list[str]:
    """Every boundary ``source`` (the file at ``relative``, repository-relative) crosses."""
    module = module_of(relative)
    out: list[str] = []
    for line, name in imported(relative, source):
        where = f"{relative}:{line}"
        if _within(module, "spec"):
            out += [f"{where}: spec imports {name}" for bad in SPEC_FORBIDDEN if _within(name, bad)]
        if _within(module, "reference_impl"):
            out += [
                f"{where}: reference_impl imports {name}" for bad in REFERENCE_FORBIDDEN if _within(name, bad)
            ]
            if _within(name, "reference_impl"):
                own, other = _layer(module), _layer(name)
                if own is not None and other is not None and other > own:
                    out.append(f"{where}: {module} (layer {own}) imports the higher layer {name}")
        if _within(module, "conformance"):
            if _within(name, "reference_impl") and relative != REFERENCE_ADAPTER:
                out.append(f"{where}: conformance imports {name} outside {REFERENCE_ADAPTER}")
            if _within(name, "tests"):
                out.append(f"{where}: conformance imports {name}")
        if _within(name, "fixtures.generator") and not (
            _within(module, "fixtures.generator") or _within(module, "tests")
        ):
            out.append(f"{where}: {module} imports {name}")
    return sorted(set(out))


def _python_files() -> list[Path]:
    return sorted(p for root in SCANNED for p in (REPO_ROOT / root).rglob("*.py"))


def test_no_boundary_is_crossed() -> None:
    """No module of spec, reference_impl, conformance, fixtures, scripts or benchmarks crosses a boundary."""
    found = []
    for path in _python_files():
        relative = path.relative_to(REPO_ROOT).as_posix()
        found += violations(relative, path.read_text(encoding="utf-8"))
    assert not found, "package boundaries crossed:\n" + "\n".join(found)


def test_every_package_is_scanned() -> None:
    """The scan sees the packages it guards (a rename would otherwise make the check vacuous)."""
    modules = {module_of(p.relative_to(REPO_ROOT).as_posix()) for p in _python_files()}
    for package in (
        "spec.vocabulary",
        "reference_impl.write.writer",
        "conformance.adapters.reference",
        "conformance.suite.test_cross",
        "fixtures.generator.generate",
    ):
        assert package in modules, f"{package} was not scanned"


@pytest.mark.parametrize(
    ("relative", "source", "expected"),
    [
        ("spec/vocabulary.py", "import pyspark.sql\n", "spec/vocabulary.py:1: spec imports pyspark.sql"),
        ("spec/x.py", "def f():\n    from reference_impl import errors\n", "spec imports reference_impl"),
        (
            "reference_impl/read/snapshot.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from conformance.adapter import Role\n",
            "reference_impl/read/snapshot.py:3: reference_impl imports conformance.adapter",
        ),
        (
            "reference_impl/log/naming.py",
            "from reference_impl.read import snapshot\n",
            "imports the higher layer",
        ),
        (
            "reference_impl/storage/local.py",
            "from ..log import naming\n",
            "imports the higher layer reference_impl.log",
        ),
        ("reference_impl/cli/main.py", "import delta.tables\n", "reference_impl imports delta.tables"),
        (
            "conformance/tables/shapes.py",
            "from reference_impl.write import writer\n",
            "outside conformance/adapters",
        ),
        ("conformance/plugin.py", "from fixtures.generator import generate\n", "imports fixtures.generator"),
    ],
)
def test_the_checker_catches_each_kind_of_crossing(relative: str, source: str, expected: str) -> None:
    """The checker itself can fail: each synthetic bad import is reported with its file and line."""
    found = violations(relative, source)
    assert any(expected in v for v in found), f"{relative}: {found}"


def test_the_checker_allows_what_is_allowed() -> None:
    """Allowed imports are not reported (the reference adapter, lower layers, the top-level modules)."""
    allowed = [
        ("conformance/adapters/reference.py", "from reference_impl.write.writer import write_checkpoint\n"),
        (
            "reference_impl/cleanup/compat.py",
            "from reference_impl.write.writer import write_top_level_file\n",
        ),
        (
            "reference_impl/log/listing.py",
            "from reference_impl.storage import Storage\nfrom reference_impl import errors\n",
        ),
        ("fixtures/generator/registry.py", "from reference_impl.write.writer import write_checkpoint\n"),
        ("conformance/plugin.py", "from fixtures import FIXTURES_DIR\n"),
    ]
    for relative, source in allowed:
        assert violations(relative, source) == [], relative
