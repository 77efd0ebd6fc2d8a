"""The package boundaries, checked on every import statement (``ast``; function-level and
``TYPE_CHECKING`` imports included). A violation fails with ``file:line``.

| package | must not import |
|---|---|
| ``spec`` | pyspark, py4j, pyarrow, pytest, delta, deltalake, ``reference_impl``, ``conformance``, ``fixtures``, ``tests`` |
| ``reference_impl`` | ``conformance``, ``fixtures``, ``tests``, delta (delta-spark's Python package), deltalake |
| ``conformance`` | ``reference_impl`` (except in ``conformance/adapters/reference.py``), ``fixtures.generator``, ``tests`` |
| anything but ``fixtures/generator`` and ``tests`` | ``fixtures.generator`` |

and the layers inside ``reference_impl``: ``storage`` ← ``log`` ← ``spark`` ← ``read`` ← ``write`` ←
``cleanup`` ← ``validate`` ← ``cli`` (a layer imports only lower ones; ``storage`` and ``log`` never import ``spark``,
``read``, ``write``, ``cleanup`` or ``cli``); the top-level modules (``errors``, ``progress``, ``hooks``)
import no layer.

File I/O has one home: outside ``reference_impl/storage/`` no module of ``reference_impl`` calls the
OS file API (``open``, ``os.<file function>``, ``shutil`` but ``which``, ``Path.read_*`` /
``write_*`` / ``unlink`` / ``mkdir`` …) or the Hadoop API (``org.apache.hadoop`` through py4j,
``hadoopConfiguration``): every file of a table is reached through a ``Storage``
(:func:`file_api_calls`; :data:`FILE_API_ALLOWED` lists the exceptions, with their reason).

Every third-party import (top-level or inside a function) is of a distribution ``pyproject.toml``
declares — in the core ``dependencies`` or in an extra of the importing module (:data:`EXTRAS_OF`):
the shared development venv has more installed than a fresh one, so an undeclared import passes here
and fails on a clean install (:func:`undeclared_imports`; the standard library is
``sys.stdlib_module_names``, the distribution of a module ``importlib.metadata.packages_distributions()``).
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import tomllib
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

#: Layers of reference_impl, lowest first; the top-level modules are below every layer.
LAYERS: tuple[str, ...] = ("storage", "log", "spark", "read", "write", "cleanup", "validate", "cli")
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
#: The extras, beyond the core dependencies, whose distributions a file (or a directory, ``/``-ended) may
#: import; the longest matching prefix applies, and anything not listed has the core dependencies only.
EXTRAS_OF: dict[str, tuple[str, ...]] = {
    "conformance/adapters/deltalake.py": ("oracles",),  # the deltalake reader and writer under test
    "conformance/tables/real_writers.py": ("oracles",),  # tables deltalake writes for the matrix
    "fixtures/generator/cases_foreign.py": ("oracles",),  # the golden tables deltalake writes
    "benchmarks/": ("oracles", "bench"),  # the deltalake contender; the scaling plot (matplotlib)
    "tests/": ("dev",),  # `pip install -e .[dev]` is the test environment (scripts/bootstrap.sh)
}


def module_of(relative: str) -> str:
    parts = relative.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache  # the boundary and the dependency checks read the same files: each is parsed once
def imported(relative: str, source: str) -> tuple[tuple[int, str], ...]:
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
    return tuple(out)


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


#: os functions that touch the file system.
OS_FILE_FUNCTIONS = frozenset(
    {
        "open", "remove", "unlink", "rename", "replace", "link", "symlink", "scandir", "listdir", "stat",
        "lstat", "mkdir", "makedirs", "rmdir", "removedirs", "utime", "fsync", "walk", "access", "chmod",
        "truncate", "exists", "isdir", "isfile", "getsize", "getmtime", "lexists",
    }
)  # fmt: skip
#: Methods that exist only on ``pathlib.Path`` among the objects reference_impl handles.
PATH_FILE_METHODS = frozenset(
    {
        "read_bytes", "read_text", "write_bytes", "write_text", "unlink", "mkdir", "rmdir", "touch",
        "iterdir", "rglob", "is_dir", "is_file", "exists", "symlink_to", "hardlink_to", "open",
    }
)  # fmt: skip
#: (file, call) pairs outside storage/ that may touch files, and why.
FILE_API_ALLOWED: dict[tuple[str, str], str] = {
    ("reference_impl/cli/main.py", "os.open"): "stdout is redirected to os.devnull after a broken pipe",
    ("reference_impl/spark/session.py", "shutil.rmtree"): "exit_now removes the process's temporary roots, "
    "and a new root the roots of dead processes (own_temp_root: scratch files of a process and its Spark "
    "JVMs, never a table's)",
    ("reference_impl/spark/session.py", "Path.write_text"): "a temporary root's owner file (its pid)",
    ("reference_impl/spark/session.py", "Path.read_text"): "a temporary root's owner file (its pid)",
    ("reference_impl/spark/session.py", "Path.is_dir"): "/proc: is a local cluster's work directory in use",
    ("reference_impl/spark/session.py", "Path.iterdir"): "/proc: is a local cluster's work directory in use",
}


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` of an attribute chain (``?`` for a part that is not a plain name)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


def file_api_calls(relative: str, source: str) -> list[str]:
    """Calls of the OS file API or of the Hadoop API in ``source`` (a module of reference_impl outside storage/)."""
    if not relative.startswith("reference_impl/") or relative.startswith("reference_impl/storage/"):
        return []
    out: list[str] = []
    for node in ast.walk(ast.parse(source, filename=relative)):
        name = None
        if isinstance(node, ast.Call):
            func = _dotted(node.func)
            parts = func.split(".")
            if (
                func in ("open", "io.open")
                or (parts[0] == "os" and parts[-1] in OS_FILE_FUNCTIONS)
                or (parts[0] == "shutil" and func != "shutil.which")
            ):
                name = func
            elif len(parts) > 1 and parts[-1] in PATH_FILE_METHODS and "storage" not in parts[:-1]:
                name = f"Path.{parts[-1]}"  # (a Storage's own is_dir is called on a ``storage``)
        elif isinstance(node, ast.Attribute) and (
            node.attr == "hadoopConfiguration" or (node.attr == "hadoop" and "_jvm" in _dotted(node))
        ):
            name = _dotted(node)
        if name and (relative, name) not in FILE_API_ALLOWED:
            out.append(f"{relative}:{getattr(node, 'lineno', '?')}: {name}")
    return sorted(set(out))


def _python_files(roots: Sequence[str] = SCANNED) -> list[Path]:
    return sorted(p for root in roots for p in (REPO_ROOT / root).rglob("*.py"))


def _normalised(distribution: str) -> str:
    """A distribution name as PEP 503 compares them (``PyYAML`` = ``pyyaml``, ``delta_spark`` = ``delta-spark``)."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


@functools.cache
def declared_dependencies() -> Mapping[str, frozenset[str]]:
    """The distributions ``pyproject.toml`` declares: the core under ``""``, each extra under its name."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups: dict[str, list[str]] = {"": project["dependencies"], **project["optional-dependencies"]}
    name = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
    out: dict[str, frozenset[str]] = {}
    for extra, requirements in groups.items():
        matches = [name.match(requirement) for requirement in requirements]
        assert all(matches), f"pyproject.toml: a requirement of {extra or 'the core'} names no distribution"
        out[extra] = frozenset(_normalised(m[1]) for m in matches if m)
    return out


@functools.cache
def _providers() -> Mapping[str, Sequence[str]]:
    """Top-level module -> the installed distributions that provide it (read once: it scans every one)."""
    return metadata.packages_distributions()


def _extras_of(relative: str) -> tuple[str, ...]:
    prefixes = [p for p in EXTRAS_OF if relative == p or (p.endswith("/") and relative.startswith(p))]
    return EXTRAS_OF[max(prefixes, key=len)] if prefixes else ()


def _is_local(relative: str, top: str) -> bool:
    """``top`` is the project's own: a package at the root, or a module beside a script (benchmarks/)."""
    here = (REPO_ROOT / relative).parent
    return (REPO_ROOT / top / "__init__.py").is_file() or (here / f"{top}.py").is_file()


def undeclared_imports(
    relative: str,
    source: str,
    declared: Mapping[str, frozenset[str]],
    providers: Mapping[str, Sequence[str]],
) -> list[str]:
    """Imports in ``source`` (the file at ``relative``) of a distribution it may not rely on.

    ``declared``: :func:`declared_dependencies`; ``providers``: top-level module -> distributions
    (``importlib.metadata.packages_distributions()``).
    """
    extras = _extras_of(relative)
    allowed = declared[""].union(*(declared[extra] for extra in extras))
    scope = " + ".join(["core", *extras])
    out: list[str] = []
    for line, name in imported(relative, source):
        top = name.split(".")[0]
        if not top or top in sys.stdlib_module_names or _is_local(relative, top):
            continue
        # a module no installed distribution provides (an extra the test environment lacks, as `bench`)
        # is taken to come from the distribution of its own name
        installed = sorted(_normalised(d) for d in providers.get(top, ()))
        distributions = installed or [_normalised(top)]
        if not allowed.intersection(distributions):
            where = sorted(extra or "core" for extra, names in declared.items() if names & set(distributions))
            out.append(
                f"{relative}:{line}: imports {top} (distribution {', '.join(distributions)}"
                f"{'' if installed else ', not installed here'}), not declared in pyproject.toml for {scope} "
                f"(declared in: {', '.join(where) or 'nothing'})"
            )
    return sorted(set(out))


def test_no_boundary_is_crossed() -> None:
    """No module of spec, reference_impl, conformance, fixtures, scripts or benchmarks crosses a boundary."""
    found = []
    for path in _python_files():
        relative = path.relative_to(REPO_ROOT).as_posix()
        found += violations(relative, path.read_text(encoding="utf-8"))
    assert not found, "package boundaries crossed:\n" + "\n".join(found)


def test_file_io_stays_in_storage() -> None:
    """Outside reference_impl/storage/, no module of reference_impl touches files or Hadoop but through a Storage."""
    found = []
    for path in _python_files():
        relative = path.relative_to(REPO_ROOT).as_posix()
        found += file_api_calls(relative, path.read_text(encoding="utf-8"))
    assert not found, "file or Hadoop API used outside reference_impl/storage/:\n" + "\n".join(found)


def test_every_third_party_import_is_a_declared_dependency() -> None:
    """Every import of a third-party module, in any scanned file or test, is of a declared dependency."""
    declared, providers = declared_dependencies(), _providers()
    found = []
    for path in _python_files((*SCANNED, "tests")):
        relative = path.relative_to(REPO_ROOT).as_posix()
        found += undeclared_imports(relative, path.read_text(encoding="utf-8"), declared, providers)
    assert not found, (
        "imports of distributions pyproject.toml does not declare for the module:\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    ("relative", "source", "expected"),
    [
        ("reference_impl/write/x.py", "import numpy\n", "imports numpy (distribution numpy"),
        ("spec/x.py", "def f():\n    from numpy import array\n", "spec/x.py:2: imports numpy"),
        ("reference_impl/read/x.py", "import matplotlib.pyplot\n", "for core (declared in: bench, dev)"),
        ("conformance/plugin.py", "import deltalake\n", "for core (declared in: dev, oracles)"),
        ("benchmarks/x.py", "import hypothesis\n", "for core + oracles + bench (declared in: dev)"),
        ("fixtures/x.py", "import no_such_module\n", "(distribution no-such-module, not installed here)"),
    ],
)
def test_the_dependency_checker_catches_each_kind(relative: str, source: str, expected: str) -> None:
    """The dependency checker can fail: an undeclared, a wrong-extra and an uninstalled import, with the line
    (installed or not: the test environment has the core and `dev`, this venv may have more)."""
    found = undeclared_imports(relative, source, declared_dependencies(), _providers())
    assert any(expected in f for f in found), f"{relative}: {found}"


def test_the_dependency_checker_allows_what_is_declared() -> None:
    """The standard library, the project's own modules, core dependencies and the module's extras pass."""
    declared, providers = declared_dependencies(), _providers()
    allowed = [
        ("reference_impl/x.py", "import json, pyarrow.compute\nfrom pyspark.sql import functions\n"),
        ("reference_impl/x.py", "from . import errors\nfrom reference_impl.log import naming\n"),
        ("conformance/adapters/deltalake.py", "def f():\n    from deltalake import DeltaTable\n"),
        ("benchmarks/x.py", "from synthetic_table import generate\nimport matplotlib\n"),
        ("tests/x.py", "import hypothesis\nfrom tests.support import REPO_ROOT\n"),
    ]
    for relative, source in allowed:
        assert undeclared_imports(relative, source, declared, providers) == [], relative


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("with open(p) as f: pass\n", "open"),
        ("import os\nos.replace(a, b)\n", "os.replace"),
        ("import os\nos.path.exists(p)\n", "os.path.exists"),
        ("import shutil\nshutil.rmtree(p)\n", "shutil.rmtree"),
        ("p.write_bytes(b'')\n", "Path.write_bytes"),
        ("(root / 'x').mkdir()\n", "Path.mkdir"),
        ("spark.sparkContext._jsc.hadoopConfiguration()\n", "hadoopConfiguration"),
        ("fs = spark._jvm.org.apache.hadoop.fs.Path(u)\n", "_jvm.org.apache.hadoop"),
    ],
)
def test_the_file_api_checker_catches_each_kind(source: str, expected: str) -> None:
    """The file-API checker can fail: each call is reported with its line (and nothing in storage/ is)."""
    found = file_api_calls("reference_impl/write/x.py", source)
    assert any(expected in f for f in found), f"{source!r}: {found}"
    assert file_api_calls("reference_impl/storage/x.py", source) == []


def test_the_file_api_checker_allows_storage_calls_and_which() -> None:
    """Calls on a Storage, ``shutil.which`` and the listed exceptions are not reported."""
    source = "import shutil, os\nstorage.mkdirs(d)\nself.storage.delete(p)\nshutil.which('java')\nos.environ.get('X')\n"
    assert file_api_calls("reference_impl/write/x.py", source) == []
    assert file_api_calls("reference_impl/cli/main.py", "import os\nos.open(os.devnull, 1)\n") == []


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
