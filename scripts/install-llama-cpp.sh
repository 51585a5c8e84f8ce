#!/usr/bin/env bash
# install-llama-cpp.sh PYTHON: install a portable llama-cpp-python[server] into PYTHON's environment,
# building its wheel first if it is not cached. Idempotent.
#
# llama-cpp-python ships no wheel for Linux: pip compiles it, by default with -march=native, and
# keeps that wheel in its cache for the next install, whatever CPU that runs on; a CPU that
# advertises AMX or AVX-512 it cannot execute then dies with SIGILL on the first request. Built
# here for x86-64-v3 (AVX2, FMA, F16C, BMI2: Intel since 2013, AMD since 2015), never from pip's
# cache (--no-cache-dir), into a cache of our own keyed by version and flags, each wheel stamped
# with its flags and sha256 so that only a wheel built here is reused. No runtime
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
# The folder's name is only a key: a wheel copied into it by hand (a native one, from another
# cache or image) would be reused as if built here. So each build writes a stamp beside its wheel,
# "llama-cpp-python==VERSION", "CMAKE_ARGS=FLAGS", then "SHA256  WHEEL", and a cached wheel is
# reused only when its stamp names these very flags and its bytes still have that sha256.
stamp=build-stamp
stamped_for=$(printf 'llama-cpp-python==%s\nCMAKE_ARGS=%s' "$LLAMA_CPP_VERSION" "$LLAMA_CMAKE_ARGS")
cached_wheel() {  # the wheel in $wheels its stamp vouches for; or nothing, and why on stderr
  local checksum
  if [ ! -f "$wheels/$stamp" ]; then
    if ls "$wheels"/*.whl >/dev/null 2>&1; then
      echo "refusing the cached wheel in $wheels: no build stamp (not built by this script, or built before it stamped its wheels); rebuilding" >&2
    fi
    return 1
  fi
  if [ "$(head -n 2 "$wheels/$stamp")" != "$stamped_for" ]; then
    echo "refusing the cached wheel in $wheels: its stamp says it was built as $(head -n 2 "$wheels/$stamp" | tr '\n' ' '), not with CMAKE_ARGS=$LLAMA_CMAKE_ARGS; rebuilding" >&2
    return 1
  fi
  checksum=$(sed -n 3p "$wheels/$stamp")
  if ! [[ $checksum =~ ^[0-9a-f]{64}\ \ llama_cpp_python-[^/]*\.whl$ ]] \
    || ! (cd "$wheels" && sha256sum --check --status <<<"$checksum" 2>/dev/null); then
    echo "refusing the cached wheel in $wheels: it does not match the sha256 its build stamp recorded (replaced or altered since it was built); rebuilding" >&2
    return 1
  fi
  echo "$wheels/${checksum#*  }"
}
rebuilt=no
if ! wheel=$(cached_wheel); then
  echo "building llama-cpp-python $LLAMA_CPP_VERSION (CMAKE_ARGS=$LLAMA_CMAKE_ARGS): about 6-11 min on 2 cores"
  mkdir -p "$(dirname "$wheels")"
  building=$(mktemp -d "$wheels.building.XXXXXX")
  trap 'rm -rf "$building"' EXIT
  # Built from source (an index may offer a prebuilt wheel), with only these flags: compiler flags
  # or scikit-build variables in the environment (CFLAGS=-march=native) would land in this cache.
  env -u CFLAGS -u CXXFLAGS -u CPPFLAGS -u SKBUILD_CMAKE_ARGS -u SKBUILD_CMAKE_DEFINE -u CMAKE_TOOLCHAIN_FILE \
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$python" -m pip wheel -q --no-cache-dir --no-binary llama-cpp-python \
    --no-deps -w "$building" "llama-cpp-python==$LLAMA_CPP_VERSION"
  built=("$building"/llama_cpp_python-*.whl)
  [ "${#built[@]}" -eq 1 ] && [ -f "${built[0]}" ] || { echo "pip wheel did not leave exactly one llama_cpp_python wheel in $building" >&2; exit 1; }
  { printf '%s\n' "$stamped_for"; (cd "$building" && sha256sum "$(basename "${built[0]}")"); } >"$building/$stamp"
  rm -rf "$wheels" && mv "$building" "$wheels"  # the cache holds a whole stamped wheel or none
  wheel="$wheels/$(basename "${built[0]}")"
  rebuilt=yes  # same path as the refused wheel, which may be the one installed: install this one
fi
# Installed from this very file already? (pip records the file's URL in direct_url.json.) If not,
# or if the file was just built, it replaces whatever llama-cpp-python is there, a native build
# from pip's cache included.
if [ "$rebuilt" = yes ] || ! "$python" - "$wheel" <<'PY'
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
