"""Load the JSON Schemas under ``spec/schemas/`` (with cross-references resolved)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "spec" / "schemas"


@cache
def _registry() -> Registry:
    resources = []
    for path in SCHEMA_DIR.rglob("*.schema.json"):
        document = json.loads(path.read_text())
        resources.append((document["$id"], Resource.from_contents(document)))
    return Registry().with_resources(resources)


def schema(relative: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((SCHEMA_DIR / relative).read_text())
    return document


def validator(relative: str, *, fragment: str | None = None) -> Draft202012Validator:
    """A validator for ``spec/schemas/<relative>`` (optionally one of its ``$defs`` by JSON pointer)."""
    document = schema(relative)
    if fragment is not None:
        document = {"$ref": document["$id"] + fragment}
    return Draft202012Validator(document, registry=_registry())
