#!/usr/bin/env bash
# Set up (if needed) and run the main job: the conformance matrix over the bundled implementations
# (reference, delta-spark, deltalake, and deltalake through the subprocess protocol) and fixtures/.
# Extra arguments go to `delta-ckpt conformance run` (see --help). Reports: reports/conformance/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/bootstrap.sh
exec "$VENV/bin/delta-ckpt" conformance run "$@"
