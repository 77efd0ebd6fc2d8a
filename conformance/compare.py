"""Compare two :class:`~spec.table_state.TableState`\\ s field by field, readably.

Every test that compares readers goes through :func:`assert_states_equal`, so a failure always
says *which* file differs in *which* field, which files are missing or extra (by path), and which
protocol / metadata / txn / domain field differs — never just "the dicts are not equal".

Field selection:

* ``fields`` — what to compare (``None``: everything). Entries are top-level names
  (:data:`TOP_LEVEL_FIELDS`) or ``"<top>.<field>"`` for one field of the protocol, the metadata, or
  of every file / tombstone / txn / domain (``"files.size"``, ``"metadata.configuration"``).
* ``ignore`` — dotted paths to leave out, at any depth: ``"tombstones"``, ``"files.tags"``,
  ``"files.stats.tightBounds"`` (a key inside every file's ``stats``). Readers that cannot provide
  a field say so in ``TableState.source["unavailable"]``; :func:`unavailable_fields` collects that
  from both states so callers can pass it straight to ``ignore``.

Equality rules beyond plain ``==``:

* ``metadata.schemaString`` compares the parsed JSON (two serialisations of one schema are equal);
* files and tombstones are matched by ``(path, deletion-vector id)``, or by ``path`` alone when the
  deletion vector's identity fields are not compared; given the table ``root`` (its URI), ``path``
  is the canonical form of :func:`conformance.decode.paths.canonical_path` (spec ``CKPT-CONTENT-014``,
  ``CKPT-CONTENT-003``: every spelling of one file is one logical file), so a reader reporting
  ``part=p0/./x`` for ``part=p0/x`` agrees and one reporting another file does not; without ``root``
  paths compare as written;
* txns are matched by ``appId``, domains by ``domain``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from conformance.decode.paths import canonical_path
from spec.table_state import (
    DV_FIELDS,
    SUB_FIELDS,
    TOP_LEVEL_FIELDS,
    TableState,
    dv_id,
)

#: The deletion-vector fields that make up its identity (``dv_id``).
DV_IDENTITY_FIELDS: tuple[str, ...] = ("storageType", "pathOrInlineDv", "offset")
DEFAULT_MAX_DIFFS = 20
_MAX_VALUE_CHARS = 160


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 3] + "..."


def unavailable_fields(*states: TableState) -> list[str]:
    """The union of ``source["unavailable"]`` of ``states`` (fields some reader cannot provide)."""
    out: set[str] = set()
    for state in states:
        out.update(str(f) for f in state.source.get("unavailable", ()))
    return sorted(out)


def _selection(fields: Collection[str] | None) -> dict[str, set[str] | None]:
    """``{top: None (all sub-fields) | {sub, ...}}`` for the requested ``fields``."""
    if fields is None:
        return dict.fromkeys(TOP_LEVEL_FIELDS)
    selected: dict[str, set[str] | None] = {}
    for entry in fields:
        top, _, sub = entry.partition(".")
        if top not in TOP_LEVEL_FIELDS:
            raise ValueError(f"unknown TableState field {entry!r}; known: {', '.join(TOP_LEVEL_FIELDS)}")
        if not sub:
            selected[top] = None
            continue
        if top not in SUB_FIELDS or sub.split(".")[0] not in SUB_FIELDS[top]:
            raise ValueError(f"unknown TableState field {entry!r}")
        current = selected.get(top, set())
        if current is not None:
            current.add(sub.split(".")[0])
            selected[top] = current
    return selected


def _ignore_tree(ignore: Iterable[str]) -> dict[str, Any]:
    """Dotted paths as a nested dict; the value ``True`` means "ignore this whole subtree"."""
    tree: dict[str, Any] = {}
    for entry in sorted(ignore, key=lambda e: e.count(".")):
        node = tree
        parts = entry.split(".")
        for i, part in enumerate(parts):
            if node.get(part) is True:
                break  # an ancestor is already ignored entirely
            if i == len(parts) - 1:
                node[part] = True
            else:
                node = node.setdefault(part, {})
    return tree


def _is_ignored(tree: Mapping[str, Any], key: str) -> bool:
    return tree.get(key) is True


def _subtree(tree: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    sub = tree.get(key)
    return sub if isinstance(sub, Mapping) else {}


def _prune(value: Any, tree: Mapping[str, Any]) -> Any:
    """``value`` without the keys ``tree`` ignores (recursively, dicts only)."""
    if not tree or not isinstance(value, Mapping):
        return value
    return {k: _prune(v, _subtree(tree, k)) for k, v in value.items() if not _is_ignored(tree, k)}


def _sub_names(top: str, selected: set[str] | None, tree: Mapping[str, Any]) -> list[str]:
    names = list(SUB_FIELDS[top]) if selected is None else [n for n in SUB_FIELDS[top] if n in selected]
    return [n for n in names if not _is_ignored(tree, n)]


def _equal(field: str, a: Any, b: Any) -> bool:
    if field == "schemaString" and isinstance(a, str) and isinstance(b, str):
        try:
            return bool(json.loads(a) == json.loads(b))
        except ValueError:
            return a == b
    return bool(a == b)


def _diff_mapping_field(label: str, a: Any, b: Any) -> list[str]:
    """Key-level differences of two string maps (``configuration``, ``partitionValues``)."""
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        return [f"{label}: expected {_short(a)}, actual {_short(b)}"]
    out = []
    for key in sorted(set(a) | set(b), key=str):
        if key not in b:
            out.append(f"{label}[{key!r}]: expected {_short(a[key])}, actual missing")
        elif key not in a:
            out.append(f"{label}[{key!r}]: expected missing, actual {_short(b[key])}")
        elif a[key] != b[key]:
            out.append(f"{label}[{key!r}]: expected {_short(a[key])}, actual {_short(b[key])}")
    return out


def _diff_record(
    label: str, a: Mapping[str, Any], b: Mapping[str, Any], names: list[str], tree: Mapping[str, Any]
) -> list[str]:
    out = []
    for name in names:
        sub_tree = _subtree(tree, name)
        va, vb = _prune(a.get(name), sub_tree), _prune(b.get(name), sub_tree)
        if _equal(name, va, vb):
            continue
        if name in ("configuration", "partitionValues", "options") and va is not None and vb is not None:
            out.extend(_diff_mapping_field(f"{label}.{name}", va, vb))
        else:
            out.append(f"{label}.{name}: expected {_short(va)}, actual {_short(vb)}")
    return out


def _diff_keyed(
    top: str,
    expected: list[dict[str, Any]],
    actual: list[dict[str, Any]],
    names: list[str],
    tree: Mapping[str, Any],
    key: Callable[[Mapping[str, Any]], str],
) -> list[str]:
    """Entries matched by ``key``: missing, extra, duplicate keys, then field differences of each match."""

    def index(entries: list[dict[str, Any]], side: str, out: list[str]) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = {}
        for entry in entries:
            k = key(entry)
            if k in result:
                out.append(f"{top}: {side} has {k} more than once")
            result[k] = entry
        return result

    out: list[str] = []
    exp, act = index(expected, "expected", out), index(actual, "actual", out)
    missing = sorted(set(exp) - set(act))
    extra = sorted(set(act) - set(exp))
    if missing or extra:
        out.append(
            f"{top}: expected {len(exp)}, actual {len(act)} ({len(missing)} missing, {len(extra)} extra)"
        )
    out.extend(f"{top}: missing in actual: {k}" for k in missing)
    out.extend(f"{top}: extra in actual: {k}" for k in extra)
    for k in sorted(set(exp) & set(act)):
        out.extend(_diff_record(f"{top}[{k}]", exp[k], act[k], names, tree))
    return out


def _file_key_fn(
    names: list[str], tree: Mapping[str, Any], root: str | None
) -> Callable[[Mapping[str, Any]], str]:
    """A file's identity: its path (canonical under ``root``, CKPT-CONTENT-014) and deletion-vector id."""
    dv_tree = _subtree(tree, "deletionVector")
    dv_compared = "deletionVector" in names and not any(_is_ignored(dv_tree, f) for f in DV_IDENTITY_FIELDS)

    def key(entry: Mapping[str, Any]) -> str:
        path = str(entry.get("path"))
        if root is not None:
            path = canonical_path(path, root)
        dv = dv_id(entry.get("deletionVector")) if dv_compared else None
        return f"{path} (dv {dv})" if dv else path

    return key


def diff_states(
    expected: TableState,
    actual: TableState,
    *,
    fields: Collection[str] | None = None,
    ignore: Collection[str] = (),
    root: str | None = None,
) -> list[str]:
    """Human-readable differences between two states on the selected fields; ``[]`` when equal.

    ``fields`` selects what is compared (``None``: everything); ``ignore`` removes dotted paths at
    any depth (see the module docs). ``source`` is never compared. ``root``, the URI of the table
    both states describe, makes file identity and ``path`` compare canonical forms (CKPT-CONTENT-014).
    """
    selection = _selection(fields)
    tree = _ignore_tree(ignore)
    out: list[str] = []
    for top in TOP_LEVEL_FIELDS:
        if top not in selection or _is_ignored(tree, top):
            continue
        top_tree = _subtree(tree, top)
        if top == "version":
            if expected.version != actual.version:
                out.append(f"version: expected {expected.version}, actual {actual.version}")
            continue
        names = _sub_names(top, selection[top], top_tree)
        if top == "protocol":
            out.extend(_diff_record("protocol", expected.protocol, actual.protocol, names, top_tree))
        elif top == "metadata":
            out.extend(_diff_record("metadata", expected.metadata, actual.metadata, names, top_tree))
        elif top in ("files", "tombstones"):
            exp_list = expected.files if top == "files" else expected.tombstones
            act_list = actual.files if top == "files" else actual.tombstones
            key = _file_key_fn(names, top_tree, root)
            if root is not None:  # matched by canonical path: the spelling is not a difference
                names = [n for n in names if n != "path"]
            out.extend(_diff_keyed(top, exp_list, act_list, names, top_tree, key))
        elif top == "txns":
            out.extend(
                _diff_keyed(top, expected.txns, actual.txns, names, top_tree, lambda t: str(t.get("appId")))
            )
        else:
            out.extend(
                _diff_keyed(
                    top,
                    expected.domain_metadata,
                    actual.domain_metadata,
                    names,
                    top_tree,
                    lambda d: str(d.get("domain")),
                )
            )
    return out


def assert_states_equal(
    expected: TableState,
    actual: TableState,
    *,
    context: str,
    fields: Collection[str] | None = None,
    ignore: Collection[str] = (),
    root: str | None = None,
    max_diffs: int = DEFAULT_MAX_DIFFS,
) -> None:
    """Raise ``AssertionError`` listing (at most ``max_diffs``) differences, prefixed by ``context``.

    ``context`` should name the table and the two readers, e.g.
    ``"/tmp/t (v2-json) v5: reference reader (expected) vs delta-spark (actual)"``; ``root`` is the
    table's URI, to compare file paths canonically (:func:`diff_states`).
    """
    diffs = diff_states(expected, actual, fields=fields, ignore=ignore, root=root)
    if not diffs:
        return
    lines = [f"{context}: {len(diffs)} difference(s)"]
    lines += [f"  - {d}" for d in diffs[:max_diffs]]
    if len(diffs) > max_diffs:
        lines.append(f"  ... and {len(diffs) - max_diffs} more")
    if ignore:
        lines.append(f"  (not compared: {', '.join(sorted(ignore))})")
    raise AssertionError("\n".join(lines))


__all__ = [
    "DV_FIELDS",
    "SUB_FIELDS",
    "TOP_LEVEL_FIELDS",
    "assert_states_equal",
    "diff_states",
    "unavailable_fields",
]
