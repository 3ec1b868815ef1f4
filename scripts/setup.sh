#!/usr/bin/env bash
# Install MobileMem and what its default (offline) run needs. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[dev,embed,mcp]"
