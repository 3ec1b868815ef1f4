#!/usr/bin/env bash
# The test suite on a fresh machine: set up, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m ruff check .           # lint and import order (pyproject.toml [tool.ruff])
python3 -m ruff format --check .  # the code is as `ruff format` writes it
bash scripts/core_check.sh        # the core install alone (fresh venv, no extras): synth, validate, eval bm25
# one worker per core (pytest-xdist); the 20 slowest tests are printed: where CI time goes. The tests that
# start a local Ray run after, in a pytest of their own (a Ray inside an xdist worker once took it down)
python3 -m pytest -q -n auto -m "not ray" --durations=20 "$@"
python3 -m pytest -q -m ray "$@" || [ $? -eq 5 ]  # 5: a selection of tests with none of them
