"""The harness of ``conformance/README.md`` ("Plug in your implementation", step 2), run verbatim.

The block after ``<!-- readme-harness: my_harness.py -->`` is written to a file outside the repository
and run as a new user runs it (issue #15 item 9): ``delta-ckpt conformance run --impl-cmd
mine="python my_harness.py"``, from an empty directory. So the guide's code cannot rot: a harness that
no longer speaks the protocol, or no longer reads a plain table right, fails here.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "conformance" / "README.md"
MARKER = "<!-- readme-harness: my_harness.py -->"
#: Golden tables the README harness must read right: unpartitioned and partitioned V1 checkpoints.
MUST_PASS = ("valid/v1_classic|v3", "valid/v1_classic|v4", "valid/v1_classic_partitioned_parsed|v3")


def readme_harness() -> str:
    """The Python block that follows the marker in the README."""
    text = README.read_text()
    match = re.search(re.escape(MARKER) + r"\n```python\n(.*?)\n```", text, re.S)
    assert match is not None, f"{README}: no ```python block right after {MARKER}"
    return match.group(1) + "\n"


@pytest.mark.deltalake
def test_readme_harness_runs_as_written(tmp_path: Path) -> None:
    """The README's harness answers hello by hand and reads the V1 golden tables right in a suite run."""
    pytest.importorskip("deltalake")
    harness = tmp_path / "my_harness.py"
    harness.write_text(readme_harness())
    hello = subprocess.run(
        [sys.executable, str(harness)],
        input='{"id": 1, "op": "hello", "protocolVersion": "1.0"}\n',
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    answer = json.loads(hello.stdout.splitlines()[0]) if hello.stdout.strip() else {}
    assert answer.get("ok") and answer["result"]["roles"] == ["reader"], (
        f"{harness}: hello answered {hello.stdout[:500]!r}, stderr {hello.stderr[-500:]!r}"
    )
    work = tmp_path / "empty"
    work.mkdir()
    report = tmp_path / "out"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(harness))}"
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("delta-ckpt")),
            "conformance",
            "run",
            "--impl-cmd",
            f"mine={command}",
            "--report",
            str(report),
            "--workers",
            "1",
            "-k",
            "v1_classic",
            "--quiet",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
    assert proc.returncode in (0, 1) and (report / "results.json").is_file(), (
        f"exit status {proc.returncode}:\n{tail}"
    )
    results = json.loads((report / "results.json").read_text())["results"]
    outcomes = {r.get("fixture"): (r["outcome"], r["message"][:300]) for r in results}
    for fixture in MUST_PASS:
        assert outcomes.get(fixture, ("missing",))[0] == "passed", (
            f"{fixture} read by the README harness {harness}: {outcomes.get(fixture)}"
        )
    assert all(r["nodeid"].startswith("conformance/suite/") for r in results), (
        f"test IDs do not start at the package: {[r['nodeid'] for r in results][:3]}"
    )
