"""The README's own run as an honest entry: SmolLM2 through ``narrative-infill serve``, ``inspect eval
narrative_infill/l2 --model llama-cpp-python/smollm2 -T data=demo`` as the README types it, at two
seeds (one server start), each submitted on the demo track, verified (every sample and ``--sample 5``)
and boarded together in a fresh process: every one verified, none refused (issue 57, whose first
finding was this run refused by ``submit`` and ``verify``). The other kinds:
tests/platform/test_honest_entries.py. ``-rP`` shows the counts."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from helpers import free_port
from honest_entries import BIN, CONSISTENT, VERIFIED, board, checked, counts, false_refusals

#: Both runs under ``serve`` took 13 minutes at a load of 18 on 2 cores (2026-12-07), past the default 900 s
pytestmark = [pytest.mark.local_server, pytest.mark.heavy, pytest.mark.timeout(3600)]

SEEDS = (1, 2)
#: The README's command, with a seed and a log folder of its own
README_EVAL = ["eval", "narrative_infill/l2", "--model", "llama-cpp-python/smollm2", "-T", "data=demo",
               "--max-retries", "2", "--timeout", "120"]  # fmt: skip


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """Both seeds' runs under one ``serve`` (one server start), then each entry's three commands."""
    root = tmp_path_factory.mktemp("honest-local")
    runs = " && ".join(
        shlex.join([str(BIN / "inspect"), *README_EVAL, "--seed", str(seed),
                    "--log-dir", str(root / "logs" / f"smollm2-seed{seed}"), "--display", "none"])
        for seed in SEEDS
    )  # fmt: skip
    served = subprocess.run(
        [str(BIN / "narrative-infill"), "serve", "--port", str(free_port()), "--", "bash", "-c", runs],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert served.returncode == 0, served.stderr[-3000:]
    return root


@pytest.fixture(scope="module")
def outcomes(root):
    return [o for seed in SEEDS for o in checked(root, "smollm2", f"smollm2-seed{seed}")]


def test_the_readme_run_at_several_seeds_is_verified(outcomes):
    print(counts(outcomes))
    refused = false_refusals(outcomes)
    assert not refused, "honest entries refused:\n" + "\n".join(refused)
    assert [o.category for o in outcomes] == [VERIFIED, VERIFIED, CONSISTENT] * len(SEEDS)


def test_the_board_verifies_both_seeds_in_a_fresh_process(root, outcomes):
    kinds = {f"smollm2-seed{seed}": "smollm2" for seed in SEEDS}
    boarded = board(kinds, root / "submissions", root / "logs", root / "site")
    print(counts(boarded))
    refused = false_refusals(boarded)
    assert not refused, "honest entries refused:\n" + "\n".join(refused)
    assert [o.category for o in boarded] == [VERIFIED] * len(SEEDS)
