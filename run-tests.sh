#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/bootstrap.sh
exec "$VENV/bin/python" -m pytest "$@"
