"""The cache key of the project's Java builds (:mod:`conformance.java_build`): by content, not by path.

A fresh clone has its own venv, so pyspark's jars sit under another directory; the key hashes the
jars' names and sizes, so the Kernel harness and the MiniDFSCluster launcher are not rebuilt for it,
while another jar, a changed jar or another source still builds again. No ``javac`` runs here.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from conformance.java_build import build_key

JARS = {"spark-core_2.13-4.2.0.jar": b"core" * 10, "hadoop-client-api-3.5.0.jar": b"hadoop" * 3}


def _venv_jars(root: Path) -> Path:
    """A directory of stand-in jars laid out like a venv's ``pyspark/jars``."""
    jars = root / "lib" / "python3.11" / "site-packages" / "pyspark" / "jars"
    jars.mkdir(parents=True)
    for name, data in JARS.items():
        (jars / name).write_bytes(data)
    return jars


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "Main.java"
    path.write_text("class Main {}\n")
    return path


def test_the_same_jars_in_another_venv_give_the_same_key(source: Path, tmp_path: Path) -> None:
    """Two clones' venvs holding the same jars (and a kernel jar named directly) share one build."""
    javac = sys.executable  # only its resolved path is hashed
    first, second = _venv_jars(tmp_path / "clone-a"), _venv_jars(tmp_path / "clone-b")
    kernel = tmp_path / "cache" / "delta-kernel-api-4.4.0.jar"
    kernel.parent.mkdir()
    kernel.write_bytes(b"kernel")
    key_a = build_key(source, [str(kernel), str(first / "*")], javac)
    key_b = build_key(source, [str(kernel), str(second / "*")], javac)
    assert key_a == key_b, f"{first} and {second} hold the same jars but key {key_a} != {key_b}"
    listed = [str(kernel), *(str(second / name) for name in sorted(JARS))]
    assert build_key(source, listed, javac) == key_a, "jars listed one by one keyed unlike their dir/*"


@pytest.mark.parametrize("change", ["jar size", "extra jar", "source"])
def test_a_changed_input_gives_another_key(source: Path, tmp_path: Path, change: str) -> None:
    """A jar of another size, one more jar or another source is another build."""
    javac = sys.executable
    jars = _venv_jars(tmp_path / "clone")
    before = build_key(source, [str(jars / "*")], javac)
    copy = tmp_path / "copy" / "jars"
    shutil.copytree(jars, copy)
    if change == "jar size":
        (copy / "spark-core_2.13-4.2.0.jar").write_bytes(b"core" * 11)
    elif change == "extra jar":
        (copy / "zstd-jni-1.5.7-7.jar").write_bytes(b"z")
    else:
        source.write_text("class Main { int x; }\n")
    after = build_key(source, [str(copy / "*")], javac)
    assert after != before, f"{change}: key {after} unchanged"
