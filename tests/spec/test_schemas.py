"""Checks the JSON Schemas of ``spec/schemas/`` against their test cases.

Spec: spec/checkpoints.md sections 11, 12 and 14; spec/README.md ("JSON Schemas").

1. Every schema is a valid JSON Schema draft 2020-12 document with the ``$id`` the spec
   README prescribes.
2. Every case of ``spec/schema-tests/*.json`` (JSON-Schema-Test-Suite layout) validates, or
   fails to validate, as it says. Cross-file ``$ref`` s resolve through a
   ``referencing.Registry`` built from all schemas.
3. Every schema outside the allow-list below has a test file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from spec.schemas import SCHEMA_DIR, SCHEMA_TESTS_DIR, registry, schema_paths

SCHEMAS_DIR = SCHEMA_DIR
ID_PREFIX = "https://delta-checkpoint-conformance.dev/schemas/"

# Schemas that need no file in spec/schema-tests/ (yet). They belong to the conformance
# harness and are written and tested together with it; keep this list short.
SCHEMAS_WITHOUT_TESTS: frozenset[str] = frozenset(
    {
        "table_state.schema.json",  # expected table state of a fixture version
        "fixture.schema.json",  # fixtures/<kind>/<name>/fixture.json
        "results.schema.json",  # results.json of a conformance run
        "expectations.schema.json",  # conformance/expectations/<impl>.yaml
    }
)
# Everything below this directory (the subprocess adapter protocol) is exempt as well.
EXEMPT_SUBDIRECTORIES: tuple[str, ...] = ("harness",)


def _load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _schema_paths() -> list[Path]:
    return schema_paths()


def _relative_name(path: Path) -> str:
    return path.relative_to(SCHEMAS_DIR).as_posix()


@dataclass(frozen=True)
class SchemaCase:
    """One test of a JSON-Schema-Test-Suite style group."""

    test_file: str
    schema: str
    group: str
    description: str
    data: Any
    valid: bool

    @property
    def id(self) -> str:
        return f"{self.test_file}::{self.group}::{self.description}"


def _iter_cases() -> Iterator[SchemaCase]:
    for test_path in sorted(SCHEMA_TESTS_DIR.glob("*.json")):
        groups = _load_json(test_path)
        assert isinstance(groups, list), f"{test_path.name}: expected a list of test groups"
        for group in groups:
            for test in group["tests"]:
                yield SchemaCase(
                    test_file=test_path.name,
                    schema=str(group["schema"]),
                    group=str(group["description"]),
                    description=str(test["description"]),
                    data=test["data"],
                    valid=bool(test["valid"]),
                )


SCHEMA_PATHS = _schema_paths()
CASES = list(_iter_cases())
REGISTRY = registry()


def test_schema_directory_is_not_empty() -> None:
    assert SCHEMA_PATHS, f"no schemas found in {SCHEMAS_DIR}"
    assert CASES, f"no schema test cases found in {SCHEMA_TESTS_DIR}"


@pytest.mark.parametrize("schema_path", SCHEMA_PATHS, ids=_relative_name)
def test_schema_is_valid_draft_2020_12(schema_path: Path) -> None:
    schema = _load_json(schema_path)
    Draft202012Validator.check_schema(schema)
    assert schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema", (
        f"{_relative_name(schema_path)}: $schema must name draft 2020-12"
    )
    schema_id = str(schema.get("$id", ""))
    assert schema_id.startswith(ID_PREFIX) and schema_id.endswith("/" + schema_path.name), (
        f"{_relative_name(schema_path)}: $id must be {ID_PREFIX}<...>/{schema_path.name}, got {schema_id!r}"
    )
    assert schema.get("title"), f"{_relative_name(schema_path)}: a title is required"
    assert schema.get("description"), f"{_relative_name(schema_path)}: a description is required"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_schema_case(case: SchemaCase) -> None:
    schema_path = SCHEMAS_DIR / case.schema
    assert schema_path.is_file(), f"{case.test_file}: group {case.group!r} names unknown schema {case.schema}"
    validator = Draft202012Validator(_load_json(schema_path), registry=REGISTRY)
    errors = sorted(validator.iter_errors(case.data), key=lambda e: list(e.absolute_path))
    if case.valid:
        assert not errors, (
            f"{case.schema}: case {case.description!r} ({case.test_file}) should be valid but fails: "
            + "; ".join(f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors)
        )
    else:
        assert errors, (
            f"{case.schema}: case {case.description!r} ({case.test_file}) should be invalid but validates"
        )


def test_every_schema_has_test_cases() -> None:
    tested = {case.schema for case in CASES}
    missing: list[str] = []
    for path in SCHEMA_PATHS:
        name = _relative_name(path)
        if name in SCHEMAS_WITHOUT_TESTS or name.split("/", 1)[0] in EXEMPT_SUBDIRECTORIES:
            continue
        test_file = SCHEMA_TESTS_DIR / (name.removesuffix(".schema.json") + ".json")
        if not test_file.is_file() or name not in tested:
            missing.append(f"{name} (expected cases in spec/schema-tests/{test_file.name})")
    assert not missing, "schemas without schema tests: " + ", ".join(missing)


def test_every_schema_has_valid_and_invalid_cases() -> None:
    kinds: dict[str, set[bool]] = {}
    for case in CASES:
        kinds.setdefault(case.schema, set()).add(case.valid)
    one_sided = sorted(schema for schema, seen in kinds.items() if seen != {True, False})
    assert not one_sided, f"schemas tested only with valid or only with invalid cases: {one_sided}"
