#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite. Extra arguments go to pytest.
# Test files run in DELTA_CKPT_TEST_WORKERS processes (default 2, one per core; each process has one
# SparkSession); a later `-n 0` among the arguments runs everything in this process.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/bootstrap.sh
exec "$VENV/bin/python" -m pytest -n "${DELTA_CKPT_TEST_WORKERS:-2}" --dist loadfile "$@"
