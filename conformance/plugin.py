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
NAME=COMMAND`` (repeatable), ``--impl-timeout``, ``--fixtures-dir``, ``--expectations FILE|DIR``, ``--ckpt-shapes``,
``--ckpt-results PATH`` (write ``results.json``), ``--strict-expectations`` (an expectation entry
that matches no test is an error), ``--fail-on must|should|never``.

Under pytest-xdist (``conformance run --workers N``) each worker runs its share and sends every
result to the controller, which writes ``results.json`` in collection order; the tests sharing an
implementation's output stay in one worker (:func:`xdist_group`, :mod:`conformance.scheduling`).

Markers: ``requirement(*ids)`` — every ID must exist in ``spec/requirements.json`` or collection
fails. Each test gets ``user_properties`` (requirement, level, implementation) that JUnit XML and
``results.json`` carry. Implementations that cannot start are skipped with their reason — and
fail the test under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from conformance.adapter import Implementation, Role, WriterProfile, role_names
from conformance.decode.names import DELTA_LOG
from conformance.decode.paths import root_path_text
from conformance.expectations import DEFAULT_DIR as DEFAULT_EXPECTATIONS
from conformance.expectations import Expectations, glob, load_all
from conformance.registry import Registry, build_registry
from conformance.tables.cleanup_cases import CLEANUP_CASES
from conformance.tables.shapes import QUICK_SHAPES, SHAPES
from conformance.verdicts import FAILING, Check, Verdict, requirement_outcome, scored, verdict
from fixtures import FIXTURES_DIR
from spec.requirements import REQUIREMENTS_JSON, requirements_document
from spec.table_state import TableState

#: The suite's version is the package's (``pyproject.toml``), recorded in results.json.
SUITE_VERSION = metadata.version("delta-checkpoint-conformance")
REQUIREMENTS_FILE = REQUIREMENTS_JSON
DEFAULT_FIXTURES = FIXTURES_DIR
_STATE = pytest.StashKey["_PluginState"]()
_CHECKS = pytest.StashKey["Checks"]()
_FAILED_BY_CHECKS = pytest.StashKey[bool]()
#: When the test's set-up started (s since epoch): a result's ``startedAt``.
_SETUP_START = pytest.StashKey[float]()
#: How long the test's set-up took (s): a result's ``setup``.
_SETUP_SECONDS = pytest.StashKey[float]()
#: The longest failure message kept in results.json (a whole state difference fits).
MAX_MESSAGE_CHARS = 20_000


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

    def copy_table(self, target: Path) -> None:
        """Copy the fixture's table to ``target``, ready to read.

        A fixture with a ``tableRootPlaceholder`` spells some file paths absolutely: the placeholder
        in its commit files becomes ``target``'s absolute path (percent-encoded), so those paths name
        files of the copy (:data:`conformance.decode.paths.TABLE_ROOT_TOKEN`).
        """
        shutil.copytree(self.case_dir / self.descriptor["table"], target)
        token = self.descriptor.get("tableRootPlaceholder")
        if token:
            for commit in sorted((target / DELTA_LOG).glob("*.json")):
                commit.write_text(commit.read_text().replace(token, root_path_text(target)))

    def expected_state(self, table: Path) -> TableState:
        """The expected state of this expectation for the copy at ``table`` (placeholder resolved)."""
        text = (self.case_dir / self.expectation["state"]).read_text()
        token = self.descriptor.get("tableRootPlaceholder")
        if token:
            text = text.replace(token, root_path_text(table))
        return TableState.from_json(json.loads(text))


@dataclass
class _PluginState:
    config: pytest.Config
    registry: Registry | None = None
    expectations: dict[str, Expectations] | None = None
    requirements: dict[str, dict[str, Any]] | None = None
    items: dict[str, dict[str, Any]] | None = None
    results: list[dict[str, Any]] | None = None
    started: float = 0.0
    #: Under pytest-xdist, in the controller: the collected test IDs in order, and the implementations
    #: each worker reported (the controller collects nothing and builds no registry itself).
    order: list[str] | None = None
    worker_implementations: list[dict[str, Any]] | None = None
    usage_error: str | None = None

    def get_registry(self) -> Registry:
        if self.registry is None:
            opts = self.config.option
            cross = opts.ckpt_cross_writers
            try:
                self.registry = build_registry(
                    list(opts.ckpt_impl),
                    list(opts.ckpt_impl_cmd),
                    timeout_s=opts.ckpt_impl_timeout,
                    cross_writers=None
                    if cross is None
                    else [w for w in cross.split(",") if w and w != "none"],
                )
            except ValueError as exc:
                raise pytest.UsageError(str(exc)) from None
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
        "--cross-writers",
        dest="ckpt_cross_writers",
        default=None,
        metavar="NAME,…|bundled",
        help="bundled writers whose checkpoints the implementations under test also read live in the cross "
        "tests, without being tested themselves (bundled: reference, delta-spark, deltalake, kernel-java; "
        "default: none — their frozen outputs are fixtures)",
    )
    group.addoption(
        "--fixtures-dir",
        dest="ckpt_fixtures",
        default=None,
        metavar="DIR",
        help="golden tables to read (default: the repository's fixtures/)",
    )
    group.addoption(
        "--expectations",
        "--expectations-dir",
        dest="ckpt_expectations",
        action="append",
        default=[],
        metavar="FILE|DIR",
        help="per-implementation skip/xfail file, or a directory of <implementation>.yaml files "
        "(repeatable; on top of the bundled conformance/expectations/, a later file for an "
        "implementation replaces an earlier one)",
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
        "--fail-on",
        dest="ckpt_fail_on",
        choices=sorted(FAILING),
        default=None,
        help="which failures make the exit status non-zero: must (failed MUST requirements, unexpected "
        "passes and errors), should (also failed SHOULDs) or never; default: every failed test",
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
        "scores(*roles): the only roles (reader, writer, cleaner) whose implementations the test scores",
        "spark: needs a SparkSession (starts a JVM)",
        "delta_spark: needs delta-spark's jars (the oracle)",
        "deltalake: needs the deltalake (delta-rs) Python package",
        "slow: takes more than a few seconds",
    ):
        config.addinivalue_line("markers", line)
    state = _PluginState(config, items={}, results=[], started=time.time())
    config.stash[_STATE] = state
    if not hasattr(config, "workerinput"):  # an xdist worker sends its reports to the controller instead
        config.pluginmanager.register(_ResultCollector(state), "delta-checkpoint-conformance-results")


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
    tested = {n: i for n, i in registry.implementations.items() if n not in registry.cross_writers}
    if "reader_name" in names:
        readers = [n for n, i in tested.items() if Role.READER in i.info.roles]
        readers += list(registry.unavailable)
        metafunc.parametrize("reader_name", readers, ids=readers)
    if "cleaner_name" in names:
        cleaners = [n for n, i in tested.items() if Role.CLEANER in i.info.roles]
        cleaners += list(registry.unavailable)
        metafunc.parametrize("cleaner_name", cleaners, ids=cleaners)
    if "cleanup_case_name" in names:
        metafunc.parametrize("cleanup_case_name", CLEANUP_CASES, ids=list(CLEANUP_CASES))
    if "writer_profile" in names:
        pairs: list[tuple[str, str]] = []
        # The cross writers write only for the cross tests (which also take a reader).
        writers = registry.implementations if "reader_name" in names else tested
        for name, impl in writers.items():
            if Role.WRITER in impl.info.roles:
                pairs += [(name, p.name) for p in impl.info.profiles]
        pairs += [(name, "-") for name in registry.unavailable]
        metafunc.parametrize("writer_profile", pairs, ids=[f"{n}:{p}" for n, p in pairs])
    if "fixture_expectation" in names:
        cases = fixture_expectations(fixtures_dir(metafunc.config))
        metafunc.parametrize("fixture_expectation", cases, ids=[c.id for c in cases])
    if "shape_name" in names:  # every shape: --ckpt-shapes deselects the others (_deselect_shapes)
        metafunc.parametrize("shape_name", SHAPES, ids=list(SHAPES))


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


class Checks:
    """Sub-results of one test, each under one of the requirements the test cites (fixture ``check``).

    ``check(requirement_id, condition, message)`` records the sub-result and returns ``condition``;
    the test goes on, and fails at its end with every failed check's message. results.json then
    scores each requirement by its own checks (:mod:`conformance.verdicts`), so a failed SHOULD part
    does not fail the MUST the test also proves.
    """

    def __init__(self, nodeid: str, cited: list[str]) -> None:
        self.nodeid = nodeid
        self.cited = cited
        self.results: list[Check] = []

    def __call__(self, requirement: str, condition: bool, message: str) -> bool:
        if requirement not in self.cited:
            raise ValueError(f"{self.nodeid}: check({requirement!r}) but the test cites only {self.cited}")
        self.results.append(Check(requirement, bool(condition), message))
        return bool(condition)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.results if not c.passed]


@pytest.fixture
def check(request: pytest.FixtureRequest) -> Checks:
    """Record a sub-result under one requirement: ``check("CKPT-…", condition, message)``."""
    checks = Checks(request.node.nodeid, _item_requirements(request.node))
    request.node.stash[_CHECKS] = checks
    return checks


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


#: ``workerinput`` key: the directory where each xdist worker writes its test groups for the scheduler.
GROUPS_DIR_INPUT = "ckpt_groups_dir"
#: ``workeroutput`` keys: an xdist worker's implementations, and the usage error that stopped it.
IMPLEMENTATIONS_OUTPUT = "ckpt_implementations"
USAGE_ERROR_OUTPUT = "ckpt_usage_error"


def xdist_group(params: dict[str, Any]) -> str | None:
    """The worker group of a test with these parameters: the tests that inspect or read one output of an
    implementation run in one worker, so that each output is made once per run — a writer profile's
    checkpoint of a shape (its writer tests and every reader's cross test), a cleanup case (the case's
    table, every cleaner's cleaned copy, every reader's reads of it).
    Other tests (the readers' fixture tests) go to whichever worker is free."""
    writer = params.get("writer_profile")
    if isinstance(writer, tuple) and "shape_name" in params:
        return f"write-{writer[0]}-{writer[1]}-{params['shape_name']}"
    if "cleanup_case_name" in params:  # the case's table is built once, then every cleaner cleans a copy
        return f"clean-{params['cleanup_case_name']}"
    return None


def _share_groups(config: pytest.Config, groups: dict[str, str]) -> None:
    """In an xdist worker, write the test groups (test ID -> group) where the controller's scheduler reads
    them: the controller collects nothing itself, and xdist's own ``xdist_group`` marks are lost
    with pytest 9 (xdist renames the test by an attribute pytest no longer reads)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or GROUPS_DIR_INPUT not in workerinput:
        return
    target = Path(workerinput[GROUPS_DIR_INPUT]) / f"{workerinput['workerid']}.json"
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(groups))
    partial.replace(target)


def _deselect(
    config: pytest.Config, items: list[pytest.Item], leave_out: Callable[[dict[str, Any]], bool]
) -> None:
    """Leave out, as deselected (not as skips), the tests whose parameters ``leave_out`` picks."""
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (drop if leave_out(getattr(getattr(item, "callspec", None), "params", {})) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _roleless(params: dict[str, Any]) -> bool:
    """A test that needs a role no implementation under test plays ("empty parameter set"): a run tests
    what the implementations' roles allow."""
    return any(
        key in params and not isinstance(params[key], str | tuple)
        for key in ("reader_name", "cleaner_name", "writer_profile")
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    try:
        _prepare_items(config, items)
        _deselect_shapes(config, items)
    except pytest.UsageError as exc:
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is None:
            raise
        # An xdist worker would still hand its tests to the controller, then stop, which the controller
        # reports as a crash: it runs nothing instead, and the controller reports the error (exit status 4).
        workeroutput[USAGE_ERROR_OUTPUT] = str(exc)
        config.hook.pytest_deselected(items=list(items))
        items[:] = []


def _prepare_items(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect what no role allows, check requirement IDs, record each test's metadata and group, apply
    the expectations (skip, xfail) and, with ``--strict-expectations``, refuse stale entries."""
    state = _state(config)
    collected_functions = {item.nodeid.split("[", 1)[0] for item in items}  # before deselection
    _deselect(config, items, _roleless)
    needs_spec = any(item.get_closest_marker("requirement") for item in items) or any(
        "fixture_expectation" in getattr(getattr(item, "callspec", None), "params", {}) for item in items
    )
    known = state.get_requirements() if needs_spec else {}
    unknown: list[str] = []
    involved_names: set[str] = set()
    metadata: dict[str, dict[str, Any]] = {}
    groups: dict[str, str] = {}
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
        group = xdist_group(getattr(getattr(item, "callspec", None), "params", {}))
        if group is not None:
            groups[item.nodeid] = group
    if unknown:
        raise pytest.UsageError(
            "unknown requirement ID(s) (not in spec/requirements.json):\n  " + "\n  ".join(unknown)
        )
    state.items = metadata
    _share_groups(config, groups)
    if not involved_names:
        return
    sources = [DEFAULT_EXPECTATIONS, *(Path(p) for p in config.option.ckpt_expectations)]
    try:
        state.expectations = load_all(sources, sorted(involved_names))
    except ValueError as exc:
        raise pytest.UsageError(f"--expectations: {exc}") from None
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
        # An unused entry is stale unless the test functions it names exist but its implementation takes
        # part in none of them (a reader-only program in a writer test): such an entry cannot apply. An
        # entry naming no collected function at all (a rename, a typo) stays stale.
        functions = collected_functions
        taking_part: dict[str, set[str]] = {}
        for item in items:
            function = item.nodeid.split("[", 1)[0]
            for impl in _involved(item):
                taking_part.setdefault(impl, set()).add(function)

        def applies(implementation: str, patterns: tuple[str, ...]) -> bool:
            named = {f for p in patterns for f in functions if glob(p.split("[", 1)[0]).match(f)}
            return not named or bool(named & taking_part.get(implementation, set()))

        left_out = _left_out_fixture_nodeids(config, items)
        stale = [
            f"{e.implementation}: {entry.kind} {entry.patterns}"
            for e in state.expectations.values()
            for entry in e.unused()
            if applies(e.implementation, entry.patterns)
            and not any(entry.matches(nodeid) for nodeid in left_out.get(e.implementation, ()))
            and e.implementation not in state.get_registry().cross_writers  # not under test here
        ]
        if stale:
            raise pytest.UsageError("expectation entries that match no test:\n  " + "\n  ".join(stale))


def _left_out_fixture_nodeids(config: pytest.Config, items: list[pytest.Item]) -> dict[str, set[str]]:
    """Per implementation, the node ids its fixture tests would have with the bundled fixtures that a
    ``--fixtures-dir`` (a subset, or a directory of one's own) leaves out: an expectation entry for one of
    those is not stale — strictness applies to the selected fixtures only. Empty with the bundled fixtures."""
    directory = fixtures_dir(config)
    if directory.resolve() == DEFAULT_FIXTURES.resolve():
        return {}
    selected = {case.id for case in fixture_expectations(directory)}
    others = [case.id for case in fixture_expectations(DEFAULT_FIXTURES) if case.id not in selected]
    templates: dict[str, set[tuple[str, str]]] = {}  # implementation -> (node id before, after the case id)
    for item in items:
        case = getattr(getattr(item, "callspec", None), "params", {}).get("fixture_expectation")
        if isinstance(case, FixtureExpectation):
            head, _, tail = item.nodeid.rpartition(case.id)
            for implementation in _involved(item):
                templates.setdefault(implementation, set()).add((head, tail))
    return {
        impl: {head + case + tail for head, tail in pairs for case in others}
        for impl, pairs in templates.items()
    }


def _deselect_shapes(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the tests of the shapes ``--ckpt-shapes`` does not choose.

    The writer and cross tests are parametrised over every shape and narrowed here, after the
    expectations were matched: like ``-k``, ``--ckpt-shapes`` narrows what runs, not what entries are
    checked against, so a narrowed run never finds an entry for another shape stale."""
    chosen = set(_shapes(config))
    _deselect(config, items, lambda params: "shape_name" in params and params["shape_name"] not in chosen)


# -- results ------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """A program that broke the subprocess protocol fails the test with the violation alone (the
    suite's traceback would only hide which harness, request and field were at fault); a test whose
    checks failed fails with all their messages."""
    from conformance.adapters.command import ProtocolViolation

    try:
        result = yield
    except ProtocolViolation as exc:
        violation = str(exc)
    else:
        checks = item.stash.get(_CHECKS, None)
        if checks is None or not checks.failed:
            return result
        item.stash[_FAILED_BY_CHECKS] = True
        pytest.fail("\n".join(f"[{c.requirement}] {c.message}" for c in checks.failed), pytrace=False)
    pytest.fail(f"protocol violation: {violation}", pytrace=False)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when == "setup":
        item.stash[_SETUP_START] = report.start
        item.stash[_SETUP_SECONDS] = report.duration
    result = _result(_state(item.config), item, report)
    if result is not None:
        report.__dict__["ckpt_result"] = result  # travels with the report (from an xdist worker too)
        for score in result["scores"]:  # JUnit XML (written from the teardown report): one property per score
            item.user_properties.append(
                ("score", f"{score['requirement']} {score['implementation']}: {score['verdict']}")
            )


class _ResultCollector:
    """Gathers results.json in the process that writes it: the only one, or the pytest-xdist controller,
    which receives every report (with its ``ckpt_result``) and each worker's implementations and order;
    in the controller, it also hands the workers' test groups to the scheduler."""

    def __init__(self, state: _PluginState) -> None:
        self.state = state
        self._groups_dir: Path | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = getattr(report, "ckpt_result", None)
        if result is not None and self.state.results is not None:
            self.state.results.append(result)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.state.order is None:
            self.state.order = list(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[GROUPS_DIR_INPUT] = str(self.groups_dir())

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``--dist loadgroup``: the suite's groups (:func:`xdist_group`) as the scheduler's work units."""
        if config.getoption("dist", None) != "loadgroup":
            return None
        from conformance.scheduling import GroupScheduling

        return GroupScheduling(config, log, self.groups_dir())

    def groups_dir(self) -> Path:
        if self._groups_dir is None:
            self._groups_dir = Path(tempfile.mkdtemp(prefix="ckpt-groups-"))
        return self._groups_dir

    def pytest_unconfigure(self) -> None:
        if self._groups_dir is not None:
            shutil.rmtree(self._groups_dir, ignore_errors=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        output = getattr(node, "workeroutput", {})
        if output.get(USAGE_ERROR_OUTPUT):
            self.state.usage_error = output[USAGE_ERROR_OUTPUT]
        reported = output.get(IMPLEMENTATIONS_OUTPUT)
        if reported is None:
            return
        known = self.state.worker_implementations
        if known is None:
            self.state.worker_implementations = list(reported)
            return
        names = {i["name"]: n for n, i in enumerate(known)}
        for impl in reported:  # an implementation that started in any worker is available
            if impl["name"] not in names:
                known.append(impl)
            elif impl.get("available") and not known[names[impl["name"]]].get("available"):
                known[names[impl["name"]]] = impl


def _outcome(report: pytest.TestReport) -> str:
    if report.when == "setup" and report.skipped:
        return "skipped"
    if report.when == "setup":
        return "error"
    if report.failed and "XPASS(strict)" in str(report.longrepr):
        return "xpassed"
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    return report.outcome


def _message(report: pytest.TestReport) -> str:
    """The whole failure message (every line of a state difference), or the skip reason."""
    longrepr = report.longrepr
    if longrepr is None or report.passed:
        return ""
    if isinstance(longrepr, tuple):
        text = longrepr[2]
    else:
        crash = getattr(longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(longrepr)
    text = text.strip()
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."


def _result(state: _PluginState, item: pytest.Item, report: pytest.TestReport) -> dict[str, Any] | None:
    """The results.json entry of a setup that did not pass or of a call, else None."""
    if report.when not in ("setup", "call") or (report.when == "setup" and report.passed):
        return None
    outcome = _outcome(report)
    meta = (state.items or {}).get(report.nodeid, {})
    message = _message(report)
    checks = item.stash[_CHECKS].results if _CHECKS in item.stash else []
    by_checks = item.stash.get(_FAILED_BY_CHECKS, False)
    roles_in_test: dict[str, str] = {
        role: str(meta[role]).split(":")[0] for role in ("writer", "reader", "cleaner") if role in meta
    }
    known = state.get_requirements() if meta.get("requirements") else {}
    marker = item.get_closest_marker("scores")
    only = [str(role) for role in marker.args] if marker is not None else None
    scores: list[dict[str, str]] = []
    for req in meta.get("requirements", []):
        spec = known.get(req, {})
        level = str(spec.get("level", "MUST"))
        mine = verdict(requirement_outcome(req, outcome, checks, by_checks), level, message)
        for impl in (
            scored(roles_in_test, spec.get("roles", []), only) if roles_in_test else meta["implementations"]
        ):
            scores.append({"requirement": req, "level": level, "implementation": impl, "verdict": mine.value})
    workerinput = getattr(item.config, "workerinput", None)
    result: dict[str, Any] = {
        "nodeid": report.nodeid,
        "outcome": outcome,
        "duration": round(report.duration, 3),
        # the set-up phase apart: a group's shared output (a writer's table) is made in its first test's set-up
        "setup": round(float(item.stash.get(_SETUP_SECONDS, 0.0)), 3),
        # when and where it ran, so a run's schedule can be read afterwards (which worker finished last)
        **({"worker": str(workerinput["workerid"])} if workerinput is not None else {}),
        "startedAt": int(item.stash.get(_SETUP_START, report.start) * 1000),
        "finishedAt": int(report.stop * 1000),
        "requirements": meta.get("requirements", []),
        "implementations": meta.get("implementations", []),
        "expectation": meta.get("expectation"),
        **{k: meta[k] for k in ("writer", "cleaner", "reader", "shape", "fixture") if k in meta},
        "message": message,
        "checks": [c.to_json() for c in checks],
        "scores": scores,
    }
    return result


def _failing(results: list[dict[str, Any]], threshold: str) -> list[str]:
    """Node IDs of the results that fail the run at ``--fail-on threshold``."""
    failing = FAILING[threshold]
    out = []
    for r in results:
        if r["scores"]:
            if any(Verdict(s["verdict"]) in failing for s in r["scores"]):
                out.append(r["nodeid"])
        elif r["outcome"] in ("failed", "error", "xpassed") and threshold != "never":
            out.append(r["nodeid"])  # a test citing no requirement counts at every level
    return out


def _implementations(registry: Registry | None) -> list[dict[str, Any]]:
    """results.json's ``implementations``: each one's facts, or why it is unavailable."""
    if registry is None:
        return []
    impls = []
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
                "crossWriter": name in registry.cross_writers,
            }
        )
    impls += [{"name": n, "available": False, "reason": why} for n, why in registry.unavailable.items()]
    return impls


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the implementations' programs however the session ended: the ``ckpt_registry`` fixture stops them
    after the tests, but a run that stops at collection (a stale expectation, ``--collect-only``) runs none."""
    state = config.stash.get(_STATE, None)
    if state is not None and state.registry is not None:
        state.registry.close()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = _state(session.config)
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller writes results.json
        # as plain JSON values: execnet carries no enums
        workeroutput[IMPLEMENTATIONS_OUTPUT] = json.loads(json.dumps(_implementations(state.registry)))
        return
    if state.usage_error is not None:  # what pytest prints and returns for a usage error in one process
        sys.stderr.write(f"ERROR: {state.usage_error}\n")
        session.exitstatus = exitstatus = pytest.ExitCode.USAGE_ERROR
    threshold = session.config.option.ckpt_fail_on
    failed = exitstatus == pytest.ExitCode.TESTS_FAILED
    if (
        threshold is not None
        and state.results is not None
        and failed
        and not _failing(state.results, threshold)
    ):
        session.exitstatus = exitstatus = pytest.ExitCode.OK  # only failures below the threshold
    target = session.config.option.ckpt_results
    if not target or state.results is None:
        return
    results = state.results
    if state.order is not None:  # xdist: in collection order, as one process runs them
        position = {nodeid: n for n, nodeid in enumerate(state.order)}
        results = sorted(results, key=lambda r: position.get(r["nodeid"], len(position)))
    impls = (
        state.worker_implementations
        if state.worker_implementations is not None
        else _implementations(state.registry)
    )
    document = {
        "suiteVersion": SUITE_VERSION,
        "specVersion": requirements_document(REQUIREMENTS_FILE)["spec_version"],
        "startedAt": int(state.started * 1000),
        "durationSeconds": round(time.time() - state.started, 1),
        "exitStatus": int(exitstatus),
        "failOn": threshold or "any",
        "implementations": impls,
        "results": results,
    }
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
