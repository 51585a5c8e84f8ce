"""The installed llama.cpp runs on any x86-64-v3 CPU: no AMX, AVX-512 or AVX-VNNI instruction
in its libraries (a natively built one on a CPU that advertises them has them)."""

import hashlib
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import NO_SKIP_VARIABLE, require
from instruction_set_scan import beyond_v3, disassemble, scan

SAMPLE = """
libggml-cpu.so:     file format elf64-x86-64

Disassembly of section .text:

0000000000012340 <ggml_vec_dot_f16>:
   12340:\tc5 fc 28 05 00 00 00 \tvmovaps 0x0(%rip),%ymm0
   12347:\t00 
   12348:\tc4 e2 7d b8 c1       \tvfmadd231ps %ymm1,%ymm0,%ymm0
   1234d:\t62 f1 7c 48 28 c1    \tvmovaps %zmm1,%zmm0
   12353:\t62 f1 fd 08 6f c1    \tvmovdqa64 %xmm1,%xmm0
   12359:\tc5 f8 93 c1          \tkmovw  %k1,%eax
   1235d:\tc4 e2 7b 4b 04 08    \ttileloadd (%rax,%rcx,1),%tmm0
   12363:\tc4 e2 78 49 00       \tldtilecfg (%rax)
   12368:\tc4 e2 7d 50 c1       \t{vex} vpdpbusd %ymm1,%ymm0,%ymm0
   1236d:\t66 62 f1 7c 08 28 c1 \tvmovaps %xmm1,%xmm0
"""


def test_the_scan_finds_each_kind_and_passes_v3_code():
    found = scan(SAMPLE)
    assert {kind: count for kind, (count, _) in found.items()} == {"avx512": 4, "amx": 2, "avx-vnni": 1}
    assert found["avx512"][1].endswith("vmovaps %zmm1,%zmm0")
    assert beyond_v3([0xC5, 0xFC, 0x28, 0xC1], "vmovaps %ymm1,%ymm0") is None  # AVX
    assert beyond_v3([0xC4, 0xE2, 0xF3, 0xF5, 0xC0], "pdep %rax,%rcx,%rax") is None  # BMI2
    assert beyond_v3([0x62, 0xE1, 0x7C, 0x08, 0x28, 0xC1], "vmovaps %xmm1,%xmm16") == "avx512"


def installed_libraries() -> list[Path]:
    """The shared libraries the installed llama_cpp loads, each file once (the wheel has copies)."""
    spec = importlib.util.find_spec("llama_cpp")
    require(spec is not None and spec.submodule_search_locations, "llama-cpp-python is not installed")
    require(shutil.which("objdump") is not None, "objdump (binutils) is not installed")
    folder = Path(next(iter(spec.submodule_search_locations))) / "lib"
    unique: dict[str, Path] = {}
    for path in sorted(folder.glob("*.so*")):
        if path.is_file() and not path.is_symlink():
            unique.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    return list(unique.values())


@pytest.mark.subprocess
@pytest.mark.heavy
@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 instruction sets")
def test_installed_llama_cpp_libraries_need_nothing_beyond_x86_64_v3():
    libraries = installed_libraries()
    assert any(path.name.startswith("libggml-cpu") for path in libraries), libraries
    found = {path.name: scan(disassemble(path)) for path in libraries}
    assert not {name: kinds for name, kinds in found.items() if kinds}, found


@pytest.mark.subprocess
@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 instruction sets")
def test_without_objdump_the_disassembly_skips_and_in_ci_fails(tmp_path):
    """A CI machine without binutils must not pass the portability check by skipping it."""

    def run(**env: str) -> subprocess.CompletedProcess:
        # Its own tier (addopts deselects it); its skip is not a run of it for the tier check.
        hidden = (NO_SKIP_VARIABLE, "NARRATIVE_INFILL_TEST_IDS")
        environment = {k: v for k, v in os.environ.items() if k not in hidden} | {"PATH": str(tmp_path)}
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "-q", "-m", "subprocess",
             f"{__file__}::test_installed_llama_cpp_libraries_need_nothing_beyond_x86_64_v3"],
            capture_output=True, text=True, timeout=300, env=environment | env, check=False,
        )  # fmt: skip

    skipped = run()
    assert skipped.returncode == 0 and "1 skipped" in skipped.stdout, skipped.stdout
    failed = run(**{NO_SKIP_VARIABLE: "1"})
    assert failed.returncode == 1 and "this test may not skip" in failed.stdout, failed.stdout
