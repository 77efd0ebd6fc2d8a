#!/usr/bin/env bash
# Set up (if needed) and run the main job. Extra arguments go to the command.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/bootstrap.sh
exec "$VENV/bin/delta-ckpt" demo "$@"
