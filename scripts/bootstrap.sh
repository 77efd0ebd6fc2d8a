#!/usr/bin/env bash
# Create the virtualenv (if it is missing or its inputs changed) with the pinned dependency set,
# then resolve delta-spark's jars from Maven Central into .cache/ (once; later runs are offline).
# Sourced by run-tests.sh and run-matrix.sh; sets VENV.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${DELTA_CKPT_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
STAMP="$VENV/.delta-ckpt-installed"
want="$(cat "$ROOT/pyproject.toml" "$ROOT/constraints.txt" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null || true)" != "$want" ]; then
  # A virtualenv whose editable install is another checkout's (DELTA_CKPT_VENV shared with a worktree) is
  # never re-pointed at this one: the other checkout would then run this one's code.
  other="$("$VENV/bin/python" -I - "$ROOT" 2>/dev/null <<'PY' || true
import json, sys, urllib.parse, urllib.request
from importlib import metadata
from pathlib import Path
try:
    info = json.loads(metadata.distribution("delta-checkpoint-conformance").read_text("direct_url.json") or "{}")
except (metadata.PackageNotFoundError, ValueError):
    sys.exit()
if info.get("dir_info", {}).get("editable"):
    path = Path(urllib.request.url2pathname(urllib.parse.urlparse(info["url"]).path))
    if path.resolve() != Path(sys.argv[1]).resolve():
        print(path)
PY
)"
  if [ -n "$other" ]; then
    echo "[setup] $VENV is the editable install of $other and out of date for $ROOT: not re-installing" \
      "it here (point DELTA_CKPT_VENV at a virtualenv of this checkout, or leave it unset)" >&2
    exit 1
  fi
  echo "[setup] installing the pinned environment into $VENV (first run: a few minutes)" >&2
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -c "$ROOT/constraints.txt" -e "$ROOT[dev]"
  echo "$want" > "$STAMP"
fi
# Resolve the oracle's jars now (the conformance side's `env --resolve-jars`, conformance/cli.py), so the
# first Spark start does not stall on downloads.
# Outside CI a failure only warns (delta-spark tests then skip, loudly); under CI=true it fails.
if ! "$VENV/bin/delta-ckpt" env --resolve-jars >&2; then
  if [ "${CI:-}" = "true" ]; then
    echo "[setup] delta-spark jars could not be resolved and CI=true: failing" >&2
    exit 1
  fi
  echo "[setup] WARNING: delta-spark jars unavailable; delta-spark tests will be skipped" >&2
fi
# Build the Kernel Java harness (bundled implementation `kernel-java`): javac against the Kernel jars just
# resolved and pyspark's jars, no download; cached under .cache/kernel-harness/ by source and classpath.
# Outside CI a failure only warns (kernel-java tests then skip, loudly); under CI=true it fails.
if ! "$VENV/bin/python" -m conformance.adapters.kernel_java; then
  if [ "${CI:-}" = "true" ]; then
    echo "[setup] the Kernel Java harness could not be built and CI=true: failing" >&2
    exit 1
  fi
  echo "[setup] WARNING: Kernel Java harness unavailable; kernel-java tests will be skipped" >&2
fi
# Build the tests' HDFS launcher (tests/support/servers/hdfs.py): hadoop-client-minicluster of the Hadoop
# version pyspark ships, resolved into .cache/ like delta-spark's jars, and a javac-compiled MiniDFSCluster
# main class. Outside CI a failure only warns (HDFS tests then skip, loudly); under CI=true it fails.
if ! (cd "$ROOT" && "$VENV/bin/python" -m tests.support.servers.hdfs); then
  if [ "${CI:-}" = "true" ]; then
    echo "[setup] the MiniDFSCluster launcher could not be built and CI=true: failing" >&2
    exit 1
  fi
  echo "[setup] WARNING: MiniDFSCluster launcher unavailable; HDFS tests will be skipped" >&2
fi
# Build the driver JVM's class archive once into .cache/spark-cds/ (scripts/build_class_archive.py: a Java 17
# AppCDS archive of the classes a short command loads, keyed by java and pyspark); local-master sessions
# then start with those classes parsed and verified (reference_impl/storage/class_archive.py). Only an
# optimisation: a failure warns.
if ! "$VENV/bin/python" "$ROOT/scripts/build_class_archive.py"; then
  echo "[setup] WARNING: the Spark class archive could not be built; Spark starts without it" >&2
fi
# How long the set-up took (bash's SECONDS: since the script that sourced this one started), so a run's wall
# time splits into set-up and the run itself.
echo "[setup] ready after ${SECONDS} s" >&2
export VENV
