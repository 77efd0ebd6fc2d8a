"""Render a conformance run: ``results.json`` → ``MATRIX.md`` and ``index.html``.

Two views (OpenTelemetry's compliance matrix and Arrow's producer × consumer grid):

* **requirements × implementations** — per cell the aggregate of every test that cites the
  requirement and involves the implementation: ``fail`` if any failed (or an xfail passed),
  ``xfail`` if any is a known failure, ``pass`` if at least one passed, ``n.a.`` if all were
  skipped, blank if no test exercised it;
* **writers × readers** — from the cross tests: ``passed/total`` per (writer profile, reader).

Also a per-implementation summary: requirements passed / failed / known-failing, by level.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spec.requirements import REQUIREMENTS_JSON as REQUIREMENTS_FILE

_RANK = {"fail": 4, "xfail": 3, "pass": 2, "n.a.": 1}
_SYMBOL = {"pass": "✔ pass", "fail": "✘ fail", "xfail": "⚠ xfail", "n.a.": "n.a.", "": ""}


def _cell_outcome(outcomes: Iterable[str]) -> str:
    best = ""
    for outcome in outcomes:
        value = {
            "passed": "pass",
            "failed": "fail",
            "error": "fail",
            "xpassed": "fail",
            "xfailed": "xfail",
            "skipped": "n.a.",
        }[outcome]
        if not best or _RANK[value] > _RANK[best]:
            best = value
    return best


def requirement_matrix(results: dict[str, Any]) -> tuple[list[str], dict[str, dict[str, str]]]:
    impls = [i["name"] for i in results["implementations"]]
    cells: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in results["results"]:
        for req in r["requirements"]:
            for impl in r["implementations"]:
                cells[(req, impl)].append(r["outcome"])
    matrix: dict[str, dict[str, str]] = defaultdict(dict)
    for (req, impl), outcomes in cells.items():
        matrix[req][impl] = _cell_outcome(outcomes)
    return impls, matrix


def cross_grid(
    results: dict[str, Any], row_key: str = "writer"
) -> tuple[list[str], list[str], dict[tuple[str, str], list[int]]]:
    """(rows, readers, {(row, reader): [passed, xfailed, total]}) from the tests that carry both a
    ``row_key`` (``writer`` for the cross tests, ``cleaner`` for the cleaned-table reads) and a reader."""
    grid: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    rows: list[str] = []
    readers: list[str] = []
    for r in results["results"]:
        if row_key not in r or "reader" not in r:
            continue
        row, reader = r[row_key], r["reader"]
        for name, seen in ((row, rows), (reader, readers)):
            if name not in seen:
                seen.append(name)
        cell = grid[(row, reader)]
        cell[2] += 1
        if r["outcome"] == "passed":
            cell[0] += 1
        elif r["outcome"] == "xfailed":
            cell[1] += 1
    return rows, readers, grid


def summary(results: dict[str, Any], requirements: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    impls, matrix = requirement_matrix(results)
    out: dict[str, dict[str, int]] = {i: defaultdict(int) for i in impls}
    for req, row in matrix.items():
        level = requirements.get(req, {}).get("level", "?")
        for impl, outcome in row.items():
            out[impl][f"{outcome} {level}"] += 1
            out[impl][outcome] += 1
    return {k: dict(v) for k, v in out.items()}


def _load_requirements() -> dict[str, dict[str, Any]]:
    data = json.loads(REQUIREMENTS_FILE.read_text())
    return {r["id"]: r for r in data["requirements"]}


def render_markdown(results: dict[str, Any]) -> str:
    requirements = _load_requirements()
    impls, matrix = requirement_matrix(results)
    counts = summary(results, requirements)
    lines = [
        "# Delta checkpoint conformance matrix",
        "",
        f"Suite {results['suiteVersion']}, spec {results['specVersion']}; {len(results['results'])} test results in "
        f"{results['durationSeconds']} s. Legend: ✔ pass · ✘ fail · ⚠ xfail (known failure, see "
        "`conformance/expectations/`) · n.a. (not applicable / cannot run) · blank (no test).",
        "",
        "## Implementations",
        "",
        "| implementation | version | roles | requirements passed | failed | known failures (xfail) | n.a. |",
        "|---|---|---|---|---|---|---|",
    ]
    for impl in results["implementations"]:
        name = impl["name"]
        if not impl.get("available", True):
            lines.append(f"| {name} | — | — | unavailable: {impl.get('reason', '')} | | | |")
            continue
        c = counts.get(name, {})
        lines.append(
            f"| {name} | {impl['version']} | {', '.join(impl['roles'])} | {c.get('pass', 0)} "
            f"({c.get('pass MUST', 0)} MUST) | {c.get('fail', 0)} | {c.get('xfail', 0)} | {c.get('n.a.', 0)} |"
        )
    for row_key, title in (
        ("writer", "Writers × readers (cross tests"),
        ("cleaner", "Cleaners × readers (oldest remaining and latest version of each cleaned table"),
    ):
        row_names, readers, grid = cross_grid(results, row_key)
        if not row_names:
            continue
        lines += [
            "",
            f"## {title}: passed/total, ⚠ = known failures)",
            "",
            f"| {row_key} \\ reader | " + " | ".join(readers) + " |",
            "|---|" + "---|" * len(readers),
        ]
        for name in row_names:
            cells = []
            for r in readers:
                passed, xfailed, total = grid.get((name, r), [0, 0, 0])
                cells.append("—" if total == 0 else f"{passed}/{total}" + (f" ⚠{xfailed}" if xfailed else ""))
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## Requirements × implementations", ""]
    section = None
    for req_id, req in requirements.items():
        if req["section"] != section:
            section = req["section"]
            lines += [
                "",
                f"### {section}",
                "",
                "| requirement | level | " + " | ".join(impls) + " |",
                "|---|---|" + "---|" * len(impls),
            ]
        row = matrix.get(req_id, {})
        note = " (untestable)" if req.get("untestable") else ""
        cells = [_SYMBOL[row.get(i, "")] for i in impls]
        lines.append(
            f"| [{req_id}](../spec/checkpoints.md#{req_id}){note} | {req['level']} | "
            + " | ".join(cells)
            + " |"
        )
    failures = [r for r in results["results"] if r["outcome"] in ("failed", "error", "xpassed")]
    if failures:
        lines += ["", f"## Failures ({len(failures)})", ""]
        lines += [f"- `{r['nodeid']}` — {r['outcome']}: {r['message']}" for r in failures[:200]]
    return "\n".join(lines) + "\n"


def render_html(markdown_text: str) -> str:
    """A self-contained page: the Markdown tables as HTML tables, cells coloured by outcome."""
    body: list[str] = []
    in_table = False
    for line in markdown_text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if all(set(c) <= set("-") for c in cells):
                continue
            if not in_table:
                body.append("<table>")
                in_table = True
                body.append("<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cells) + "</tr>")
                continue
            row = []
            for c in cells:
                cls = next(
                    (k for k, v in (("pass", "✔"), ("fail", "✘"), ("xfail", "⚠"), ("na", "n.a.")) if v in c),
                    "",
                )
                row.append(f'<td class="{cls}">{html.escape(c)}</td>')
            body.append("<tr>" + "".join(row) + "</tr>")
            continue
        if in_table:
            body.append("</table>")
            in_table = False
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line.lstrip('# '))}</h{level}>")
        elif line.startswith("- "):
            body.append(f"<p class='failure'>{html.escape(line[2:])}</p>")
        elif line.strip():
            body.append(f"<p>{html.escape(line)}</p>")
    if in_table:
        body.append("</table>")
    style = (
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px}th{background:#eee}"
        ".pass{background:#d9f2d9}.fail{background:#f8d0d0}.xfail{background:#fbeec2}.na{color:#888}"
        ".failure{font-family:monospace;font-size:12px}"
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Delta checkpoint conformance</title>"
        f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n"
    )


def write_reports(results_path: Path, out_dir: Path) -> tuple[Path, Path]:
    results = json.loads(results_path.read_text())
    markdown = render_markdown(results)
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / "MATRIX.md"
    md.write_text(markdown)
    page = out_dir / "index.html"
    page.write_text(render_html(markdown))
    return md, page
