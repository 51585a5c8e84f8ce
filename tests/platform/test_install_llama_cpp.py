"""scripts/install-llama-cpp.sh, run with a stand-in Python that records what it is asked to do
(no compiler, no network): the wheel is rebuilt when the flags change, reused when they do not
and its build stamp vouches for it, and built from source with nothing but the chosen flags."""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import REPO

SCRIPT = REPO / "scripts" / "install-llama-cpp.sh"
WHEEL = "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl"
INSTALLED, INSTALLED_FROM = "installed.whl", "installed-from"  # the fake environment's state, in tmp_path
#: The stand-in for "$python": logs argv and the build's environment; `pip wheel` writes a wheel
#: holding the flags it was built with; `pip install --no-deps W` copies W to INSTALLED and records
#: W's URL as pip's direct_url.json would, which the "is this wheel installed?" check reads.
FAKE_PYTHON = f"""#!{sys.executable}
import json, os, sys
from pathlib import Path
argv = sys.argv[1:]
state = Path(os.environ["FAKE_PYTHON_LOG"]).parent
watched = ("CMAKE_ARGS", "CFLAGS", "CXXFLAGS", "SKBUILD_CMAKE_ARGS", "SKBUILD_CMAKE_DEFINE")
with open(os.environ["FAKE_PYTHON_LOG"], "a") as log:
    log.write(json.dumps({{"argv": argv, "env": {{k: os.environ.get(k) for k in watched}}}}) + "\\n")
if argv[:3] == ["-m", "pip", "wheel"]:
    folder = Path(argv[argv.index("-w") + 1])
    (folder / "{WHEEL}").write_bytes(("built with " + os.environ["CMAKE_ARGS"]).encode())
elif argv[:3] == ["-m", "pip", "install"] and "--no-deps" in argv:
    wheel = Path(argv[-1])
    (state / "{INSTALLED}").write_bytes(wheel.read_bytes())
    (state / "{INSTALLED_FROM}").write_text(wheel.resolve().as_uri())
elif argv[:1] == ["-"]:
    sys.stdin.read()
    source = state / "{INSTALLED_FROM}"
    sys.exit(not source.exists() or source.read_text() != Path(argv[1]).resolve().as_uri())
"""
PORTABLE = b"-DGGML_NATIVE=OFF"  # in the default build's wheel


@pytest.fixture
def install(tmp_path):
    python = tmp_path / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    log = tmp_path / "calls.jsonl"

    def run(**env: str) -> SimpleNamespace:
        """This run's calls of pip wheel (builds), the bytes of the wheel installed after it, its stderr."""
        log.unlink(missing_ok=True)
        clean = {k: v for k, v in os.environ.items() if k not in ("LLAMA_CMAKE_ARGS", "CFLAGS", "CXXFLAGS")}
        environment = clean | {"XDG_CACHE_HOME": str(tmp_path / "cache"), "FAKE_PYTHON_LOG": str(log)} | env
        command = ["bash", str(SCRIPT), str(python)]
        done = subprocess.run(
            command, env=environment, check=True, timeout=60, capture_output=True, text=True
        )
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        return SimpleNamespace(
            builds=[call for call in calls if call["argv"][:3] == ["-m", "pip", "wheel"]],
            installed=(tmp_path / INSTALLED).read_bytes(),
            stderr=done.stderr,
        )

    return run


@pytest.mark.subprocess
def test_the_cached_wheel_is_keyed_by_the_flags(install):
    [build] = install().builds
    assert "-DGGML_NATIVE=OFF" in build["env"]["CMAKE_ARGS"]
    assert install().builds == []  # same version and flags: the cached wheel
    [rebuilt] = install(LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=OFF").builds
    assert rebuilt["env"]["CMAKE_ARGS"] == "-DGGML_NATIVE=OFF -DGGML_AVX2=OFF"
    reused = install()
    assert reused.builds == [] and PORTABLE in reused.installed  # the first build is still there


@pytest.mark.subprocess
def test_the_build_sees_only_the_chosen_flags(install):
    """CFLAGS=-march=native (or scikit-build's own variables) in the user's environment would build
    a native wheel and cache it under the portable key; an index with a prebuilt wheel would skip
    the build altogether."""
    [build] = install(
        CFLAGS="-march=native", CXXFLAGS="-march=native", SKBUILD_CMAKE_DEFINE="GGML_NATIVE=ON",
        SKBUILD_CMAKE_ARGS="-DGGML_NATIVE=ON", CMAKE_ARGS="-DGGML_NATIVE=ON",
    ).builds  # fmt: skip
    assert [k for k, v in build["env"].items() if v is not None] == ["CMAKE_ARGS"], build["env"]
    assert "-DGGML_NATIVE=ON" not in build["env"]["CMAKE_ARGS"]
    argv = build["argv"]
    assert argv[argv.index("--no-binary") + 1] == "llama-cpp-python" and "--no-cache-dir" in argv


def cache_folder(tmp_path: Path) -> Path:
    """The one keyed folder of the cache the fixture's runs use."""
    [folder] = (tmp_path / "cache" / "narrative-infill" / "wheels").iterdir()
    return folder


@pytest.mark.subprocess
def test_a_wheel_copied_into_the_cache_by_hand_is_rebuilt_not_installed(install, tmp_path):
    """A native wheel dropped into the portable key's folder (shared cache, image, a hurried user)
    has no build stamp: the script says so and builds its own."""
    install()
    folder = cache_folder(tmp_path)
    for path in folder.iterdir():
        path.unlink()
    (folder / WHEEL).write_bytes(b"native build")
    # ... and installed from there (as the script did before it stamped): the rebuilt wheel has the
    # same path, so "installed from this file already" must not keep the native one.
    (tmp_path / INSTALLED).write_bytes(b"native build")
    (tmp_path / INSTALLED_FROM).write_text((folder / WHEEL).resolve().as_uri())
    run = install()
    assert len(run.builds) == 1 and PORTABLE in run.installed, run.stderr
    assert "no build stamp" in run.stderr and "rebuilding" in run.stderr, run.stderr
    assert install().builds == []  # the rebuilt wheel is stamped, so reused


@pytest.mark.subprocess
def test_a_cached_wheel_replaced_after_its_build_is_rebuilt(install, tmp_path):
    install()
    (cache_folder(tmp_path) / WHEEL).write_bytes(
        b"native build"
    )  # the stamp stays, the sha256 no longer matches
    run = install()
    assert len(run.builds) == 1 and PORTABLE in run.installed, run.stderr
    assert "sha256" in run.stderr and "rebuilding" in run.stderr, run.stderr


@pytest.mark.subprocess
def test_a_cache_folder_stamped_for_other_flags_is_rebuilt(install, tmp_path):
    """A whole folder, wheel and stamp, built with -DGGML_NATIVE=ON and copied under the portable key."""
    install(LLAMA_CMAKE_ARGS="-DGGML_NATIVE=ON")
    native = cache_folder(tmp_path)
    install()
    [portable] = [folder for folder in native.parent.iterdir() if folder != native]
    for path in portable.iterdir():
        path.unlink()
    for path in native.iterdir():
        (portable / path.name).write_bytes(path.read_bytes())
    run = install()
    assert len(run.builds) == 1 and PORTABLE in run.installed, run.stderr
    assert "-DGGML_NATIVE=ON" in run.stderr and "rebuilding" in run.stderr, run.stderr
