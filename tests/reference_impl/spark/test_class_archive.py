"""The class archive of the driver JVM (issue #12, ``reference_impl.spark.class_archive``): when the
session uses it, and that a JVM given an archive it cannot map says nothing on stdout (``--json``).

No Spark: the session's choice is made before any JVM starts; the silence is checked on ``java -version``.
Building an archive takes a Spark run (the bootstrap does it), so the tests use a stand-in file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from reference_impl.spark.session import SPARK_CONF_DIR, SparkSettings, _class_archive_options
from reference_impl.storage import class_archive
from spec.cache import ENV_CACHE


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache holding a (stand-in) archive for this Java and pyspark; ``SPARK_CONF_DIR`` unset."""
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "cache"))
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    path = class_archive.archive_path()
    if path is None:
        pytest.skip("no java on PATH")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an archive")
    return path


def test_local_session_maps_the_archive(archive: Path) -> None:
    """A plain local master maps the archive, names our log4j file and empties SPARK_CONF_DIR."""
    flags = _class_archive_options(SparkSettings(master="local[2]"))
    assert flags is not None, f"no archive flags with {archive} present"
    assert f"-XX:SharedArchiveFile={archive}" in flags, flags
    assert (SPARK_CONF_DIR / "log4j2.properties").as_uri() in flags, flags
    conf_dir = Path(class_archive.empty_conf_dir())
    assert Path(os.environ["SPARK_CONF_DIR"]) == conf_dir
    assert conf_dir.is_dir() and not any(conf_dir.iterdir()), f"{conf_dir} is not empty"


@pytest.mark.parametrize("master", ["local-cluster[2,1,1024]", "spark://127.0.0.1:7077"])
def test_other_masters_do_not(archive: Path, master: str) -> None:
    """Executors in their own JVMs would not share the archive: only ``local``/``local[N]`` maps it."""
    assert _class_archive_options(SparkSettings(master=master)) is None, f"{master} mapped {archive}"
    assert Path(os.environ["SPARK_CONF_DIR"]) == SPARK_CONF_DIR


def test_a_users_conf_dir_is_kept(archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SPARK_CONF_DIR with more than a log4j file (spark-defaults.conf) stays first on the classpath."""
    own = tmp_path / "conf"
    shutil.copytree(SPARK_CONF_DIR, own)
    (own / "spark-defaults.conf").write_text("spark.sql.shuffle.partitions 3\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(own))
    assert _class_archive_options(SparkSettings(master="local[2]")) is None, f"{own} replaced for {archive}"
    assert Path(os.environ["SPARK_CONF_DIR"]) == own


def test_unusable_archive_is_silent(archive: Path) -> None:
    """A JVM given an archive it cannot map runs without it and prints nothing on stdout."""
    java = shutil.which("java")
    assert java is not None
    flags = class_archive.archive_java_options(SPARK_CONF_DIR)
    assert flags is not None
    done = subprocess.run([java, *flags.split(), "-version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"java {flags} -version failed: {done.stderr}"
    assert done.stdout == "", f"java {flags} -version printed on stdout: {done.stdout!r}"
