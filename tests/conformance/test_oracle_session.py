"""The oracle's session starts Spark with the reference implementation's defaults, so whichever side
starts the process's one session, it serves both (``conformance.oracles.session`` keeps its own copy:
the suite never imports the implementation it judges)."""

from __future__ import annotations

from conformance.oracles import session as oracle
from reference_impl.spark import session as reference


def test_defaults_are_the_references() -> None:
    """Base and local-mode configuration, settings variables, default master and log4j2.properties agree."""
    assert dict(oracle.BASE_CONF) == dict(reference.BASE_CONF)
    assert dict(oracle.LOCAL_CONF) == dict(reference.LOCAL_CONF)
    assert (oracle.ENV_MASTER, oracle.ENV_CONF, oracle.DEFAULT_MASTER) == (
        reference.ENV_MASTER,
        reference.ENV_CONF,
        reference.DEFAULT_MASTER,
    )
    for name in ("log4j2.properties",):
        assert (oracle.SPARK_CONF_DIR / name).read_text() == (reference.SPARK_CONF_DIR / name).read_text()


def test_delta_conf_is_only_the_oracles() -> None:
    """Only the oracle's session mentions Delta."""
    assert not any(
        "delta" in key.lower() or "delta" in value.lower() for key, value in reference.BASE_CONF.items()
    )
    assert oracle.DELTA_CONF["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"
