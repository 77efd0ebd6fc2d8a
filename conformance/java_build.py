"""The project's small Java programs, compiled with ``javac`` once and cached by content.

Two programs are built this way: the Kernel Java harness (:mod:`conformance.adapters.kernel_java`,
a jar) and the tests' MiniDFSCluster launcher (``tests/support/servers/hdfs.py``, a class
directory). :func:`build_cached` compiles a single source file against a classpath into
``$DELTA_CKPT_CACHE/<kind>/<key>/``, where the key hashes the source, the classpath's jars (names
and sizes, not paths: a fresh clone's venv holds the same jars elsewhere) and the ``javac`` binary:
a change to any of them builds again, anything else reuses the build. The build
happens in a temporary directory beside the target and is renamed onto it, so a concurrent build
(two test processes) never sees half a build: the one that loses the rename keeps the winner's.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from spec.cache import cache_dir


def java_tool(name: str, unavailable: type[Exception], what: str) -> str:
    """``$JAVA_HOME/bin/<name>``, else ``<name>`` on ``PATH``; ``unavailable`` (naming ``what``) if neither."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if found is None:
        raise unavailable(f"no {name} on PATH (a JDK 17 is required to build {what})")
    return found


def classpath_facts(classpath: Sequence[str]) -> list[str]:
    """``name:size`` of every jar of ``classpath``, in classpath order (a ``dir/*`` entry: its jars by
    name): what the classes compile against, whatever directory holds the jars. A missing entry is
    ``name:missing``."""
    facts: list[str] = []
    for entry in classpath:
        path = Path(entry)
        jars = sorted(path.parent.glob("*.jar")) if path.name == "*" else [path]
        facts += [f"{jar.name}:{jar.stat().st_size if jar.is_file() else 'missing'}" for jar in jars]
    return facts


def build_key(source: Path, classpath: Sequence[str], javac: str) -> str:
    """The cache key of a build: the source's bytes, the classpath's jars by name and size
    (:func:`classpath_facts`: not their paths, so a fresh clone with its own venv reuses the build)
    and the resolved ``javac``."""
    digest = hashlib.sha256(source.read_bytes())
    for part in (*classpath_facts(classpath), str(Path(javac).resolve())):
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()[:16]


def build_cached(
    source: Path,
    classpath: Sequence[str],
    *,
    kind: str,
    product: str,
    what: str,
    unavailable: type[Exception],
    resources: Mapping[str, str] | None = None,
) -> Path:
    """The built ``product`` of ``source``: a ``.jar`` of its classes, or one compiled ``.class`` file.

    ``kind`` names the cache directory, ``what`` the program in error messages (``unavailable`` is
    raised with the last lines of the compiler's output); ``resources`` are text files put beside
    the classes (in the jar).
    """
    javac = java_tool("javac", unavailable, what)
    target = cache_dir() / kind / build_key(source, classpath, javac)
    if (target / product).is_file():
        return target / product
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        classes = Path(tmp) / "classes"
        classes.mkdir()
        for name, text in (resources or {}).items():
            (classes / name).write_text(text)
        cp = os.pathsep.join(classpath)
        steps = [[javac, "--release", "17", "-nowarn", "-d", str(classes), "-cp", cp, str(source)]]
        staged = classes
        if product.endswith(".jar"):
            staged = Path(tmp) / "staged"
            staged.mkdir()
            jar = java_tool("jar", unavailable, what)
            steps.append([jar, "--create", "--file", str(staged / product), "-C", str(classes), "."])
        for step in steps:
            proc = subprocess.run(step, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
                raise unavailable(f"building {what} failed ({Path(step[0]).name} {source.name}):\n{tail}")
        try:
            staged.rename(target)  # atomic: a concurrent build that won keeps its own copy
        except OSError:
            if not (target / product).is_file():
                raise
    return target / product
