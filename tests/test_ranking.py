"""The leaderboard's order: paired tests on each pair's shared instances, ties named."""

import numpy as np

from narrative_infill.analysis.submission.ranking import INSTANCES, narrative, rank, rank_label


def entry(name, values, group="g"):
    """A ranked-track row whose per-instance QAvg are ``values`` (3 instances per narrative)."""
    instances = {("l1", f"rocstories-{i // 3}-n1-i{i % 3}"): [v] for i, v in enumerate(values)}
    mean = float(np.mean(values))
    return {
        "model": name,
        "baseline": False,
        "track": "demo",
        "group": group,
        "qavg": (mean, mean, mean),
        "atavg": None,
        INSTANCES: {"qavg": instances},
    }


def test_a_small_consistent_difference_ranks_and_a_noisy_one_ties():
    rng = np.random.default_rng(5)
    base = rng.normal(3.0, 1.0, 60)
    rows = [
        entry("best", base + 0.2),  # better on every instance: significant however small
        entry("base", base),
        entry("noisy", base + rng.normal(0.0, 1.0, 60)),  # same on average, noisy: not told apart
    ]
    rank(rows)
    by = {r["model"]: r for r in rows}
    assert by["best"]["rank"] == 1 and by["best"]["position"] == 1
    assert by["base"]["rank"] == 2 and by["base"]["tied_with"] == [by["noisy"]["position"]]
    assert rank_label(by["base"]) == f"2 (tied with #{by['noisy']['position']})"


def test_a_sample_id_names_its_narrative_or_stands_alone():
    assert narrative("sind-45-n2-i3") == "sind-45" and narrative("1234") == "own:1234"
