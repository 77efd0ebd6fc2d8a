"""Resolve delta-spark's jars from Maven Central once, cache them in the project, reuse offline.

Only the oracle side (delta-spark sessions) needs these jars; the reference implementation never
does. :func:`resolve_jars` resolves any other artifact the same way (the tests' HDFS server takes
``hadoop-client-minicluster`` with it). Resolution runs Apache Ivy — the copy bundled with pyspark — as a standalone program, so a
failure is a clean error instead of a JVM that dies during SparkSession start-up.

Cache layout (:func:`spec.cache.cache_dir`: ``DELTA_CKPT_CACHE``, default ``<project>/.cache`` in a
source checkout, else ``~/.cache/delta-checkpoint-conformance``)::

    delta-jars/<coordinate>/jars/*.jar     the retrieved jars
    delta-jars/<coordinate>/jars.txt       the jars to put on the classpath, one per line
    ivy/                                   Ivy's download cache

Jars that pyspark already ships (Hadoop, Parquet, Jackson, Scala, log4j, …) are left out of
``jars.txt`` so the session keeps one copy of each library.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from spec.cache import cache_dir
from spec.error_codes import ErrorCode

DELTA_VERSION = "4.4.0"
_ARTIFACT_RE = re.compile(r"^(?:[^_]+_)?(?P<artifact>.+?)-\d[^-]*(?:-[A-Za-z0-9]+)?\.jar$")


class DeltaJarsUnavailable(RuntimeError):
    """delta-spark's jars cannot be resolved (or a session without them is already running)."""

    code = ErrorCode.STORAGE_ERROR


def delta_coordinate() -> tuple[str, str, str]:
    """``(group, artifact, version)`` of delta-spark for the installed pyspark."""
    import pyspark

    major_minor = ".".join(pyspark.__version__.split(".")[:2])
    return ("io.delta", f"delta-spark_{major_minor}_2.13", DELTA_VERSION)


def _pyspark_jars_dir() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def _artifact_name(jar_name: str) -> str:
    match = _ARTIFACT_RE.match(jar_name)
    return match.group("artifact") if match else jar_name


def _manifest(coord: tuple[str, str, str]) -> Path:
    return cache_dir() / "delta-jars" / ":".join(coord).replace(":", "_") / "jars.txt"


def cached_jars(coord: tuple[str, str, str]) -> list[Path] | None:
    """The cached classpath of ``coord``, or ``None`` if it is missing or incomplete."""
    manifest = _manifest(coord)
    if not manifest.is_file():
        return None
    jars = [Path(line) for line in manifest.read_text().splitlines() if line.strip()]
    if not jars or not all(j.is_file() for j in jars):
        return None
    return jars


def cached_delta_jars() -> list[Path] | None:
    """The cached delta-spark classpath, or ``None`` if it is missing or incomplete."""
    return cached_jars(delta_coordinate())


def resolve_jars(
    coord: tuple[str, str, str], *, transitive: bool = True, timeout_s: float = 900.0
) -> list[Path]:
    """The classpath ``coord`` adds to pyspark's (jars pyspark ships are left out), downloaded on first use.

    ``transitive=False`` retrieves the artifact alone (Ivy's ``master`` configuration).
    Raises :class:`DeltaJarsUnavailable` when Ivy cannot resolve it.
    """
    cached = cached_jars(coord)
    if cached is not None:
        return cached
    manifest = _manifest(coord)
    target = manifest.parent / "jars"
    ivy_jars = sorted(_pyspark_jars_dir().glob("ivy-*.jar"))
    java = shutil.which("java")
    if not ivy_jars or java is None:
        raise DeltaJarsUnavailable(
            f"cannot resolve {':'.join(coord)}: "
            + ("no java on PATH" if java is None else "pyspark ships no Ivy jar")
        )
    target.mkdir(parents=True, exist_ok=True)
    cmd = [
        java,
        "-jar",
        str(ivy_jars[-1]),
        "-dependency",
        *coord,
        "-confs",
        "default" if transitive else "master",
        "-m2compatible",
        "-cache",
        str(cache_dir() / "ivy"),
        "-retrieve",
        str(target / "[organisation]_[artifact]-[revision](-[classifier]).[ext]"),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise DeltaJarsUnavailable(f"resolving {':'.join(coord)} from Maven Central timed out") from exc
    if proc.returncode != 0:
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-6:])
        raise DeltaJarsUnavailable(f"resolving {':'.join(coord)} from Maven Central failed: {tail}")
    shipped = {_artifact_name(p.name) for p in _pyspark_jars_dir().glob("*.jar")}
    keep = sorted(p for p in target.glob("*.jar") if _artifact_name(p.name) not in shipped)
    if not any(p.name.startswith(f"{coord[0]}_{coord[1]}") for p in keep):
        raise DeltaJarsUnavailable(f"Ivy finished but {coord[1]} is not among the retrieved jars in {target}")
    manifest.write_text("".join(f"{p}\n" for p in keep))
    return keep


def hadoop_version() -> str:
    """The Hadoop version pyspark ships (from its ``hadoop-client-api`` jar)."""
    for jar in _pyspark_jars_dir().glob("hadoop-client-api-*.jar"):
        return jar.name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    raise DeltaJarsUnavailable(f"pyspark ships no hadoop-client-api jar in {_pyspark_jars_dir()}")


def s3a_coordinates() -> list[tuple[tuple[str, str, str], bool]]:
    """``(coordinate, transitive)`` of Hadoop's S3A connector for pyspark's Hadoop, without the AWS SDK bundle.

    ``hadoop-aws`` declares ``software.amazon.awssdk:bundle`` (every AWS service, shaded: hundreds of
    MB). S3A needs only the S3 client and its transfer manager, so the connector is ``hadoop-aws``
    alone, ``s3-transfer-manager`` with its dependencies (the ``s3`` client, auth, HTTP clients: about
    14 MB) at the SDK version ``hadoop-aws`` 3.5.0 was built with, and the analytics accelerator
    ``hadoop-aws`` links to.
    """
    return [
        (("org.apache.hadoop", "hadoop-aws", hadoop_version()), False),
        (("software.amazon.awssdk", "s3-transfer-manager", "2.35.4"), True),
        (("software.amazon.s3.analyticsaccelerator", "analyticsaccelerator-s3", "1.3.1"), False),
    ]


def cached_s3a_jars() -> list[Path] | None:
    """The cached S3A connector classpath, or ``None`` if any part of it is missing."""
    parts = [cached_jars(coord) for coord, _ in s3a_coordinates()]
    return None if any(p is None for p in parts) else sorted({j for p in parts if p for j in p})


def resolve_s3a_jars(*, timeout_s: float = 900.0) -> list[Path]:
    """The S3A connector's classpath (:func:`s3a_coordinates`), downloaded on first use."""
    jars: set[Path] = set()
    for coord, transitive in s3a_coordinates():
        jars.update(resolve_jars(coord, transitive=transitive, timeout_s=timeout_s))
    return sorted(jars)


def resolve_delta_jars(*, timeout_s: float = 900.0) -> list[Path]:
    """Return delta-spark's classpath, downloading it from Maven Central on first use."""
    return resolve_jars(delta_coordinate(), timeout_s=timeout_s)
