"""Storage options, named as deltalake (object_store) names them, and their one translation for Spark.

Spec: ``spec/checkpoints.md`` §19.4 Stores.

Options come from ``--storage-option KEY=VALUE`` (repeatable) or ``storage_options=`` in the Python
API, and, for S3, from the ``AWS_*`` environment variables (an option wins over the environment).
Keys are case-insensitive: ``AWS_REGION``, ``aws_region`` and ``region`` are one option.

S3 (``s3://`` through obstore on the driver; ``s3a://`` inside Spark):

| option | obstore | Spark's S3A (per bucket: ``fs.s3a.bucket.<bucket>.…``) |
|---|---|---|
| ``AWS_ACCESS_KEY_ID`` | ``aws_access_key_id`` | ``access.key`` |
| ``AWS_SECRET_ACCESS_KEY`` | ``aws_secret_access_key`` | ``secret.key`` |
| ``AWS_SESSION_TOKEN`` | ``aws_session_token`` | ``session.token`` (temporary-credentials provider) |
| ``AWS_REGION`` | ``aws_region`` | ``endpoint.region`` |
| ``AWS_ENDPOINT_URL`` | ``aws_endpoint`` | ``endpoint`` |
| ``AWS_ALLOW_HTTP`` | client option ``allow_http`` | ``connection.ssl.enabled`` = not the value |
| ``AWS_VIRTUAL_HOSTED_STYLE_REQUEST`` | ``aws_virtual_hosted_style_request`` | ``path.style.access`` = not the value (path style by default, as obstore) |
| ``AWS_SKIP_SIGNATURE`` | ``aws_skip_signature`` | the anonymous credentials provider |
| ``AWS_EC2_METADATA_ENDPOINT`` | ``aws_metadata_endpoint`` | (the SDK's default chain) |
| ``AWS_S3_ALLOW_UNSAFE_RENAME``, ``AWS_S3_LOCKING_PROVIDER``, ``AWS_CONDITIONAL_PUT`` | deltalake's commit settings: accepted, not needed (this writer publishes with conditional PUTs) | |

Hadoop file systems (``hdfs://``, ``s3a://``, ``abfss://``, …): options whose key contains a ``.``
are Hadoop configuration keys, applied to the driver's Hadoop configuration and to Spark's; on
``s3a://`` the S3 options above are accepted too, translated as for ``s3://``. Any other key is one
``INVALID_OPTION`` naming the table, raised before the JVM starts
(:func:`reference_impl.storage.hadoop.hadoop_conf`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reference_impl.errors import InvalidOption

#: Canonical S3 option -> its other spellings (lower-case).
S3_OPTIONS: dict[str, tuple[str, ...]] = {
    "AWS_ACCESS_KEY_ID": ("aws_access_key_id", "access_key_id"),
    "AWS_SECRET_ACCESS_KEY": ("aws_secret_access_key", "secret_access_key"),
    "AWS_SESSION_TOKEN": ("aws_session_token", "session_token", "aws_token", "token"),
    "AWS_REGION": ("aws_region", "region", "aws_default_region"),
    "AWS_ENDPOINT_URL": ("aws_endpoint_url", "aws_endpoint", "endpoint_url", "endpoint"),
    "AWS_ALLOW_HTTP": ("aws_allow_http", "allow_http"),
    "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": ("aws_virtual_hosted_style_request", "virtual_hosted_style_request"),
    "AWS_SKIP_SIGNATURE": ("aws_skip_signature", "skip_signature"),
    "AWS_EC2_METADATA_ENDPOINT": ("aws_ec2_metadata_endpoint", "aws_metadata_endpoint", "metadata_endpoint"),
    "AWS_S3_ALLOW_UNSAFE_RENAME": ("aws_s3_allow_unsafe_rename",),
    "AWS_S3_LOCKING_PROVIDER": ("aws_s3_locking_provider",),
    "AWS_CONDITIONAL_PUT": ("aws_conditional_put", "conditional_put"),
}
#: deltalake's own commit settings: meaningful to deltalake, not to this implementation.
DELTALAKE_ONLY: frozenset[str] = frozenset(
    {"AWS_S3_ALLOW_UNSAFE_RENAME", "AWS_S3_LOCKING_PROVIDER", "AWS_CONDITIONAL_PUT"}
)
_S3_ALIASES: dict[str, str] = {alias: key for key, aliases in S3_OPTIONS.items() for alias in aliases}
_TRUE = frozenset({"true", "1", "yes", "on"})


def parse_option_pairs(pairs: Iterable[str], *, source: str = "--storage-option") -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict; an item without ``=`` is an ``INVALID_OPTION`` naming ``source``."""
    out: dict[str, str] = {}
    for raw in pairs:
        key, sep, value = raw.partition("=")
        if not sep or not key.strip():
            raise InvalidOption(f"storage option {raw!r} from {source} is not of the form KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def is_true(value: str | None) -> bool:
    return value is not None and value.strip().lower() in _TRUE


@dataclass(frozen=True)
class S3Options:
    """The S3 options of one table: canonical keys (``AWS_REGION``, …), the environment filled in."""

    values: Mapping[str, str]

    @classmethod
    def parse(cls, options: Mapping[str, str], *, extra_ok: bool = False) -> tuple[S3Options, dict[str, str]]:
        """Canonical S3 options, and the options that are not S3's (an error unless ``extra_ok``)."""
        values: dict[str, str] = {}
        rest: dict[str, str] = {}
        for key, value in options.items():
            canonical = _S3_ALIASES.get(key.strip().lower())
            if canonical is not None:
                values[canonical] = value
            elif extra_ok and "." in key:
                rest[key] = value
            else:
                raise InvalidOption(
                    f"unknown S3 storage option {key!r}; known: {', '.join(sorted(S3_OPTIONS))}"
                    + (" and Hadoop keys (containing '.')" if extra_ok else "")
                )
        for key in S3_OPTIONS:
            if key not in values and os.environ.get(key):
                values[key] = os.environ[key]
        return cls(values), rest

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    @property
    def has_credentials(self) -> bool:
        return bool(
            (self.get("AWS_ACCESS_KEY_ID") and self.get("AWS_SECRET_ACCESS_KEY"))
            or is_true(self.get("AWS_SKIP_SIGNATURE"))
            or self.get("AWS_EC2_METADATA_ENDPOINT")
        )

    def obstore_config(self) -> tuple[dict[str, str], dict[str, str]]:
        """``(config, client_options)`` for ``obstore.store.S3Store``."""
        names = {
            "AWS_ACCESS_KEY_ID": "aws_access_key_id",
            "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
            "AWS_SESSION_TOKEN": "aws_session_token",
            "AWS_REGION": "aws_region",
            "AWS_ENDPOINT_URL": "aws_endpoint",
            "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "aws_virtual_hosted_style_request",
            "AWS_SKIP_SIGNATURE": "aws_skip_signature",
            "AWS_EC2_METADATA_ENDPOINT": "aws_metadata_endpoint",
        }
        config = {names[k]: v for k, v in self.values.items() if k in names}
        client = {"allow_http": "true"} if is_true(self.get("AWS_ALLOW_HTTP")) else {}
        return config, client

    def s3a_conf(self, bucket: str) -> dict[str, str]:
        """The same options as Hadoop S3A configuration for ``bucket`` (the one translation)."""
        prefix = f"fs.s3a.bucket.{bucket}."
        conf: dict[str, str] = {}
        plain = {
            "AWS_ACCESS_KEY_ID": "access.key",
            "AWS_SECRET_ACCESS_KEY": "secret.key",
            "AWS_SESSION_TOKEN": "session.token",
            "AWS_REGION": "endpoint.region",
            "AWS_ENDPOINT_URL": "endpoint",
        }
        for key, name in plain.items():
            if self.get(key):
                conf[prefix + name] = str(self.get(key))
        endpoint = self.get("AWS_ENDPOINT_URL") or ""
        if is_true(self.get("AWS_ALLOW_HTTP")) or endpoint.startswith("http://"):
            conf[prefix + "connection.ssl.enabled"] = "false"
        conf[prefix + "path.style.access"] = str(
            not is_true(self.get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"))
        ).lower()
        provider = None
        if self.get("AWS_SESSION_TOKEN"):
            provider = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
        elif is_true(self.get("AWS_SKIP_SIGNATURE")):
            provider = "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"
        elif self.get("AWS_ACCESS_KEY_ID"):
            provider = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
        if provider:
            conf[prefix + "aws.credentials.provider"] = provider
        return conf
