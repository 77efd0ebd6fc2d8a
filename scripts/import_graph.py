"""Print the package-level import graph of the project as a Mermaid diagram (``ast`` only, no graphviz).

Usage::

    python scripts/import_graph.py                   # spec, reference_impl, conformance, fixtures
    python scripts/import_graph.py --depth 1         # top-level packages only
    python scripts/import_graph.py --with-tests      # tests/ as one more node

Every ``.py`` file under the roots is parsed; every ``import`` and ``from … import`` statement
(function-level and ``TYPE_CHECKING`` ones included) whose target is inside the roots becomes an
edge between the *packages* of the two modules: a module's package is its dotted name cut to
``--depth`` parts, where a module directly inside a package counts as that package
(``reference_impl.log.naming`` → ``reference_impl.log``; ``reference_impl.errors`` →
``reference_impl``). Edges inside one package are not drawn; the label is the number of import
statements.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ROOTS = ("spec", "reference_impl", "conformance", "fixtures")


def module_name(path: Path) -> str:
    """The dotted module name of ``path`` (relative to the repository root)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(dotted: str) -> bool:
    return (ROOT.joinpath(*dotted.split(".")) / "__init__.py").is_file()


def package_of(dotted: str, depth: int) -> str:
    """``dotted`` cut to the package it belongs to, at most ``depth`` parts deep."""
    parts = dotted.split(".")
    for size in range(min(depth, len(parts)), 0, -1):
        candidate = ".".join(parts[:size])
        if is_package(candidate) or size == 1:
            return candidate
    return parts[0]


def imports_of(path: Path) -> list[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            out.append(target)
            out += [f"{target}.{alias.name}" for alias in node.names]
    return out


def graph(roots: tuple[str, ...], depth: int) -> Counter[tuple[str, str]]:
    edges: Counter[tuple[str, str]] = Counter()
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            source = package_of(module_name(path), depth)
            targets = set()
            for name in imports_of(path):
                if name.split(".")[0] in roots:
                    target = package_of(name, depth)
                    if target != source:
                        targets.add(target)
            for target in targets:
                edges[(source, target)] += 1
    return edges


def mermaid(edges: Counter[tuple[str, str]]) -> str:
    nodes = sorted({n for edge in edges for n in edge})
    ids = {n: n.replace(".", "_") for n in nodes}
    lines = ["```mermaid", "graph LR"]
    lines += [f'  {ids[n]}["{n}"]' for n in nodes]
    lines += [f"  {ids[a]} -->|{count}| {ids[b]}" for (a, b), count in sorted(edges.items())]
    lines.append("```")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=2, help="package depth of a node (default: 2)")
    parser.add_argument("--with-tests", action="store_true", help="include tests/ as a root")
    args = parser.parse_args(argv)
    roots = tuple(r for r in DEFAULT_ROOTS if (ROOT / r).is_dir())
    if args.with_tests:
        roots += ("tests",)
    print(mermaid(graph(roots, args.depth)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
