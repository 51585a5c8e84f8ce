"""``--rejudge``'s decision on the claimed - re-judged QAvg differences, as ``rejudge`` takes it:
it weighs how far the claims sit above the re-judged scores, not only how many do (issue 57).
Each input is fixed and the sign flips are drawn from a fixed seed, so every outcome is determined."""

from __future__ import annotations

import pytest

from narrative_infill.platform.analysis.submission.rejudge import (
    ALPHA,
    MIN_K,
    RejudgeError,
    check_k,
    inflation_p_value,
)

#: A temperature-0 judge's honest re-judge reproduces every score: 14 answers agree exactly, and
#: the inflater's 6 (2 points on every dimension, capped at 5, from 2-4: 1.2 to 2.0 more QAvg) do not.
SIX_INFLATED = [0.0] * 14 + [1.6, 2.0, 1.4, 1.8, 2.0, 1.2]


def test_six_answers_inflated_by_two_points_among_twenty_agreeing_ones_fail():
    """Failed before: a sign-flip test of 6 non-zero differences cannot go below 2^-6 = 0.0156,
    whatever their size (issue 57: the 30% inflater passed ``--rejudge 20`` 3 times in 3)."""
    assert inflation_p_value(SIX_INFLATED, seed=0) < ALPHA


def test_three_answers_a_point_or_more_above_their_re_judge_fail_at_k_20():
    """Three answers of twenty claimed a point or more above the re-judge on the average dimension:
    an honest re-judge gives that so rarely (docs/judge.md) that three of twenty are a finding."""
    assert inflation_p_value([0.0] * 17 + [1.0, 1.2, 1.6], seed=0) < ALPHA


def test_an_honest_temperature_0_re_judge_passes():
    assert inflation_p_value([0.0] * 20, seed=0) == 1.0


def test_a_noisy_judge_s_differences_either_way_pass():
    """The same judge at temperature > 0: differences as large below the claim as above it, one
    answer a point above and one a point below among them."""
    noisy = [0.2, -0.2, 0.4, -0.4, 0.0, 0.2, -0.2, 1.0, -1.0, 0.0] * 2
    assert inflation_p_value(noisy, seed=0) >= ALPHA


def test_a_different_honest_model_a_little_harsher_passes():
    """Small disagreements of a different grader, mostly below the claim (a harsher verifier's
    grader), none a point: neither the mean beyond the margin nor the large differences fail."""
    harsher = [0.2, 0.0, 0.4, -0.2, 0.2, 0.0, 0.2, 0.6, 0.0, -0.2] * 2
    assert inflation_p_value(harsher, seed=0) >= ALPHA


def test_every_answer_inflated_a_little_fails():
    """No answer a point above its re-judge, but all of them above the margin: the mean fails."""
    assert inflation_p_value([0.4] * 20, seed=0) < ALPHA


def test_the_decision_repeats_with_its_seed():
    mixed = [0.0] * 10 + [0.6, 0.4, -0.2, 0.8, 0.2, 0.4, 0.6, -0.4, 0.2, 0.4] * 3
    assert inflation_p_value(mixed, seed=7) == inflation_p_value(mixed, seed=7)


def test_the_smallest_k_is_where_an_inflation_spread_over_every_answer_can_fail():
    """Below MIN_K even every answer inflated beyond the margin could not fail the mean test (its
    best p-value, doubled for the two tests, is not below ALPHA): such a K is refused."""
    assert inflation_p_value([0.4] * MIN_K, seed=0) < ALPHA
    assert inflation_p_value([0.4] * (MIN_K - 1), seed=0) >= ALPHA
    check_k(MIN_K)
    with pytest.raises(RejudgeError, match=f"re-judge at least {MIN_K}"):
        check_k(MIN_K - 1)
