#!/usr/bin/env bash
# The main job on a fresh machine: set up, then run the demo end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
keme demo "$@"
