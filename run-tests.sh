#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite. Extra arguments go to pytest.
# Test files run in DELTA_CKPT_TEST_WORKERS processes (default 2, one per core; each process has one
# SparkSession); a later `-n 0` among the arguments runs everything in this process.
# --no-loadscope-reorder: hand out the files in the order tests/conftest.py sorts them (the heaviest
# first) — xdist's default re-sorts them by their number of tests, which sends the slow files with
# few tests (real servers, clusters, killed writers) last.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/bootstrap.sh
exec "$VENV/bin/python" -m pytest -n "${DELTA_CKPT_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@"
