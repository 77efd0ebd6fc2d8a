"""The wheel is the product: built from the tracked files, installed into a new virtualenv in an empty
directory, it runs a fixture-only conformance run against a harness outside the repository.

What it proves: the spec, its schemas, the expectation files and every golden table ship as package
data (the same files, read through ``importlib.resources``); the console script and the pytest
plugin work from the installed wheel; one version number everywhere; the build prints no setuptools
deprecation warning. The new virtualenv gets the wheel's dependencies (pyspark, pyarrow, deltalake,
…) from this environment's site-packages through a ``.pth`` line — a plain path entry, so this
environment's editable install of the project is *not* activated and every import of ``spec``,
``conformance`` and ``fixtures`` must come from the wheel (checked).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
KINDS = ("valid", "invalid", "foreign")


def _tracked(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [name for name in out.split("\0") if name and (root / name).is_file()]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``args`` run from ``cwd`` as a user of the wheel runs them: no ``PYTHONPATH`` (a worktree's, set for
    its own tests, would import the checkout instead of the wheel) and no active virtualenv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode in (0, 1), (
        f"{' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    )
    return result


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tracked files (a fresh clone's tree)."""
    copy = tmp_path_factory.mktemp("source")
    for name in _tracked(ROOT):
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return copy


@pytest.fixture(scope="module")
def installed(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv holding only the wheel; returns its bin directory."""
    base = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(base / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    log = built.stdout + built.stderr
    assert "SetuptoolsDeprecationWarning" not in log, "the build warns:\n" + log[-4000:]
    (wheel,) = (base / "dist").glob("delta_checkpoint_conformance-*.whl")
    assert wheel.name.startswith(f"delta_checkpoint_conformance-{VERSION}-"), wheel.name
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        timeout=300,
    )
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (purelib / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def test_editable_install_prints_no_warning(source: Path, tmp_path: Path) -> None:
    """Setup's editable install (``scripts/bootstrap.sh``: ``pip install -q -e``) prints nothing: setuptools
    puts the project directory on ``sys.path`` with a ``.pth`` file (``package-dir`` in ``pyproject.toml``)
    instead of a meta path finder, whose "Editable installation" BuildBackendWarning it always prints."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps",
         "-e", str(source)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    output = (done.stdout + done.stderr).strip()
    assert done.returncode == 0, f"pip install -e {source} exited {done.returncode}:\n{output[-4000:]}"
    assert "warning" not in output.lower(), f"pip install -q -e {source} printed:\n{output[-4000:]}"


def test_installed_wheel_carries_its_data_and_one_version(installed: Path, tmp_path: Path) -> None:
    """spec, schemas, the sessions' log4j file, expectations and every golden table come from the wheel;
    --version is the package's."""
    probe = (
        "import json, conformance, fixtures, spec\n"
        "from conformance.expectations import DEFAULT_DIR\n"
        "from fixtures import FIXTURES_DIR\n"
        "from spec.requirements import REQUIREMENTS_JSON\n"
        "from spec.schemas import SCHEMA_DIR\n"
        "from spec.spark_conf import SPARK_CONF_DIR\n"
        "files = sorted(str(p.relative_to(FIXTURES_DIR)) for p in FIXTURES_DIR.rglob('*') if p.is_file()"
        " and p.relative_to(FIXTURES_DIR).parts[0] in ('valid', 'invalid', 'foreign'))\n"
        "print(json.dumps({'modules': [m.__file__ for m in (conformance, fixtures, spec)],"
        " 'requirements': REQUIREMENTS_JSON.is_file(), 'log4j': (SPARK_CONF_DIR / 'log4j2.properties').is_file(),"
        " 'schemas': len(list(SCHEMA_DIR.rglob('*.schema.json'))),"
        " 'expectations': sorted(p.name for p in DEFAULT_DIR.glob('*.yaml')), 'fixtures': files}))\n"
    )
    result = _run([str(installed / "python"), "-c", probe], cwd=tmp_path)
    found = json.loads(result.stdout)
    venv = str(installed.parent)
    assert all(path.startswith(venv) for path in found["modules"]), found["modules"]
    assert found["log4j"], "the wheel lacks spec/spark-conf/log4j2.properties (the sessions' quiet logging)"
    assert found["requirements"] and found["schemas"] == len(
        list((ROOT / "spec" / "schemas").rglob("*.schema.json"))
    )
    assert found["expectations"] == sorted(
        p.name for p in (ROOT / "conformance" / "expectations").glob("*.yaml")
    )
    tracked = sorted(
        name.removeprefix("fixtures/")
        for name in _tracked(ROOT)
        if name.startswith("fixtures/") and name.split("/")[1] in KINDS
    )
    assert found["fixtures"] == tracked, set(tracked) ^ set(found["fixtures"])
    version = _run([str(installed / "delta-ckpt"), "--version"], cwd=tmp_path).stdout
    assert version.strip().endswith(VERSION), version


@pytest.mark.deltalake
def test_installed_wheel_runs_a_reader_outside_the_repository(installed: Path, tmp_path: Path) -> None:
    """From an empty directory: ``delta-ckpt conformance run --impl-cmd`` with a harness copied out of the
    repository and the user's own expectations file, over the golden tables shipped in the wheel."""
    pytest.importorskip("deltalake")
    work = tmp_path / "empty"
    work.mkdir()
    harness = tmp_path / "my_harness.py"
    shutil.copy2(ROOT / "conformance" / "examples" / "deltalake_harness.py", harness)
    expectations = tmp_path / "mine.yaml"
    known = (ROOT / "conformance" / "expectations" / "deltalake.yaml").read_text()
    expectations.write_text(known.replace("implementation: deltalake", "implementation: mine"))
    result = _run(
        [
            str(installed / "delta-ckpt"), "conformance", "run", "--quiet",
            "--impl-cmd", f"mine={installed / 'python'} {harness}",
            "--expectations", str(expectations), "--no-strict-expectations",
            "-k", "test_reader_fixture", "--report", str(tmp_path / "report"),
        ],
        cwd=work,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    data = json.loads((tmp_path / "report" / "results.json").read_text())
    outcomes = [r["outcome"] for r in data["results"]]
    assert outcomes.count("passed") >= 60 and "failed" not in outcomes, outcomes
    assert data["suiteVersion"] == VERSION and (tmp_path / "report" / "MATRIX.md").is_file()
    assert not list(work.iterdir()), "the run wrote into the working directory"
