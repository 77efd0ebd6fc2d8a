"""The driver JVM's class-data-sharing (AppCDS) archive in the local cache: where it is, whether to map it.

Issue #12 (a 10-commit table: ``delta-ckpt checkpoint`` ≤ 6 s, ``snapshot`` ≤ 5 s): a short
command's JVM spends much of its CPU loading and verifying Spark's classes from ~280 jars. Java 17
can dump the classes a run loaded into a *dynamic archive* (``-XX:ArchiveClassesAtExit``) and map
it into later JVMs (``-XX:SharedArchiveFile``), parsed and verified already.
``scripts/build_class_archive.py`` (run by ``scripts/bootstrap.sh``) builds it once;
:mod:`reference_impl.spark.session` maps it (local master only). This module holds the files:

* :func:`archive_path`: ``<cache>/spark-cds/<key>.jsa``, the key hashing the ``java`` binary,
  the pyspark version and its jars' names, sizes and times, and the training workload's version
  (a new Java, pyspark or workload: a new archive).
  The JVM checks the archive itself too (its build, the classpath, each jar's size and time) and
  runs without it on a mismatch — silently: its CDS log is off (:data:`USE_FLAGS`), as the JVM's
  warnings would go to stdout (``--json``).
* The JVM never archives a class of a *signed* jar: in pyspark's jars that is Janino and its
  commons-compiler (``META-INF/DUMMY.SF``), ~450 classes that every query's code generation loads.
  :func:`write_unsigned_jars` copies them without their signature files into
  ``<cache>/spark-cds/<key>.jars/``, and a session with the archive puts those copies first on the
  driver's classpath (:func:`archive_classpath`, ``spark.driver.extraClassPath``): the same classes,
  now archived with the rest.
* CDS refuses a classpath directory that holds files, and Spark puts ``SPARK_CONF_DIR`` first on
  the driver's classpath: a session with the archive uses :func:`empty_conf_dir` and gives log4j
  the ``log4j2.properties`` of a conf directory that holds nothing else (:func:`log4j_only`) by a
  system property (:func:`log4j_flag`) — the same logging.

Cache: :func:`spec.cache.cache_dir` (``$DELTA_CKPT_CACHE``, default ``<project>/.cache``), the
one location the suite's jars and Java builds use too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import zipfile
from importlib import metadata
from pathlib import Path

from spec.spark_conf import class_archive_conf_dir

#: Mapping the archive; its log off (a mismatch is not an error: the JVM runs without the archive).
USE_FLAGS = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
LOG4J_FILE = "log4j2.properties"
#: The training workload's version (``scripts/build_class_archive.py``), part of the key: a workload
#: that loads other classes (2: the commits' non-file lines reach Spark as Arrow; 3: Janino from the
#: unsigned copies of :func:`write_unsigned_jars`) gets a new archive.
WORKLOAD = "3"
#: A jar's signature files: a jar holding one is signed.
_SIGNATURE = re.compile(r"META-INF/[^/]+\.(SF|DSA|RSA|EC)", re.IGNORECASE)


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).is_file() else None


def _pyspark_jars() -> Path | None:
    spec = importlib.util.find_spec("pyspark")
    return None if spec is None or spec.origin is None else Path(spec.origin).parent / "jars"


def archive_key() -> str | None:
    """A hash of the ``java`` binary, of pyspark's version and jars and of :data:`WORKLOAD`; ``None``
    without Java or pyspark.

    The jars' times are in the key on purpose, not only their contents: the JVM maps a dynamic
    archive only when every jar of the classpath it was dumped with has the same size and
    modification time (OpenJDK ``src/hotspot/share/cds/filemap.cpp``,
    ``SharedClassPathEntry::validate``: "A jar file is not the one used while building the shared
    archive file"), and otherwise runs without it, silently (:data:`USE_FLAGS`). A new venv installs
    pyspark's jars anew, with the time of the install, so an archive keyed by content would be
    found and then refused by every JVM. Reusing one across venvs would need the archive dumped
    against copies of the jars that keep their times (in the cache), and sessions that put those
    copies on the classpath instead of pyspark's own."""
    java, jars = _java(), _pyspark_jars()
    if java is None or jars is None:
        return None
    stat = java.stat()
    facts = [str(java), str(stat.st_size), str(stat.st_mtime_ns), metadata.version("pyspark"), WORKLOAD]
    for entry in sorted(os.scandir(jars), key=lambda e: e.name):
        jar = entry.stat()
        facts.append(f"{entry.name}:{jar.st_size}:{jar.st_mtime_ns}")
    return hashlib.sha256("\n".join(facts).encode()).hexdigest()[:20]


def archive_dir() -> Path:
    return class_archive_conf_dir().parent


def archive_path() -> Path | None:
    key = archive_key()
    return None if key is None else archive_dir() / f"{key}.jsa"


def unsigned_jars_dir() -> Path | None:
    """``<cache>/spark-cds/<key>.jars``: where :func:`write_unsigned_jars` puts the archive's copies."""
    key = archive_key()
    return None if key is None else archive_dir() / f"{key}.jars"


def write_unsigned_jars(directory: Path, jars: Path | None = None) -> list[Path]:
    """Copies of the signed jars of ``jars`` (default: pyspark's) in ``directory``, without their
    signature files (the JVM archives none of a signed jar's classes); the copies written, by name."""
    jars = jars or _pyspark_jars()
    written: list[Path] = []
    for jar in sorted(jars.glob("*.jar")) if jars is not None else []:
        with zipfile.ZipFile(jar) as source:
            if not any(_SIGNATURE.fullmatch(name) for name in source.namelist()):
                continue
            directory.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(directory / jar.name, "w") as copy:
                for entry in source.infolist():
                    if not _SIGNATURE.fullmatch(entry.filename):
                        copy.writestr(entry, source.read(entry))
        written.append(directory / jar.name)
    return written


def archive_classpath() -> str | None:
    """The driver classpath entries of a session with the archive: the unsigned copies, or ``None``."""
    directory = unsigned_jars_dir()
    jars = sorted(directory.glob("*.jar")) if directory is not None and directory.is_dir() else []
    return os.pathsep.join(str(jar) for jar in jars) or None


def empty_conf_dir(*, create: bool = True) -> Path:
    """The ``SPARK_CONF_DIR`` of a session with the archive: an empty directory (its name is
    :func:`spec.spark_conf.class_archive_conf_dir`, which every new session of this project refuses)."""
    path = class_archive_conf_dir()
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def log4j_only(conf_dir: Path) -> bool:
    """Whether ``conf_dir`` holds a ``log4j2.properties`` and nothing else (a system property can replace it)."""
    return conf_dir.is_dir() and {entry.name for entry in conf_dir.iterdir()} == {LOG4J_FILE}


def log4j_flag(conf_dir: Path) -> str:
    return f"-Dlog4j2.configurationFile={(conf_dir / LOG4J_FILE).as_uri()}"


def archive_java_options(conf_dir: Path) -> str | None:
    """Driver flags mapping the archive with ``conf_dir``'s log4j file, or ``None`` if there is no archive."""
    path = archive_path()
    if path is None or not path.is_file():
        return None
    return f"-XX:SharedArchiveFile={path} {USE_FLAGS} {log4j_flag(conf_dir)}"
