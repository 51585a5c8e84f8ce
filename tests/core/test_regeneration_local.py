"""Re-generation on the real local model (issue 27): SmolLM2 behind llama-cpp-python's server,
an honest demo submission passes ``verify --regenerate`` and its gold-copy forgery fails.

Seeded, so that neither outcome is a draw: the generations carry a seed, which the logs record
and the re-generation reuses, so the honest answers come back unchanged (every difference 0: the
test's p-value is 1), while the gold copy is above the model on every drawn instance (p <= 2**-11
with 12 drawn, far below 0.01). Unseeded, the honest check is a test at level 0.01 that fails
about once in a hundred runs: ``benchmarks/regeneration_power.py`` without ``--seed`` measures
that rate over repeated checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.local_server


def test_honest_passes_and_the_gold_copy_fails_on_smollm2(tmp_path):
    script = Path(__file__).parents[2] / "benchmarks" / "regeneration_power.py"
    command = [
        sys.executable,
        str(script),
        "--k",
        "12",
        "--honest",
        "1",
        "--forged",
        "1",
        "--seed",
        "42",
        "--keep",
        str(tmp_path),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "k=12 false_alarms=0/1 detected=1/1" in done.stdout, done.stdout
