#!/usr/bin/env bash
# Create .venv/ at the repo root and install narrative-infill with the local model and dev tools.
# Idempotent. torch's CPU build goes in first: anything installed after it keeps it, whereas
# letting sentence-transformers pull torch on its own fetches a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==${TORCH_VERSION:-2.13.0}"
# llama-cpp-python has no wheel for this platform: the first install compiles it (~11 min on
# 2 cores); pip caches the built wheel for later installs.
.venv/bin/python -m pip install -q -e ".[local,dev]"
.venv/bin/narrative-infill setup-data
# The leaderboard page's tests drive a real headless Chromium (Debian's package) with Playwright.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
  else
    echo "note: install Chromium (apt-get install chromium) for the leaderboard page's browser test" >&2
  fi
fi
