"""Every null rule and the gold as an honest entry: ``--model baseline/<rule>`` on the demo set,
each submitted, verified (every sample and ``--sample 5``) and the thirteen boarded together in a
fresh process: every one verified, none refused (issue 57). Slow tier: ``submit`` reads every
answer's fluency with the packaged SmolLM2, and the whole-story rules' answers are long (about
15 minutes at a load of 15 on 2 cores). The other kinds: tests/platform/test_honest_entries.py;
``-rP`` shows the counts."""

from __future__ import annotations

import pytest
from honest_entries import Outcome, assert_honest, board, checked, demo_eval

from narrative_infill.data.baselines import BASELINES

pytestmark = [pytest.mark.slow, pytest.mark.heavy]  # scored with the packaged MiniLM backbones


@pytest.fixture(scope="module")
def baselines(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("honest-baselines")
    outcomes: list[Outcome] = []
    for rule in BASELINES:
        demo_eval(root, f"baseline-{rule}", f"baseline/{rule}")
        outcomes += checked(root, "baseline", f"baseline-{rule}")
    return root, outcomes


def test_every_baseline_rule_is_verified(baselines):
    _, outcomes = baselines
    assert_honest(outcomes, {f"baseline-{rule}" for rule in BASELINES})


def test_the_board_verifies_every_baseline_entry_beside_the_others(baselines):
    root, outcomes = baselines
    kinds = {o.entry: o.kind for o in outcomes}
    assert_honest(board(kinds, root / "submissions", root / "logs", root / "site"), set(kinds))
