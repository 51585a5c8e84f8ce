#!/usr/bin/env bash
# install-llama-cpp.sh PYTHON: install a portable llama-cpp-python[server] into PYTHON's environment,
# building its wheel first if it is not cached. Idempotent.
#
# llama-cpp-python ships no wheel for Linux: pip compiles it, by default with -march=native, and
# keeps that wheel in its cache for the next install, whatever CPU that runs on; a CPU that
# advertises AMX or AVX-512 it cannot execute then dies with SIGILL on the first request. Built
# here for x86-64-v3 (AVX2, FMA, F16C, BMI2: Intel since 2013, AMD since 2015), never from pip's
# cache (--no-cache-dir), into a cache of our own keyed by version and flags. No runtime
# CPU-variant dispatch (GGML_CPU_ALL_VARIANTS): it picks a variant by what the CPU advertises,
# which is exactly what fails on a CPU that advertises AMX it cannot run.
# Environment: LLAMA_CPP_VERSION, LLAMA_CMAKE_ARGS (replace the flags).
set -euo pipefail
python=${1:?usage: install-llama-cpp.sh PYTHON}
LLAMA_CPP_VERSION=${LLAMA_CPP_VERSION:-0.3.36}
if [ -z "${LLAMA_CMAKE_ARGS:-}" ]; then
  case "$(uname -m)" in
    x86_64) LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF" ;;
    *) LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF" ;;  # the architecture's baseline
  esac
fi
key=$(printf '%s %s' "$LLAMA_CPP_VERSION" "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-16)
wheels="${XDG_CACHE_HOME:-$HOME/.cache}/narrative-infill/wheels/${LLAMA_CPP_VERSION}-${key}"
if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_CPP_VERSION (CMAKE_ARGS=$LLAMA_CMAKE_ARGS): about 6-11 min on 2 cores"
  mkdir -p "$(dirname "$wheels")"
  building=$(mktemp -d "$wheels.building.XXXXXX")
  trap 'rm -rf "$building"' EXIT
  # Built from source (an index may offer a prebuilt wheel), with only these flags: compiler flags
  # or scikit-build variables in the environment (CFLAGS=-march=native) would land in this cache.
  env -u CFLAGS -u CXXFLAGS -u CPPFLAGS -u SKBUILD_CMAKE_ARGS -u SKBUILD_CMAKE_DEFINE -u CMAKE_TOOLCHAIN_FILE \
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$python" -m pip wheel -q --no-cache-dir --no-binary llama-cpp-python \
    --no-deps -w "$building" "llama-cpp-python==$LLAMA_CPP_VERSION"
  rm -rf "$wheels" && mv "$building" "$wheels"  # the cache holds a whole wheel or none
fi
wheel=$(ls "$wheels"/llama_cpp_python-*.whl | head -1)
# Installed from this very file already? (pip records the file's URL in direct_url.json.) If not,
# it replaces whatever llama-cpp-python is there, a native build from pip's cache included.
if ! "$python" - "$wheel" <<'PY'
import json, pathlib, sys
from importlib.metadata import PackageNotFoundError, distribution
try:
    url = json.loads(distribution("llama-cpp-python").read_text("direct_url.json") or "{}").get("url", "")
except PackageNotFoundError:
    url = ""
sys.exit(url != pathlib.Path(sys.argv[1]).resolve().as_uri())
PY
then
  "$python" -m pip install -q --force-reinstall --no-deps "$wheel"
fi
"$python" -m pip install -q "$wheel[server]"  # its dependencies; the build is kept
