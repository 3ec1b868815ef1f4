#!/usr/bin/env bash
# Rewrite the golden digests after an intended change to what `keme synth` writes. Review the diff of
# tests/golden/*.sha256 with the change that caused it: a digest that moves unexpectedly is a bug.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for name in demo year; do
  python -m keme.cli synth --config "configs/$name.yaml" --out "$out/$name" >/dev/null
  (cd "$out/$name" && find . -type f -printf '%P\n' | sort | xargs sha256sum) >"tests/golden/$name.sha256"
done
