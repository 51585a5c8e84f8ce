"""Instructions a baseline x86-64-v3 CPU lacks, found in ``objdump -d`` output (a test helper).

x86-64-v3 has AVX2, FMA, F16C, BMI1/2, LZCNT and MOVBE. What llama.cpp adds beyond that, and
what is looked for here: AMX (``ldtilecfg``, ``tile*``, ``tdp*``), AVX-512 (an EVEX-encoded
instruction: byte 0x62 after the legacy prefixes, which no 64-bit non-EVEX instruction starts
with; zmm registers, opmask registers k0-k7, xmm16-31/ymm16-31) and AVX-VNNI (``{vex} vpdp*``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

_LINE = re.compile(r"^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)\s*\t(.*)$")
_LEGACY_PREFIXES = {0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x66, 0x67, 0xF0, 0xF2, 0xF3}
_AVX512_REGISTERS = re.compile(r"%zmm\d|%[xy]mm(1[6-9]|2\d|3[01])\b|%k[0-7]\b")
_AMX = ("ldtilecfg", "sttilecfg", "tile", "tdp")


def beyond_v3(instruction_bytes: list[int], text: str) -> str | None:
    """'amx', 'avx512' or 'avx-vnni' for an instruction x86-64-v3 cannot run, else None."""
    mnemonic = text.split()[0] if text.split() else ""
    if mnemonic.startswith(_AMX):
        return "amx"
    first = next((b for b in instruction_bytes if b not in _LEGACY_PREFIXES), None)
    if first == 0x62 or _AVX512_REGISTERS.search(text):
        return "avx512"
    if text.startswith("{vex} vpdp"):
        return "avx-vnni"
    return None


def scan(objdump_text: str) -> dict[str, tuple[int, str]]:
    """kind -> (how many instructions of that kind, the first one's line)."""
    found: dict[str, tuple[int, str]] = {}
    for line in objdump_text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        kind = beyond_v3([int(b, 16) for b in match.group(1).split()], match.group(2).strip())
        if kind:
            count, example = found.get(kind, (0, line.strip()))
            found[kind] = (count + 1, example)
    return found


def disassemble(library: Path) -> str:
    return subprocess.run(["objdump", "-d", str(library)], capture_output=True, text=True, check=True).stdout
