#!/usr/bin/env bash
# The test suite on a fresh machine: set up, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m pytest -q "$@"
