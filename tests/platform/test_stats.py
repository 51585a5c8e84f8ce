"""The statistics module shown right by simulation: narratives with correlated instances.

Every test is seeded, so its outcome is fixed; the bounds are still set from the binomial margin of
the number of draws, so that another seed could not flip them either: with D draws, a rate p is
estimated with standard deviation sqrt(p (1 - p) / D), and each bound sits at least 4 of those
from the expected rate.
"""

import math

import numpy as np
import pytest

from narrative_infill.platform.analysis.stats import (
    clustered_interval,
    clustered_stderr,
    holm,
    minimum_detectable,
    paired_test,
)

NARRATIVES, PER_NARRATIVE = 40, 6  # ~3.8 instances per narrative in the published set; more here
STORY_SD, INSTANCE_SD = 1.0, 1.0  # intra-narrative correlation 0.5


def draw(rng, shift=0.0, narratives=NARRATIVES):
    """Values of ``narratives`` x PER_NARRATIVE instances: a shared story effect plus noise."""
    story = rng.normal(0.0, STORY_SD, size=(narratives, 1))
    values = shift + story + rng.normal(0.0, INSTANCE_SD, size=(narratives, PER_NARRATIVE))
    return values.ravel(), np.repeat(np.arange(narratives), PER_NARRATIVE)


def test_the_clustered_interval_covers_the_true_mean_about_95_percent_of_draws_and_the_naive_one_less():
    rng, draws = np.random.default_rng(38), 2000
    clustered = naive = 0
    for _ in range(draws):
        values, clusters = draw(rng)
        found = clustered_interval(values, clusters)
        clustered += found.low <= 0.0 <= found.high
        naive_half = 1.96 * values.std(ddof=1) / math.sqrt(len(values))
        naive += abs(values.mean()) <= naive_half
    margin = 4 * math.sqrt(0.95 * 0.05 / draws)  # 0.0195
    assert 0.95 - margin - 0.01 <= clustered / draws <= 0.95 + margin  # CR1 with t(G-1): at most a bit low
    # design effect 1 + (6 - 1) * 0.5 = 3.5: the naive interval is sqrt(3.5) too narrow, covering ~70%
    assert naive / draws < 0.80


def test_the_clustered_stderr_matches_inspects_formula():
    values, clusters = [1.0, 3.0, 2.0, 6.0, 4.0], ["a", "a", "b", "b", "c"]
    deviations = np.array(values) - np.mean(values)
    sums = [deviations[:2].sum(), deviations[2:4].sum(), deviations[4:].sum()]
    expected = math.sqrt(3 / 2 * sum(s * s for s in sums)) / 5
    assert clustered_stderr(values, clusters) == pytest.approx(expected)


def test_with_10_narratives_the_paired_interval_and_p_agree_and_reject_about_5_percent_of_null_draws():
    """The interval is the p-value's own inference: it excludes 0 exactly when p < 0.05, and both
    hold the level with as few as 10 narratives (the bootstrap interval beside a sign-flip p
    excluded 0 in ~10% of these draws, and disagreed with p)."""
    rng, draws = np.random.default_rng(47), 1000
    rejected = 0
    for _ in range(draws):
        test = paired_test(*draw(rng, narratives=10))
        excludes = test.low > 0 or test.high < 0
        assert excludes == (test.p_value < 0.05)
        rejected += excludes
    margin = 4 * math.sqrt(0.05 * 0.95 / draws)  # 0.0276
    assert 0.05 - margin <= rejected / draws <= 0.05 + margin


def test_holm_adjusts_by_the_number_of_hypotheses_left_and_keeps_the_order():
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max 0.06
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.9, 0.5]).max() == 1.0 and len(holm([])) == 0


def test_the_test_finds_a_shift_of_its_minimum_detectable_difference_about_80_percent_of_the_time():
    """The MDE at 80% power is (t_.975 + t_.8) x SE; a true shift of that size is found ~80% of draws."""
    rng, draws, narratives = np.random.default_rng(3800), 600, 30
    # the mean of G narratives' sums, each of variance k^2 story_sd^2 + k instance_sd^2, over G k instances
    cluster_sd = math.sqrt(STORY_SD**2 * PER_NARRATIVE**2 + INSTANCE_SD**2 * PER_NARRATIVE)
    true_se = cluster_sd / (math.sqrt(narratives) * PER_NARRATIVE)
    shift = minimum_detectable(true_se, narratives)
    found, mdes = 0, []
    for _ in range(draws):
        values, clusters = draw(rng, shift=shift, narratives=narratives)
        test = paired_test(values, clusters)
        found += test.p_value < 0.05
        mdes.append(test.mde)
    margin = 4 * math.sqrt(0.8 * 0.2 / draws)  # 0.065
    assert 0.8 - margin <= found / draws <= 0.8 + margin
    assert np.mean(mdes) == pytest.approx(shift, rel=0.1)  # the estimated MDE is about the true one


def test_a_paired_test_is_the_clustered_t_test():
    differences, clusters = [0.5, 0.4, 0.6, -0.1], ["a", "a", "b", "c"]
    test = paired_test(differences, clusters)
    assert test.n == 4 and test.clusters == 3 and test.difference == pytest.approx(0.35)
    from scipy.stats import t

    statistic = 0.35 / clustered_stderr(differences, clusters)
    assert test.p_value == pytest.approx(2 * t.sf(statistic, 2))
    assert test.high - test.difference == pytest.approx(t.ppf(0.975, 2) * test.stderr)
    assert paired_test([], []) is None and paired_test([0.1, 0.2], ["a", "a"]) is None  # no df to test on


def test_one_narrative_gives_no_interval_rather_than_a_zero_width_one():
    """With one cluster the clustered standard error is 0 by convention (as Inspect's), and the
    "95% interval" of 0.2 and 0.8 printed as [0.5, 0.5] on the board and as ± 0.000 in the report."""
    from narrative_infill.platform.analysis.stats import clustered_interval

    found = clustered_interval([0.2, 0.8], ["rocstories-1", "rocstories-1"])
    assert found is not None and found.mean == 0.5 and found.clusters == 1
    assert math.isnan(found.low) and math.isnan(found.high)
