"""``$DELTA_CKPT_SPARK_CONF`` (:mod:`spec.spark_conf`): what ``conformance run`` writes is read back exactly,
``k=v`` lines typed by hand still work, and a malformed value is one ``INVALID_OPTION`` naming the variable
and the value (through the reference's settings too). Not a spec rule: the sessions' shared settings."""

from __future__ import annotations

import pytest

from reference_impl.errors import InvalidOption
from reference_impl.spark.session import settings_from_env
from spec.error_codes import ErrorCode
from spec.spark_conf import ENV_CONF, ConfError, conf_from_env, encode_env_conf


def test_encoded_conf_is_read_back_exactly() -> None:
    """Values holding ``;``, ``=``, a newline, quotes or leading blanks survive the variable."""
    conf = {"j.opts": "-Da=1;-Db=2", "a.b": "c=d", "multi": "one\ntwo", "q": "'\"", "blank": "  x"}
    text = encode_env_conf(conf)
    assert conf_from_env({ENV_CONF: text}) == conf, text


def test_typed_lines_are_still_read() -> None:
    """``k=v`` entries separated by newlines or ``;``, blanks stripped, a later key winning."""
    text = "spark.ui.enabled = false;x.y=1\n\nx.y=2"
    assert conf_from_env({ENV_CONF: text}) == {"spark.ui.enabled": "false", "x.y": "2"}, text


@pytest.mark.parametrize(
    ("text", "says"),
    [("{not json", "not a JSON object"), ('{"a": 1}', "not a JSON object"), ("novalue", "'novalue'")],
)
def test_a_malformed_variable_is_one_invalid_option(
    monkeypatch: pytest.MonkeyPatch, text: str, says: str
) -> None:
    """A value that is neither a JSON object of strings nor ``k=v`` entries: ``INVALID_OPTION`` naming
    ``DELTA_CKPT_SPARK_CONF`` and the value, also from the reference's :func:`settings_from_env`."""
    with pytest.raises(ConfError) as raw:
        conf_from_env({ENV_CONF: text})
    assert raw.value.code is ErrorCode.INVALID_OPTION, raw.value
    monkeypatch.setenv(ENV_CONF, text)
    with pytest.raises(InvalidOption) as wrapped:
        settings_from_env()
    message = str(wrapped.value)
    assert ENV_CONF in message and says in message, f"{text!r}: {message}"
