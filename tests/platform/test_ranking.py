"""The leaderboard's order: paired tests on each pair's shared instances, Holm-adjusted, ties named."""

import numpy as np

from narrative_infill.platform.analysis.submission.ranking import INSTANCES, narrative, rank, rank_label


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


def test_the_rank_cell_shows_the_position_by_mean_the_entries_above_and_what_a_tie_could_hide():
    """Issue 61: the cell showed 1 + the entries significantly above, so on the real L2 board an
    entry 17th by mean read "1" just below one reading "11"; and "tied with #k" read as "equal",
    though a tie only says the tests could not tell the two apart. The cell leads with the position
    by mean, counts the entries significantly above, and gives each tie's minimum detectable
    difference (80% power at the family's Bonferroni level, Holm's first step: at least what Holm needs)."""
    rng = np.random.default_rng(5)
    base, noise = rng.normal(3.0, 1.0, 60), rng.normal(0.0, 1.0, 60)
    rows = [
        entry("best", base + 0.2),
        entry("noisy high", base + 0.15 + noise - noise.mean()),  # above base by mean, not told apart
        entry("base", base),
    ]
    rank(rows)
    by = {r["model"]: r for r in rows}
    assert [by[m]["position"] for m in ("best", "noisy high", "base")] == [1, 2, 3]
    assert by["base"]["rank"] == 2 and by["noisy high"]["rank"] == 1  # the old cells: 1 above 2, 2 at 3rd
    mde = by["base"]["tie_mde"]
    assert 0.2 < mde < 2.0, mde  # per-instance noise 1.0 on 20 narratives
    assert rank_label(by["base"]) == f"3 (1 significantly above; not distinguishable from #2: MDE {mde:.3f})"
    assert rank_label(by["best"]).startswith("1 (0 significantly above; not distinguishable from #2: MDE ")
    assert by["base"]["rank_label"] == rank_label(by["base"])  # what the board page shows


def test_a_sample_id_names_its_narrative_or_stands_alone():
    assert narrative("sind-45-n2-i3") == "sind-45" and narrative("1234") == "own:1234"


def equal_board(rng, entries, narratives, own_clusters=False):
    """``entries`` rows of one truly equal model, 3 instances per narrative (as ``entry``): a story
    effect shared by all (some stories are harder for everyone), a story effect of each entry's own
    (an entry that misreads a story misfills all its blanks: what makes the paired differences of
    one story correlated, so clustering matters) and each entry's own noise. ``own_clusters``:
    sample ids that name no narrative, so the board falls back to one cluster per sample."""
    story = np.repeat(rng.normal(3.0, 1.0, narratives), 3)
    rows = []
    for e in range(entries):
        own_story = np.repeat(rng.normal(0.0, 1.0, narratives), 3)
        rows.append(entry(f"m{e}", story + own_story + rng.normal(0.0, 1.0, 3 * narratives)))
        if own_clusters:
            rows[-1][INSTANCES]["qavg"] = {
                (s, i.replace("-", "_")): v for (s, i), v in rows[-1][INSTANCES]["qavg"].items()
            }
    return rows


def _spurious_share(own_clusters: bool, boards: int = 60) -> float:
    rng = np.random.default_rng(47)
    spurious = 0
    for _ in range(boards):
        rows = equal_board(rng, entries=20, narratives=10, own_clusters=own_clusters)
        rank(rows)
        spurious += any(row["rank"] > 1 for row in rows)
    return spurious / boards


#: The nominal 5% plus 3 binomial standard deviations over 60 boards (sqrt(.05 * .95 / 60) = 0.028).
_NULL_BOUND = 0.05 + 3 * np.sqrt(0.05 * 0.95 / 60)


def test_a_board_of_20_equal_entries_shows_a_spurious_order_in_at_most_the_nominal_share_of_draws():
    """Holm over the 190 pairs keeps "any entry ranked below another" at <= 5% of null boards; the
    unadjusted tests put one on ~95% of them. 60 boards of 10 narratives: the bound 0.05 plus 3 binomial
    standard deviations leaves no seed a way to pass the old rule."""
    assert _spurious_share(own_clusters=False) <= _NULL_BOUND


def test_the_equal_entries_simulation_fails_a_board_that_ignores_the_narratives(caplog):
    """The simulation can tell a clustered board from one that is not: the same boards with every
    sample its own cluster (the fallback for ids that name no narrative) show a spurious order on
    far more than the bound (26 of 60). Without each entry's own story effect the paired differences
    were independent draws and the unclustered board passed too (0 of 60)."""
    with caplog.at_level("ERROR"):  # the fallback's warnings, one per entry and board
        assert _spurious_share(own_clusters=True) > 2 * _NULL_BOUND


def test_the_board_states_its_multiplicity_rule_and_what_its_intervals_are():
    from narrative_infill.platform.analysis.submission.ranking import INTERVAL_NOTE, RANK_RULE

    assert "Holm" in RANK_RULE and "any order" in RANK_RULE
    assert "on QAvg when every entry of the group is judged, else AtAvg" in RANK_RULE  # which score ranks
    assert "95% t interval" in INTERVAL_NOTE and "narratives" in INTERVAL_NOTE


def test_sample_ids_naming_no_narrative_are_warned_of_on_the_boards_path(caplog):
    from narrative_infill.platform.analysis.submission.ranking import interval

    with caplog.at_level("WARNING"):
        interval({("l1", "a"): [1.0], ("l1", "b"): [2.0], ("l1", "rocstories-1-n1-i1"): [3.0]}, "x.json")
    assert "x.json: 2 of 3 sample ids name no source narrative" in caplog.text


def test_an_entry_sharing_no_instances_with_the_others_is_not_ranked_beside_them():
    """Sample ids renamed (a forged log where the published ids cannot be read, or another subset)
    pair with nothing: such an entry used to be "tied" with everyone and rank 1 above entries it
    was never compared with. Entries are ranked only against entries of the same instances."""
    rng = np.random.default_rng(1)
    base = rng.normal(3.0, 1.0, 60)
    renamed = entry("weak, ids renamed", base - 1.5)
    renamed[INSTANCES]["qavg"] = {
        (s, i.replace("rocstories-", "rocstoriesx-")): v for (s, i), v in renamed[INSTANCES]["qavg"].items()
    }
    rows = [entry("strong", base + 1.0), entry("mid", base), renamed]
    rank(rows)
    by = {r["model"]: r for r in rows}
    assert by["strong"]["rank"] == 1 and by["mid"]["rank"] == 2
    assert by["strong"]["tied_with"] == by["mid"]["tied_with"] == []
    assert by["weak, ids renamed"]["group_label"] != by["strong"]["group_label"] == by["mid"]["group_label"]


def test_identical_entries_tie_whatever_their_epochs():
    """Averaging three equal epochs (3.2 + 3.2 + 3.2) / 3 gives 3.2000000000000006, not 3.2: the
    paired differences of two identical entries were rounding noise of one sign, and the t test
    ranked one above the other (p = 0). Differences within ``SAME_NUMBER_TOLERANCE`` are none."""
    once = entry("once", np.full(30, 3.2))
    thrice = entry("thrice", np.full(30, 3.2))
    thrice[INSTANCES]["qavg"] = {key: values * 3 for key, values in thrice[INSTANCES]["qavg"].items()}
    rows = [once, thrice]
    rank(rows)
    assert [r["rank"] for r in rows] == [1, 1]


def test_an_entry_of_one_narrative_shows_its_mean_without_an_interval():
    from narrative_infill.platform.analysis.submission.ranking import interval

    one_story = {("l1", "rocstories-1-n1-i1"): [0.2], ("l1", "rocstories-1-n1-i2"): [0.8]}
    assert interval(one_story) == (0.5, None, None)
