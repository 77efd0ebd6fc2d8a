"""The class archive of the driver JVM (issue #12, ``reference_impl.spark.class_archive``): when the
session uses it, and that a JVM given an archive it cannot map says nothing on stdout (``--json``).

No Spark: the session's choice is made before any JVM starts; the silence is checked on ``java -version``;
the unsigned copies of signed jars (pyspark's Janino) are checked entry by entry on small stand-in jars.
Building an archive takes a Spark run (the bootstrap does it), so the tests use a stand-in file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from reference_impl.spark.session import SparkSettings, session_conf
from reference_impl.storage import class_archive
from spec.cache import ENV_CACHE
from spec.spark_conf import LOCAL_CONF, SPARK_CONF_DIR


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache holding a (stand-in) archive for this Java and pyspark; ``SPARK_CONF_DIR`` unset (the
    environment :func:`session_conf` sets is restored after the test)."""
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "cache"))
    for name in ("SPARK_CONF_DIR", "SPARK_LAUNCHER_OPTS", "SPARK_LOCAL_IP", "PYSPARK_PYTHON"):
        monkeypatch.setenv(name, os.environ.get(name, ""))  # recorded, so undone even if it was unset
        if name == "SPARK_CONF_DIR" or not os.environ[name]:
            monkeypatch.delenv(name)
    path = class_archive.archive_path()
    if path is None:
        pytest.skip("no java on PATH")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an archive")
    return path


def _driver_flags(settings: SparkSettings) -> str:
    return session_conf(settings).get("spark.driver.extraJavaOptions", "")


def test_local_session_maps_the_archive(archive: Path) -> None:
    """A plain local master maps the archive, names our log4j file and empties SPARK_CONF_DIR."""
    flags = _driver_flags(SparkSettings(master="local[2]"))
    assert f"-XX:SharedArchiveFile={archive}" in flags, flags
    assert (SPARK_CONF_DIR / "log4j2.properties").as_uri() in flags, flags
    conf_dir = Path(class_archive.empty_conf_dir())
    assert Path(os.environ["SPARK_CONF_DIR"]) == conf_dir
    assert conf_dir.is_dir() and not any(conf_dir.iterdir()), f"{conf_dir} is not empty"


@pytest.mark.parametrize("master", ["local-cluster[2,1,1024]", "spark://127.0.0.1:7077"])
def test_other_masters_do_not(archive: Path, master: str) -> None:
    """Executors in their own JVMs would not share the archive: only ``local``/``local[N]`` maps it."""
    flags = _driver_flags(SparkSettings(master=master))
    assert "SharedArchiveFile" not in flags, f"{master} mapped {archive}: {flags}"
    assert Path(os.environ["SPARK_CONF_DIR"]) == SPARK_CONF_DIR


def test_a_users_conf_dir_is_kept(archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SPARK_CONF_DIR with more than a log4j file (spark-defaults.conf) stays first on the classpath."""
    own = tmp_path / "conf"
    shutil.copytree(SPARK_CONF_DIR, own)
    (own / "spark-defaults.conf").write_text("spark.sql.shuffle.partitions 3\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(own))
    flags = _driver_flags(SparkSettings(master="local[2]"))
    assert "SharedArchiveFile" not in flags, f"{own} replaced for {archive}: {flags}"
    assert Path(os.environ["SPARK_CONF_DIR"]) == own


def test_a_later_session_with_its_own_flags_gets_our_conf_dir(archive: Path) -> None:
    """After a session that mapped the archive (and left SPARK_CONF_DIR at its empty directory), a
    new session of the same process with its own driver flags does not map it and gets our conf
    directory back, so its log4j file (quiet logs) is on the classpath again."""
    assert "SharedArchiveFile" in _driver_flags(SparkSettings(master="local[2]")), f"{archive} not mapped"
    assert Path(os.environ["SPARK_CONF_DIR"]) == class_archive.empty_conf_dir(), os.environ["SPARK_CONF_DIR"]
    own = f"{LOCAL_CONF['spark.driver.extraJavaOptions']} -Dmarker=1"
    flags = _driver_flags(SparkSettings(master="local[2]", conf={"spark.driver.extraJavaOptions": own}))
    assert flags == own, f"custom driver flags changed: {flags!r}"
    assert Path(os.environ["SPARK_CONF_DIR"]) == SPARK_CONF_DIR, os.environ["SPARK_CONF_DIR"]


def test_unusable_archive_is_silent(archive: Path) -> None:
    """A JVM given an archive it cannot map runs without it and prints nothing on stdout."""
    java = shutil.which("java")
    assert java is not None
    flags = class_archive.archive_java_options(SPARK_CONF_DIR)
    assert flags is not None
    done = subprocess.run([java, *flags.split(), "-version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"java {flags} -version failed: {done.stderr}"
    assert done.stdout == "", f"java {flags} -version printed on stdout: {done.stdout!r}"


def test_signed_jars_are_copied_without_their_signatures(tmp_path: Path) -> None:
    """The JVM archives no class of a signed jar (pyspark's Janino): a signed jar gets a copy with every
    other entry, byte for byte, and no signature file; an unsigned jar gets none."""
    jars = tmp_path / "jars"
    jars.mkdir()
    entries = {"META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\n", "org/x/A.class": b"\xca\xfe\xba\xbe"}
    signature = {"META-INF/DUMMY.SF": b"sf", "META-INF/DUMMY.DSA": b"dsa", "META-INF/k.rsa": b"rsa"}
    for name, content in (("signed.jar", {**entries, **signature}), ("plain.jar", entries)):
        with zipfile.ZipFile(jars / name, "w") as jar:
            for entry, data in content.items():
                jar.writestr(entry, data)
    copies = class_archive.write_unsigned_jars(tmp_path / "copies", jars)
    assert copies == [tmp_path / "copies" / "signed.jar"], f"copies of {sorted(os.listdir(jars))}: {copies}"
    with zipfile.ZipFile(copies[0]) as written:
        found = {name: written.read(name) for name in written.namelist()}
    assert found == entries, f"{copies[0]} holds {sorted(found)}, not {sorted(entries)}"


def test_a_session_with_the_archive_puts_the_unsigned_copies_first(archive: Path) -> None:
    """With the archive, the unsigned copies are the driver's first classpath entries, so their classes
    come from the archive; a user's own driver classpath keeps the archive off (it would not match)."""
    jars = class_archive.unsigned_jars_dir()
    assert jars is not None
    jars.mkdir()
    (jars / "janino-0.jar").write_bytes(b"")
    conf = session_conf(SparkSettings(master="local[2]"))
    assert conf.get("spark.driver.extraClassPath") == str(jars / "janino-0.jar"), conf
    own = {"spark.driver.extraClassPath": "/opt/own.jar"}
    conf = session_conf(SparkSettings(master="local[2]", conf=own))
    assert "SharedArchiveFile" not in conf["spark.driver.extraJavaOptions"], conf
    assert conf["spark.driver.extraClassPath"] == "/opt/own.jar", conf
