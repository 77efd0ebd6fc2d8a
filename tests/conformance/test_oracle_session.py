"""The oracle's session starts Spark as the reference implementation's does, so whichever side starts the
process's one session, it serves both: the defaults are one copy (``spec.spark_conf``, which both import;
the suite never imports the implementation it judges), and so is the choice of ``SPARK_CONF_DIR``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.oracles import session as oracle
from spec.cache import ENV_CACHE
from spec.spark_conf import BASE_CONF, LOCAL_CONF, SPARK_CONF_DIR, class_archive_conf_dir


@pytest.fixture
def session_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache in ``tmp_path``, and the environment a session sets restored after the test; the cache."""
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "cache"))
    for name in ("SPARK_CONF_DIR", "SPARK_LAUNCHER_OPTS", "SPARK_LOCAL_IP", "PYSPARK_PYTHON"):
        monkeypatch.setenv(name, os.environ.get(name, ""))  # recorded, so undone even if it was unset
        if not os.environ[name]:
            monkeypatch.delenv(name)
    return tmp_path / "cache"


@pytest.mark.parametrize("flags", [LOCAL_CONF["spark.driver.extraJavaOptions"], "-Dmarker=1"])
def test_a_delta_session_after_an_archive_session_gets_our_conf_dir(
    session_env: Path, monkeypatch: pytest.MonkeyPatch, flags: str
) -> None:
    """After a reference session that mapped the class archive left ``SPARK_CONF_DIR`` at the archive's
    empty directory, a Delta session of the same process (default or its own driver flags) gets our conf
    directory back: its log4j file (quiet logs) is on the classpath again."""
    monkeypatch.setenv("SPARK_CONF_DIR", str(class_archive_conf_dir()))
    conf = oracle.delta_session_conf("local[2]", [f"spark.driver.extraJavaOptions={flags}"], [])
    assert conf["spark.driver.extraJavaOptions"] == flags, conf
    assert os.environ["SPARK_CONF_DIR"] == str(SPARK_CONF_DIR), (
        f"SPARK_CONF_DIR {os.environ['SPARK_CONF_DIR']!r}, expected {SPARK_CONF_DIR} (cache {session_env})"
    )


def test_a_users_conf_dir_is_kept_by_the_delta_session(
    session_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``SPARK_CONF_DIR`` the user set stays the session's."""
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "conf"))
    oracle.delta_session_conf("local[2]", [], [])
    assert os.environ["SPARK_CONF_DIR"] == str(tmp_path / "conf"), os.environ["SPARK_CONF_DIR"]


def test_delta_conf_is_only_the_oracles() -> None:
    """Only the oracle's session mentions Delta: the shared defaults do not."""
    assert not any("delta" in key.lower() or "delta" in value.lower() for key, value in BASE_CONF.items()), (
        BASE_CONF
    )
    assert oracle.DELTA_CONF["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"
