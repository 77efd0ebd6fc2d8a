"""pytest plugin of delta-checkpoint-conformance (entry point ``pytest11``).

It is loaded in every pytest run of an environment where the package is installed, and stays inert
until a test asks for one of its parameters:

| parameter | parametrised over |
|---|---|
| ``reader_name`` | implementations with the reader role |
| ``writer_profile`` | ``(implementation, profile)`` for every writer profile |
| ``fixture_expectation`` | every expectation of every ``fixtures/**/fixture.json`` |
| ``shape_name`` | source-table shapes (:mod:`conformance.tables.shapes`) |

Options (group "delta-checkpoint-conformance"): ``--impl NAME`` (repeatable), ``--impl-cmd
NAME=COMMAND`` (repeatable), ``--impl-timeout``, ``--fixtures-dir``, ``--expectations-dir``, ``--ckpt-shapes``,
``--ckpt-results PATH`` (write ``results.json``), ``--strict-expectations`` (an expectation entry
that matches no test is an error).

Markers: ``requirement(*ids)`` — every ID must exist in ``spec/requirements.json`` or collection
fails. Each test gets ``user_properties`` (requirement, level, implementation) that JUnit XML and
``results.json`` carry. Implementations that cannot start are skipped with their reason — and
fail the test under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from conformance.adapter import Implementation, Role, WriterProfile, role_names
from conformance.expectations import DEFAULT_DIR as DEFAULT_EXPECTATIONS
from conformance.expectations import Expectations, load_all
from conformance.registry import Registry, build_registry
from conformance.tables.cleanup_cases import CLEANUP_CASES
from conformance.tables.shapes import QUICK_SHAPES, SHAPES
from fixtures import FIXTURES_DIR
from spec.requirements import REQUIREMENTS_JSON, requirements_document

#: The suite's version is the package's (``pyproject.toml``), recorded in results.json.
SUITE_VERSION = metadata.version("delta-checkpoint-conformance")
REQUIREMENTS_FILE = REQUIREMENTS_JSON
DEFAULT_FIXTURES = FIXTURES_DIR
_STATE = pytest.StashKey["_PluginState"]()


@dataclass(frozen=True)
class FixtureExpectation:
    """One expectation of one fixture case, as a test parameter."""

    case_dir: Path
    kind: str
    name: str
    path: str  # relative to the fixtures directory, e.g. "valid/v1_classic"
    descriptor: dict[str, Any]
    expectation: dict[str, Any]

    @property
    def id(self) -> str:
        version = self.expectation["version"]
        return f"{self.path}|{'latest' if version is None else f'v{version}'}"

    @property
    def requirements(self) -> list[str]:
        return list(self.descriptor["requirements"])


@dataclass
class _PluginState:
    config: pytest.Config
    registry: Registry | None = None
    expectations: dict[str, Expectations] | None = None
    requirements: dict[str, dict[str, Any]] | None = None
    items: dict[str, dict[str, Any]] | None = None
    results: list[dict[str, Any]] | None = None
    started: float = 0.0

    def get_registry(self) -> Registry:
        if self.registry is None:
            opts = self.config.option
            self.registry = build_registry(
                list(opts.ckpt_impl), list(opts.ckpt_impl_cmd), timeout_s=opts.ckpt_impl_timeout
            )
        return self.registry

    def get_requirements(self) -> dict[str, dict[str, Any]]:
        if self.requirements is None:
            data = requirements_document(REQUIREMENTS_FILE)
            self.requirements = {r["id"]: r for r in data["requirements"]}
        return self.requirements


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("delta-checkpoint-conformance", "Delta checkpoint conformance suite")
    group.addoption(
        "--impl",
        dest="ckpt_impl",
        action="append",
        default=[],
        metavar="NAME",
        help="implementation to test (repeatable; default: the bundled ones)",
    )
    group.addoption(
        "--impl-cmd",
        dest="ckpt_impl_cmd",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="an implementation speaking the subprocess protocol (repeatable)",
    )
    group.addoption(
        "--impl-timeout",
        dest="ckpt_impl_timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="longest wait for one answer of an --impl-cmd program (default: 600); a program that "
        "does not answer in time fails the test and is restarted",
    )
    group.addoption(
        "--fixtures-dir",
        dest="ckpt_fixtures",
        default=None,
        metavar="DIR",
        help="golden tables to read (default: the repository's fixtures/)",
    )
    group.addoption(
        "--expectations-dir",
        dest="ckpt_expectations",
        default=None,
        metavar="DIR",
        help="per-implementation skip/xfail files (default: conformance/expectations/)",
    )
    group.addoption(
        "--ckpt-shapes",
        dest="ckpt_shapes",
        default="all",
        metavar="all|quick|A,B",
        help="source-table shapes for writer and cross tests",
    )
    group.addoption(
        "--ckpt-results",
        dest="ckpt_results",
        default=None,
        metavar="PATH",
        help="write results.json (spec/schemas/results.schema.json) here",
    )
    group.addoption(
        "--strict-expectations",
        dest="ckpt_strict",
        action="store_true",
        help="an expectation entry that matches no collected test is an error",
    )


def pytest_configure(config: pytest.Config) -> None:
    for line in (
        "requirement(*ids): spec requirement IDs (CKPT-<AREA>-<NNN>) the test proves",
        "spark: needs a SparkSession (starts a JVM)",
        "delta_spark: needs delta-spark's jars (the oracle)",
        "deltalake: needs the deltalake (delta-rs) Python package",
        "slow: takes more than a few seconds",
    ):
        config.addinivalue_line("markers", line)
    config.stash[_STATE] = _PluginState(config, items={}, results=[], started=time.time())


def _state(config: pytest.Config) -> _PluginState:
    return config.stash[_STATE]


def fixtures_dir(config: pytest.Config) -> Path:
    value = config.option.ckpt_fixtures
    return Path(value) if value else DEFAULT_FIXTURES


def fixture_expectations(directory: Path) -> list[FixtureExpectation]:
    out = []
    for descriptor_path in sorted(directory.rglob("fixture.json")):
        descriptor = json.loads(descriptor_path.read_text())
        rel = descriptor_path.parent.relative_to(directory).as_posix()
        for expectation in descriptor["expectations"]:
            out.append(
                FixtureExpectation(
                    descriptor_path.parent,
                    descriptor["kind"],
                    descriptor["name"],
                    rel,
                    descriptor,
                    expectation,
                )
            )
    return out


def _shapes(config: pytest.Config) -> tuple[str, ...]:
    value = config.option.ckpt_shapes
    if value == "all":
        return SHAPES
    if value == "quick":
        return QUICK_SHAPES
    chosen = tuple(s.strip() for s in value.split(",") if s.strip())
    unknown = set(chosen) - set(SHAPES)
    if unknown:
        raise pytest.UsageError(
            f"--ckpt-shapes: unknown shape(s) {sorted(unknown)}; known: {', '.join(SHAPES)}"
        )
    return chosen


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    names = set(metafunc.fixturenames)
    if not names & {
        "reader_name",
        "writer_profile",
        "cleaner_name",
        "fixture_expectation",
        "shape_name",
        "cleanup_case_name",
    }:
        return
    state = _state(metafunc.config)
    registry = state.get_registry()
    if "reader_name" in names:
        readers = [n for n, i in registry.implementations.items() if Role.READER in i.info.roles]
        readers += list(registry.unavailable)
        metafunc.parametrize("reader_name", readers, ids=readers)
    if "cleaner_name" in names:
        cleaners = [n for n, i in registry.implementations.items() if Role.CLEANER in i.info.roles]
        cleaners += list(registry.unavailable)
        metafunc.parametrize("cleaner_name", cleaners, ids=cleaners)
    if "cleanup_case_name" in names:
        metafunc.parametrize("cleanup_case_name", CLEANUP_CASES, ids=list(CLEANUP_CASES))
    if "writer_profile" in names:
        pairs: list[tuple[str, str]] = []
        for name, impl in registry.implementations.items():
            if Role.WRITER in impl.info.roles:
                pairs += [(name, p.name) for p in impl.info.profiles]
        pairs += [(name, "-") for name in registry.unavailable]
        metafunc.parametrize("writer_profile", pairs, ids=[f"{n}:{p}" for n, p in pairs])
    if "fixture_expectation" in names:
        cases = fixture_expectations(fixtures_dir(metafunc.config))
        metafunc.parametrize("fixture_expectation", cases, ids=[c.id for c in cases])
    if "shape_name" in names:
        shapes = _shapes(metafunc.config)
        metafunc.parametrize("shape_name", shapes, ids=list(shapes))


# -- fixtures -----------------------------------------------------------------------------------


def unavailable(what: str, why: str) -> None:
    """Skip loudly a test whose implementation or oracle cannot run — or, under ``CI=true``, fail it.

    The project's own tests use this too (``tests/conftest.py``): one rule for every missing piece.
    """
    message = f"{what} is unavailable: {why}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(
            f"{message} (CI=true: a missing implementation or oracle is a failure, not a skip)", pytrace=False
        )
    pytest.skip(f"SKIPPED LOUDLY — {message}")


@pytest.fixture(scope="session")
def ckpt_registry(request: pytest.FixtureRequest) -> Registry:
    registry = _state(request.config).get_registry()
    request.addfinalizer(registry.close)
    return registry


def get_implementation(registry: Registry, name: str) -> Implementation:
    if name in registry.misbehaving:
        pytest.fail(registry.unavailable[name], pytrace=False)
    if name in registry.unavailable:
        unavailable(f"implementation {name!r}", registry.unavailable[name])
    return registry.implementations[name]


@pytest.fixture
def reader(ckpt_registry: Registry, reader_name: str) -> Implementation:
    return get_implementation(ckpt_registry, reader_name)


@pytest.fixture
def cleaner(ckpt_registry: Registry, cleaner_name: str) -> Implementation:
    return get_implementation(ckpt_registry, cleaner_name)


@pytest.fixture
def writer(ckpt_registry: Registry, writer_profile: tuple[str, str]) -> tuple[Implementation, WriterProfile]:
    impl = get_implementation(ckpt_registry, writer_profile[0])
    return impl, impl.info.profile(writer_profile[1])


# -- collection: requirements, properties, expectations -----------------------------------------


def _involved(item: pytest.Item) -> list[str]:
    params = getattr(item, "callspec", None)
    if params is None:
        return []
    out = []
    if isinstance(params.params.get("writer_profile"), tuple):
        out.append(params.params["writer_profile"][0])
    for key in ("cleaner_name", "reader_name"):
        if isinstance(params.params.get(key), str):  # not NOTSET: no implementation has the role
            out.append(params.params[key])
    return out


def _params(item: pytest.Item) -> dict[str, str]:
    """The suite parameters of a test, for results.json (writer profile, reader, shape, fixture)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    out = {}
    if isinstance(params.get("writer_profile"), tuple):
        out["writer"] = ":".join(params["writer_profile"])
    for key, name in (("cleaner_name", "cleaner"), ("reader_name", "reader")):
        if isinstance(params.get(key), str):
            out[name] = params[key]
    if "cleanup_case_name" in params:
        out["shape"] = params["cleanup_case_name"]
    if "shape_name" in params:
        out["shape"] = params["shape_name"]
    if "fixture_expectation" in params:
        out["fixture"] = params["fixture_expectation"].id
    return out


def _item_requirements(item: pytest.Item) -> list[str]:
    ids: list[str] = []
    for mark in item.iter_markers("requirement"):
        ids += [str(a) for a in mark.args]
    params = getattr(item, "callspec", None)
    if params is not None and "fixture_expectation" in params.params:
        ids += params.params["fixture_expectation"].requirements
    return list(dict.fromkeys(ids))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    state = _state(config)
    needs_spec = any(item.get_closest_marker("requirement") for item in items) or any(
        "fixture_expectation" in getattr(getattr(item, "callspec", None), "params", {}) for item in items
    )
    known = state.get_requirements() if needs_spec else {}
    unknown: list[str] = []
    involved_names: set[str] = set()
    metadata: dict[str, dict[str, Any]] = {}
    for item in items:
        reqs = _item_requirements(item)
        for req in reqs:
            if req not in known:
                unknown.append(f"{item.nodeid}: {req}")
        impls = _involved(item)
        involved_names.update(impls)
        for req in reqs:
            item.user_properties.append(("requirement", req))
            if req in known:
                item.user_properties.append(("level", known[req]["level"]))
        for impl in impls:
            item.user_properties.append(("implementation", impl))
        metadata[item.nodeid] = {"requirements": reqs, "implementations": impls, **_params(item)}
    if unknown:
        raise pytest.UsageError(
            "unknown requirement ID(s) (not in spec/requirements.json):\n  " + "\n  ".join(unknown)
        )
    state.items = metadata
    if not involved_names:
        return
    directory = (
        Path(config.option.ckpt_expectations) if config.option.ckpt_expectations else DEFAULT_EXPECTATIONS
    )
    state.expectations = load_all(directory, sorted(involved_names))
    for item in items:
        for impl in _involved(item):
            expectations = state.expectations.get(impl)
            entry = expectations.match(item.nodeid) if expectations else None
            if entry is None:
                continue
            note = f"[{impl}] {entry.reason}" + (f" ({entry.issue})" if entry.issue else "")
            if entry.kind == "skip":
                item.add_marker(pytest.mark.skip(reason=f"n.a.: {note}"))
            else:
                item.add_marker(pytest.mark.xfail(reason=note, strict=True))
            metadata[item.nodeid].setdefault(
                "expectation",
                {"kind": entry.kind, "reason": entry.reason, "issue": entry.issue, "implementation": impl},
            )
    if config.option.ckpt_strict:
        stale = [
            f"{e.implementation}: {entry.kind} {entry.patterns}"
            for e in state.expectations.values()
            for entry in e.unused()
        ]
        if stale:
            raise pytest.UsageError("expectation entries that match no test:\n  " + "\n  ".join(stale))


# -- results ------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """A program that broke the subprocess protocol fails the test with the violation alone (the
    suite's traceback would only hide which harness, request and field were at fault)."""
    from conformance.adapters.command import ProtocolViolation

    try:
        return (yield)
    except ProtocolViolation as exc:
        violation = str(exc)
    pytest.fail(f"protocol violation: {violation}", pytrace=False)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    _record(_state(item.config), outcome.get_result())


def _record(state: _PluginState, report: pytest.TestReport) -> None:
    if report.when not in ("setup", "call") or (report.when == "setup" and report.passed):
        return
    if state.results is None:
        return
    if report.when == "setup" and report.skipped:
        outcome = "skipped"
    elif report.when == "setup":
        outcome = "error"
    elif hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    else:
        outcome = report.outcome
    if report.failed and "XPASS(strict)" in str(report.longrepr):
        outcome = "xpassed"
    meta = (state.items or {}).get(report.nodeid, {})
    message = ""
    if report.longrepr is not None and outcome in ("failed", "error", "skipped", "xfailed", "xpassed"):
        message = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        message = message.strip().splitlines()[-1][:500] if message.strip() else ""
    state.results.append(
        {
            "nodeid": report.nodeid,
            "outcome": outcome,
            "duration": round(report.duration, 3),
            "requirements": meta.get("requirements", []),
            "implementations": meta.get("implementations", []),
            "expectation": meta.get("expectation"),
            **{k: meta[k] for k in ("writer", "cleaner", "reader", "shape", "fixture") if k in meta},
            "message": message,
        }
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = _state(session.config)
    target = session.config.option.ckpt_results
    if not target or state.results is None:
        return
    registry = state.registry
    impls = []
    if registry is not None:
        for name, impl in registry.implementations.items():
            info = impl.info
            impls.append(
                {
                    "name": name,
                    "version": info.version,
                    "roles": role_names(info.roles),
                    "description": info.description,
                    "available": True,
                    "profiles": [p.name for p in info.profiles],
                }
            )
        impls += [{"name": n, "available": False, "reason": why} for n, why in registry.unavailable.items()]
    document = {
        "suiteVersion": SUITE_VERSION,
        "specVersion": requirements_document(REQUIREMENTS_FILE)["spec_version"],
        "startedAt": int(state.started * 1000),
        "durationSeconds": round(time.time() - state.started, 1),
        "exitStatus": int(exitstatus),
        "implementations": impls,
        "results": state.results,
    }
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
