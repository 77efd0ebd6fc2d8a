"""The JSON Schemas under ``spec/schemas/``: load one, or get a validator with cross-references resolved.

Spec: ``spec/README.md`` "JSON Schemas". Every schema has an ``$id`` under
``https://delta-checkpoint-conformance.dev/schemas/``; :func:`registry` maps those ids to the files,
so a ``$ref`` to another schema resolves offline.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_DIR = Path(str(resources.files("spec") / "schemas"))
SCHEMA_TESTS_DIR = Path(str(resources.files("spec") / "schema-tests"))


def schema_paths() -> list[Path]:
    """Every schema file, sorted."""
    return sorted(SCHEMA_DIR.rglob("*.schema.json"))


@cache
def registry() -> Registry[Any]:
    """Every schema of ``spec/schemas/`` under its ``$id``."""
    resources = []
    for path in schema_paths():
        document = json.loads(path.read_text(encoding="utf-8"))
        resources.append((document["$id"], Resource.from_contents(document)))
    return Registry().with_resources(resources)


def schema(relative: str) -> dict[str, Any]:
    """The schema ``spec/schemas/<relative>`` as a JSON object."""
    document: dict[str, Any] = json.loads((SCHEMA_DIR / relative).read_text(encoding="utf-8"))
    return document


def validator(relative: str, *, fragment: str | None = None) -> Draft202012Validator:
    """A validator for ``spec/schemas/<relative>`` (optionally one of its ``$defs`` by JSON pointer)."""
    document = schema(relative)
    if fragment is not None:
        document = {"$ref": document["$id"] + fragment}
    return Draft202012Validator(document, registry=registry())
