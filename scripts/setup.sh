#!/usr/bin/env bash
# Install MobileMem and what its default (offline) run needs. Idempotent.
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
python3 -m pip install --quiet --disable-pip-version-check -e ".[dev,embed,mcp,llm,local-llm,render]"
