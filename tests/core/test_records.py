"""Record-level rules (``data/records.py``): the blank's position as the authors computed it."""

from __future__ import annotations

import math
import re

import pytest

from narrative_infill.data.dataset import load_benchmark
from narrative_infill.data.records import blank_position, problem_sentence_count

from helpers import BENCHMARK_CSV


def authors_position(problem: str, unit_idx: int) -> str | None:
    """A direct transcription of ``count_by_position.py`` (REFERENCE.md §6.4) with its fallback
    splitter: sentences of the problem split on [.!?]+ before whitespace or the end; rows with
    unit_idx < 1 or > T are dropped (None)."""
    sentences = [s for s in re.split(r"[.!?]+(?=\s|$)", problem) if s.strip()]
    total = len(sentences)
    if unit_idx < 1 or unit_idx > total:
        return None
    first_end, second_end = math.ceil(total / 3), math.ceil(2 * total / 3)
    if unit_idx <= first_end:
        return "opening"
    if unit_idx <= second_end:
        return "middle"
    return "closing"


#: The 21 ROCStories and SIND rows of the shared sample, labelled by the authors' rule.
#: (The rule of earlier releases, T = sentences - n + 1, called the five "*" rows opening.)
ROC_SIND_POSITIONS = {
    "rocstories-28-n3-i1": "opening",
    "rocstories-988-n3-i1": "opening",
    "rocstories-749-n3-i1": "opening",
    "rocstories-448-n2-i2": "middle",  # *
    "rocstories-881-n1-i2": "opening",
    "rocstories-795-n1-i2": "opening",
    "rocstories-312-n3-i1": "opening",
    "rocstories-227-n3-i1": "opening",
    "rocstories-176-n3-i1": "opening",
    "sind-257-n2-i1": "opening",
    "sind-347-n2-i1": "opening",
    "sind-143-n1-i3": "middle",
    "rocstories-569-n1-i3": "middle",
    "rocstories-359-n1-i2": "opening",
    "sind-546-n1-i2": "opening",
    "sind-486-n2-i2": "middle",  # *
    "sind-75-n2-i2": "middle",  # *
    "rocstories-117-n2-i1": "opening",
    "rocstories-426-n2-i2": "middle",  # *
    "sind-961-n1-i3": "middle",
    "sind-901-n2-i2": "middle",  # *
}


@pytest.mark.shared
def test_positions_of_the_shared_rows_are_the_authors():
    instances = load_benchmark(str(BENCHMARK_CSV)).instances
    compared = 0
    for instance in instances:
        expected = authors_position(instance.problem, instance.unit_idx)
        if expected is not None:
            assert instance.position == expected, instance.sample_id
            compared += 1
    assert compared == len(instances) == 61  # no shared row falls outside the authors' range
    assert {
        i.sample_id: i.position for i in instances if i.domain in ("rocstories", "sind")
    } == ROC_SIND_POSITIONS


@pytest.mark.parametrize(
    "problem,unit_idx,expected",
    [
        ("A. ______ C. D. E.", 1, "opening"),  # T=4 (the blank joins C): opening <= 2
        ("A. B. ______ D. E.", 2, "opening"),
        ("A. B. ______ E.", 2, "middle"),  # n=2 of 5: T=3, opening <= 1, middle <= 2
        ("A. B. C. ______", 3, "middle"),  # a closing blank is a sentence of its own: T=4, middle <= 3
        ("A. B. C. D. E. ______", 5, "closing"),  # T=6: middle <= 4
        ("______ B. C. D. E. F.", 0, "opening"),  # outside the authors' range: kept on its side
        ("A. B. C. D! E? ______", 5, "closing"),
    ],
)
def test_position_follows_the_authors_tercile_rule(problem, unit_idx, expected):
    assert blank_position(unit_idx, problem) == expected == (authors_position(problem, unit_idx) or expected)


def test_the_blank_merges_into_its_neighbouring_sentence():
    assert problem_sentence_count("Tom woke up. ______ He ate. He left.") == 3
    assert problem_sentence_count("Tom woke up. He ate. ______") == 3
    assert (
        problem_sentence_count("Mr. Smith said 3.5 was fine. ______ Then.") == 3
    )  # the authors' regex, quirks included
