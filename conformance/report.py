"""Render a conformance run: ``results.json`` → ``MATRIX.md`` and ``index.html``.

Two views (OpenTelemetry's compliance matrix and Arrow's producer × consumer grid):

* **requirements × implementations** — per cell the worst verdict (:mod:`conformance.verdicts`) of
  every score of the requirement for the implementation: ``✘ MUST`` / ``✘ SHOULD`` (failed, levels
  apart), ``○ MAY`` (a MAY not implemented), ``⚠ xfail`` (a known failure), ``✔ pass`` (at least one
  test compared and passed), ``not compared``, ``n.a.``, blank if no test scored it;
* **writers × readers** — from the cross tests: ``passed/total`` per (writer profile, reader).

Also a per-implementation summary by verdict, and every failure with its whole message.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conformance.verdicts import Verdict
from spec.requirements import REQUIREMENTS_JSON as REQUIREMENTS_FILE

#: Worst first: a cell shows the worst verdict of its scores.
_RANK: tuple[Verdict, ...] = (
    Verdict.ERROR,
    Verdict.UNEXPECTED_PASS,
    Verdict.FAILED_MUST,
    Verdict.FAILED_SHOULD,
    Verdict.MAY_NOT_IMPLEMENTED,
    Verdict.KNOWN_FAILURE,
    Verdict.PASSED,
    Verdict.NOT_COMPARED,
    Verdict.NOT_APPLICABLE,
)
_SYMBOL: dict[Verdict, str] = {
    Verdict.ERROR: "✘ error",
    Verdict.UNEXPECTED_PASS: "✘ xpass",
    Verdict.FAILED_MUST: "✘ MUST",
    Verdict.FAILED_SHOULD: "✘ SHOULD",
    Verdict.MAY_NOT_IMPLEMENTED: "○ MAY",
    Verdict.KNOWN_FAILURE: "⚠ xfail",
    Verdict.PASSED: "✔ pass",
    Verdict.NOT_COMPARED: "not compared",
    Verdict.NOT_APPLICABLE: "n.a.",
}
#: Summary columns: (title, verdicts counted).
_COLUMNS: tuple[tuple[str, Verdict], ...] = (
    ("passed", Verdict.PASSED),
    ("failed MUST", Verdict.FAILED_MUST),
    ("failed SHOULD", Verdict.FAILED_SHOULD),
    ("MAY not implemented", Verdict.MAY_NOT_IMPLEMENTED),
    ("known failures (xfail)", Verdict.KNOWN_FAILURE),
    ("unexpected passes", Verdict.UNEXPECTED_PASS),
    ("errors", Verdict.ERROR),
    ("not compared", Verdict.NOT_COMPARED),
    ("n.a.", Verdict.NOT_APPLICABLE),
)


def _worst(verdicts: Iterable[Verdict]) -> Verdict:
    return min(verdicts, key=_RANK.index)


def requirement_matrix(results: dict[str, Any]) -> tuple[list[str], dict[str, dict[str, Verdict]]]:
    """(implementations, {requirement: {implementation: worst verdict}}) from the results' scores."""
    impls = [i["name"] for i in results["implementations"]]
    cells: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for r in results["results"]:
        for score in r.get("scores", []):
            cells[(score["requirement"], score["implementation"])].append(Verdict(score["verdict"]))
    matrix: dict[str, dict[str, Verdict]] = defaultdict(dict)
    for (req, impl), verdicts in cells.items():
        matrix[req][impl] = _worst(verdicts)
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


def summary(results: dict[str, Any]) -> dict[str, dict[Verdict, int]]:
    """Per implementation: how many requirements have each (worst) verdict."""
    impls, matrix = requirement_matrix(results)
    out: dict[str, dict[Verdict, int]] = {i: defaultdict(int) for i in impls}
    for row in matrix.values():
        for impl, outcome in row.items():
            out.setdefault(impl, defaultdict(int))[outcome] += 1
    return {k: dict(v) for k, v in out.items()}


def _load_requirements() -> dict[str, dict[str, Any]]:
    data = json.loads(REQUIREMENTS_FILE.read_text())
    return {r["id"]: r for r in data["requirements"]}


def render_markdown(results: dict[str, Any]) -> str:
    requirements = _load_requirements()
    impls, matrix = requirement_matrix(results)
    counts = summary(results)
    lines = [
        "# Delta checkpoint conformance matrix",
        "",
        f"Suite {results['suiteVersion']}, spec {results['specVersion']}; {len(results['results'])} test results in "
        f"{results['durationSeconds']} s; exit status {results['exitStatus']} (--fail-on "
        f"{results.get('failOn', 'any')}). Legend: ✔ pass · ✘ MUST / ✘ SHOULD (failed, by level) · ○ MAY (not "
        "implemented) · ⚠ xfail (known failure, see the expectation files) · ✘ xpass (a known failure now "
        "passes) · not compared (the test ran but compared nothing) · n.a. (not applicable / cannot run) · "
        "blank (no test). A requirement scores only the implementation in one of its roles.",
        "",
        "## Implementations: requirements by verdict",
        "",
        "| implementation | version | roles | " + " | ".join(title for title, _ in _COLUMNS) + " |",
        "|---|---|---|" + "---|" * len(_COLUMNS),
    ]
    for impl in results["implementations"]:
        name = impl["name"]
        if not impl.get("available", True):
            lines.append(
                f"| {name} | — | — | unavailable: {impl.get('reason', '')} |" + " |" * (len(_COLUMNS) - 1)
            )
            continue
        c = counts.get(name, {})
        lines.append(
            f"| {name} | {impl['version']} | {', '.join(impl['roles'])}"
            + (" (cross writer only: not scored)" if impl.get("crossWriter") else "")
            + " | "
            + " | ".join(str(c.get(v, 0)) for _, v in _COLUMNS)
            + " |"
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
        note = (
            " (withdrawn)"
            if req.get("status") == "withdrawn"
            else " (untestable)"
            if req.get("untestable")
            else ""
        )
        cells = [_SYMBOL[row[i]] if i in row else "" for i in impls]
        lines.append(
            f"| [{req_id}](../spec/checkpoints.md#{req_id}){note} | {req['level']} | "
            + " | ".join(cells)
            + " |"
        )
    failures = [r for r in results["results"] if r["outcome"] in ("failed", "error", "xpassed")]
    if failures:
        lines += ["", f"## Failures ({len(failures)})", ""]
        for r in failures[:200]:
            failed = sorted(
                {
                    f"{s['verdict']} {s['requirement']}"
                    for s in r.get("scores", [])
                    if s["verdict"] != "passed"
                }
            )
            lines += [
                f"- `{r['nodeid']}` — {r['outcome']}: {', '.join(failed) or 'no requirement'}",
                "",
                "```",
            ]
            lines += [*r["message"].splitlines(), "```", ""]
    return "\n".join(lines) + "\n"


_CSS_CLASSES = (
    ("pass", "✔"),
    ("fail", "✘"),
    ("may", "○"),
    ("xfail", "⚠"),
    ("na", "n.a."),
    ("na", "not compared"),
)


def render_html(markdown_text: str) -> str:
    """A self-contained page: the Markdown tables as HTML tables, cells coloured by outcome."""
    body: list[str] = []
    in_table = False
    pre: list[str] | None = None
    for line in markdown_text.splitlines():
        if line == "```":
            if pre is None:
                pre = []
            else:
                body.append(f"<pre>{html.escape(chr(10).join(pre))}</pre>")
                pre = None
            continue
        if pre is not None:
            pre.append(line)
            continue
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
                cls = next((k for k, v in _CSS_CLASSES if v in c), "")
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
        ".pass{background:#d9f2d9}.fail{background:#f8d0d0}.xfail{background:#fbeec2}.may{background:#e4e4f8}"
        ".na{color:#888}pre{font-size:12px;background:#f6f6f6;padding:4px}"
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
