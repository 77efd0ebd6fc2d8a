"""The checkpoint benchmark's reports, rendered from committed results.json files (no run, no Spark).

``benchmarks/run_checkpoint_bench.py --render`` re-renders a run's RESULTS.md and scaling plot; a run of
whole-command contenders only (``cli-*``) has no size to plot, so its report has neither a scaling table nor
a link to a plot. ``--merge`` puts several runs into one scaling table and plot, every figure labelled with
its run and commit and none combined across runs (issue #12: time vs size, the 10M figure from its own run).
"""

from __future__ import annotations

import json
import shutil
import statistics
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support import REPO_ROOT
from tests.support.scripts import loaded_script

BENCH = REPO_ROOT / "benchmarks"
WALL_ONLY = BENCH / "small-table" / "stop24" / "idle" / "results.json"


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    """The script as a module (:func:`~tests.support.scripts.loaded_script`)."""
    with loaded_script(BENCH / "run_checkpoint_bench.py") as module:
        yield module


def _median(raw: dict[str, Any], contender: str, adds: int) -> float:
    figures = [r["op_s"] for r in raw["runs"] if (r["contender"], r["adds"]) == (contender, adds) and r["ok"]]
    assert figures, f"no run of {contender} at {adds} in {raw['command']}"
    return float(statistics.median(figures))


def _check_lines(bench: ModuleType, points: list[Any], raws: dict[str | None, dict[str, Any]]) -> list[Any]:
    """The lines of the plot of ``points``: each one run's (``raws`` by run label), through every size its
    contender has in that run, in increasing size, at that run's median there; returned for more checks."""
    lines = bench.plot_lines(points)
    drawn = {(c, run, p.adds) for c, run, mine in lines for p in mine}
    assert drawn == {(p.contender, p.run, p.adds) for p in points}, f"points not drawn once: {lines}"
    for c, run, mine in lines:
        sizes = [p.adds for p in mine]
        assert sizes == sorted(set(sizes)), f"the line of {c} ({run}) goes back: sizes {sizes}"
        for p in mine:
            assert p.run == run and p.median == _median(raws[run], c, p.adds), f"{c} ({run}) at {p.adds}: {p}"
    return list(lines)


def test_wall_only_run_links_no_plot(bench: ModuleType, tmp_path: Path) -> None:
    """A run of ``cli-checkpoint``/``cli-snapshot`` only: no scaling table, no plot file, no link to one —
    rendered alone or merged."""
    raw = tmp_path / "results.json"
    shutil.copy(WALL_ONLY, raw)
    assert {r["adds"] for r in json.loads(raw.read_text())["runs"]} == {-1}, f"{WALL_ONLY} is not wall-only"
    bench.render(raw, tmp_path / "RESULTS.md")
    bench.merge([raw], tmp_path / "merged" / "RESULTS.md", "merge")
    for out in (tmp_path / "RESULTS.md", tmp_path / "merged" / "RESULTS.md"):
        text = out.read_text()
        assert "scaling.png" not in text and "no scaling table, no plot" in text, f"{out}:\n{text}"
        assert not (out.parent / "scaling.png").exists(), f"{out.parent}: a plot of nothing was drawn"
    assert "| cli-checkpoint wall, 10-commit table (s) |" in (tmp_path / "RESULTS.md").read_text()


def test_render_reproduces_the_committed_report(bench: ModuleType, tmp_path: Path) -> None:
    """``--render benchmarks/results.json`` gives the committed RESULTS.md (plus the line saying it was
    rendered) and a scaling plot of the run's medians: one line per contender through its sizes in order
    (the data behind the plot; the PNG's bytes depend on the platform's font rendering, so only its
    being a PNG is checked)."""
    raw = tmp_path / "results.json"
    shutil.copy(BENCH / "results.json", raw)
    bench.render(raw, tmp_path / "RESULTS.md")
    rendered = (tmp_path / "RESULTS.md").read_text().splitlines(keepends=True)
    extra = [line for line in rendered if line.startswith("# report rendered from results.json")]
    assert len(extra) == 1, f"{tmp_path / 'RESULTS.md'}: rendered-from lines {extra}"
    committed = (BENCH / "RESULTS.md").read_text()
    assert "".join(line for line in rendered if line not in extra) == committed, (
        f"{tmp_path / 'RESULTS.md'} differs from {BENCH / 'RESULTS.md'} beyond {extra}"
    )
    assert (tmp_path / "scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{tmp_path}: no plot"
    data = json.loads(raw.read_text())
    points = bench._points(bench._summaries([bench.Measurement(**row) for row in data["runs"]]))
    lines = _check_lines(bench, points, {None: data})
    contenders = [c for c, _run, _mine in lines]
    assert len(contenders) == len(set(contenders)) >= 2, f"one line per contender: {contenders}"


def test_merge_labels_every_figure_with_its_run(bench: ModuleType, tmp_path: Path) -> None:
    """``--merge`` of the committed run (its sizes), the 10M run and a copy of the first with other figures and another
    commit: one table with every size, each figure the median of one run with that run's label, the two
    runs at one size side by side (never averaged), the commits named, and a plot with a line per run and
    contender, each in increasing size (before, a contender's one line zigzagged between the runs at
    each size: 10k R1, 10k R3, 100k R1, 100k R3, ...)."""
    main_raw = json.loads((BENCH / "results.json").read_text())
    ten_m = json.loads((BENCH / "10m" / "results.json").read_text())
    other = json.loads(json.dumps(main_raw))
    other["environment"]["git commit"] = "0000000"
    for row in other["runs"]:
        row["op_s"] = row["op_s"] * 2 if row["op_s"] is not None else None
    copy = tmp_path / "other" / "results.json"
    copy.parent.mkdir()
    copy.write_text(json.dumps(other))
    out = tmp_path / "scaling" / "RESULTS.md"
    bench.merge([BENCH / "results.json", BENCH / "10m" / "results.json", copy], out, "the merge command")
    text = out.read_text()
    r1, r2 = f"R1 {main_raw['environment']['git commit']}", f"R2 {ten_m['environment']['git commit']}"
    row = next(line for line in text.splitlines() if line.startswith("| ours-v2 |"))
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    header = next(line for line in text.splitlines() if line.startswith("| contender |"))
    sizes = sorted({r["adds"] for r in main_raw["runs"] if r["contender"] == "ours-v2"})
    assert [c.strip() for c in header.strip("|").split("|")][1:] == [f"{n:,}" for n in [*sizes, 10_000_000]]
    for cell, n in zip(cells[:-1], sizes, strict=True):
        mine, theirs = _median(main_raw, "ours-v2", n), _median(other, "ours-v2", n)
        assert cell == f"{mine:.1f} ({r1})<br>{theirs:.1f} (R3 0000000)", f"{out}: ours-v2 at {n}: {cell!r}"
    assert cells[-1] == f"{_median(ten_m, 'ours-v2', 10_000_000):.1f} ({r2})", (
        f"{out}: 10M cell {cells[-1]!r}"
    )
    assert "The runs are of 3 commits" in text and "no figure averages" in text, f"{out}:\n{text}"
    assert "the merge command" in text and str(BENCH / "10m" / "results.json") in text, f"{out}:\n{text}"
    assert "![scaling](scaling.png)" in text, f"{out}:\n{text}"
    assert (out.parent / "scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{out.parent}: no plot"
    points = [
        p
        for label, data in ((r1, main_raw), (r2, ten_m), ("R3 0000000", other))
        for p in bench._points(bench._summaries([bench.Measurement(**row) for row in data["runs"]]), label)
    ]
    lines = _check_lines(bench, points, {r1: main_raw, r2: ten_m, "R3 0000000": other})
    ours = [run for c, run, _mine in lines if c == "ours-v2"]
    assert ours == [r1, r2, "R3 0000000"], f"{out.parent}: the lines of ours-v2 are of the runs {ours}"
