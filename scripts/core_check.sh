#!/usr/bin/env bash
# The core install alone, as a user without extras has it: a fresh venv, `pip install -e .` (no torch, scipy,
# playwright or LLM), then synthesize the demo config without screenshots (omni.enabled: false, since
# rendering needs the render extra and chromium), validate it and evaluate bm25 on it. Fails if any of
# those core commands needs a package that pyproject.toml's core `dependencies` do not bring.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d "${TMPDIR:-/tmp}/keme-core.XXXXXX")"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check -e .
"$py" - "$work/demo-core.yaml" <<'EOF'
import sys

import yaml

with open("configs/demo.yaml", encoding="utf-8") as handle:
    config = yaml.safe_load(handle)
config["omni"]["enabled"] = False  # no screenshots: the render extra's
with open(sys.argv[1], "w", encoding="utf-8") as handle:
    yaml.safe_dump(config, handle, sort_keys=False, allow_unicode=True)
EOF
"$work/venv/bin/keme" synth --config "$work/demo-core.yaml" --out "$work/demo"
"$work/venv/bin/keme" validate "$work/demo" >/dev/null
"$work/venv/bin/keme" eval --data "$work/demo" --systems bm25 --out "$work/run"
"$py" - "$work/run/summary.json" <<'EOF'
import json
import sys

bm25 = json.load(open(sys.argv[1], encoding="utf-8"))["systems"]["bm25"]
assert bm25["questions"] > 0 and bm25["recall_any@5"] > 0, bm25
print(f"core install: synth, validate and eval bm25 ran ({bm25['questions']} questions)")
EOF
