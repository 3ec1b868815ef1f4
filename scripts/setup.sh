#!/usr/bin/env bash
# Install MobileMem and what its default (offline) run needs. Idempotent: seconds when everything is in place.
set -euo pipefail
cd "$(dirname "$0")/.."
# Screenshots: Debian's chromium (Playwright's own browser download does not work offline), CJK and emoji fonts.
if ! command -v chromium >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK" \
        || ! fc-list 2>/dev/null | grep -qi "Noto Color Emoji"; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-noto-cjk fonts-noto-color-emoji >/dev/null
fi
# The local model: a portable llama-cpp-python (no native CPU flags, no AMX) goes in first, from a cache of our
# own keyed by version and flags, so that pip finds the local-llm requirement satisfied instead of compiling
# natively (or reusing a native wheel from its own cache).
python3 scripts/llama_portable.py ensure
python3 -m pip install --quiet --disable-pip-version-check -e ".[dev,embed,mcp,llm,local-llm,render,hf,mem0,langmem,ray]"
python3 scripts/llama_portable.py verify   # pip did not replace it
python3 scripts/llama_portable.py smoke    # and it runs: a chat completion of a few hundred tokens, in a child process
