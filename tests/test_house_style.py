"""House style is checked, not hoped for: ruff's lint rules, ruff's formatter and mypy (strict).

Each check runs the tool from this environment over the repository with the settings in
``pyproject.toml`` and fails with the tool's own report.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECKS = {
    "ruff-lint": ["-m", "ruff", "check", "--no-cache", "."],
    "ruff-format": ["-m", "ruff", "format", "--check", "--no-cache", "."],
    "mypy": ["-m", "mypy", "--no-incremental"],
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_house_style(name: str) -> None:
    """The repository passes ``name`` with the project's configuration."""
    done = subprocess.run(
        [sys.executable, *CHECKS[name]], cwd=ROOT, capture_output=True, text=True, check=False
    )
    report = (done.stdout + done.stderr).strip()
    assert done.returncode == 0, f"{name} failed in {ROOT} (exit {done.returncode}):\n{report}"
