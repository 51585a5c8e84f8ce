"""scripts/install-llama-cpp.sh, run with a stand-in Python that records what it is asked to do
(no compiler, no network): the wheel is rebuilt when the flags change, reused when they do not,
and built from source with nothing but the chosen flags."""

import json
import os
import subprocess
import sys

import pytest
from helpers import REPO

SCRIPT = REPO / "scripts" / "install-llama-cpp.sh"
#: The stand-in for "$python": logs argv and the build's environment; `pip wheel` writes an empty
#: wheel; the "is this wheel installed?" check says no.
FAKE_PYTHON = f"""#!{sys.executable}
import json, os, sys
from pathlib import Path
argv = sys.argv[1:]
watched = ("CMAKE_ARGS", "CFLAGS", "CXXFLAGS", "SKBUILD_CMAKE_ARGS", "SKBUILD_CMAKE_DEFINE")
with open(os.environ["FAKE_PYTHON_LOG"], "a") as log:
    log.write(json.dumps({{"argv": argv, "env": {{k: os.environ.get(k) for k in watched}}}}) + "\\n")
if argv[:3] == ["-m", "pip", "wheel"]:
    folder = Path(argv[argv.index("-w") + 1])
    (folder / "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl").write_bytes(b"")
elif argv[:1] == ["-"]:
    sys.stdin.read()
    sys.exit(1)
"""


@pytest.fixture
def install(tmp_path):
    python = tmp_path / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    log = tmp_path / "calls.jsonl"

    def run(**env: str) -> list[dict]:
        """The script's calls of pip wheel (the builds) in this run."""
        log.unlink(missing_ok=True)
        clean = {k: v for k, v in os.environ.items() if k not in ("LLAMA_CMAKE_ARGS", "CFLAGS", "CXXFLAGS")}
        environment = clean | {"XDG_CACHE_HOME": str(tmp_path / "cache"), "FAKE_PYTHON_LOG": str(log)} | env
        subprocess.run(["bash", str(SCRIPT), str(python)], env=environment, check=True, timeout=60)
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        return [call for call in calls if call["argv"][:3] == ["-m", "pip", "wheel"]]

    return run


def test_the_cached_wheel_is_keyed_by_the_flags(install):
    [build] = install()
    assert "-DGGML_NATIVE=OFF" in build["env"]["CMAKE_ARGS"]
    assert install() == []  # same version and flags: the cached wheel
    [rebuilt] = install(LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=OFF")
    assert rebuilt["env"]["CMAKE_ARGS"] == "-DGGML_NATIVE=OFF -DGGML_AVX2=OFF"
    assert install() == []  # the first build is still there


def test_the_build_sees_only_the_chosen_flags(install):
    """CFLAGS=-march=native (or scikit-build's own variables) in the user's environment would build
    a native wheel and cache it under the portable key; an index with a prebuilt wheel would skip
    the build altogether."""
    [build] = install(
        CFLAGS="-march=native", CXXFLAGS="-march=native", SKBUILD_CMAKE_DEFINE="GGML_NATIVE=ON",
        SKBUILD_CMAKE_ARGS="-DGGML_NATIVE=ON", CMAKE_ARGS="-DGGML_NATIVE=ON",
    )  # fmt: skip
    assert [k for k, v in build["env"].items() if v is not None] == ["CMAKE_ARGS"], build["env"]
    assert "-DGGML_NATIVE=ON" not in build["env"]["CMAKE_ARGS"]
    argv = build["argv"]
    assert argv[argv.index("--no-binary") + 1] == "llama-cpp-python" and "--no-cache-dir" in argv
