#!/usr/bin/env bash
# The test suite on a fresh machine: set up, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m ruff check .           # lint and import order (pyproject.toml [tool.ruff])
python3 -m ruff format --check .  # the code is as `ruff format` writes it
bash scripts/core_check.sh        # the core install alone (fresh venv, no extras): synth, validate, eval bm25
# one worker per core (pytest-xdist; a module that starts a local Ray keeps to one worker: xdist_group);
# the 20 slowest tests are printed: where CI time goes
python3 -m pytest -q -n auto --dist loadgroup --durations=20 "$@"
