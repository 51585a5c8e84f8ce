"""The story guard reads through misspellings and synonyms (issue 45, attack pass): the neighbouring
sentences with a letter doubled or two letters swapped in each content word, or each content word
replaced by a WordNet synonym, kept 0.22-0.29 AtAvg at L2 on the 30 shared problems (MiniLM,
default extraction) while ``story_reuse`` read them 0 and the floor there was 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from narrative_infill.copy_guards import is_story_reuse
from narrative_infill.data.baselines import blank_sides
from narrative_infill.scorers.metrics.reuse import EDIT_MIN_LETTERS, story_reuse

DEMO = Path(__file__).parents[2] / "narrative_infill" / "data" / "demo.jsonl"
PROBLEM = "Maya saved her coins for months. ______ That night she watched the rings of Saturn."


def _problems() -> list[str]:
    return [json.loads(line)["problem"] for line in DEMO.read_text(encoding="utf-8").splitlines()]


def _neighbours(problem: str) -> str:
    before, after = blank_sides(problem)
    return " ".join(part for part in (before.split(". ")[-1], after.split(". ")[0]) if part)


def _long_words(text: str, change) -> str:
    """``change`` applied to each word read through a typo (EDIT_MIN_LETTERS letters or more)."""
    long = [len(word.strip(".,!?")) >= EDIT_MIN_LETTERS for word in text.split()]
    return " ".join(change(word) if is_long else word for word, is_long in zip(text.split(), long))


MISSPELLINGS = {
    "a letter doubled": lambda word: word[:2] + word[1:],
    "two inner letters swapped": lambda word: word[0] + word[2] + word[1] + word[3:],
}


@pytest.mark.parametrize("misspelling", MISSPELLINGS)
def test_the_story_misspelt_is_still_the_story(misspelling):
    for problem in _problems():
        answer = _long_words(" ".join(blank_sides(problem)), MISSPELLINGS[misspelling])
        assert is_story_reuse(story_reuse(answer, problem)), answer[:80]


def test_the_neighbours_misspelt_are_still_the_story():
    answer = "Mayya savved her coinns for monthhs. That nighht she wathced the rinsg of Satrun."
    assert story_reuse(answer, PROBLEM) == 1.0


def test_the_neighbours_in_synonyms_are_still_the_story():
    answer = "Maya salvaged her mint for calendar months. That nighttime she observed the hoops of Saturn."
    assert is_story_reuse(story_reuse(answer, PROBLEM)), story_reuse(answer, PROBLEM)


def test_an_answer_of_its_own_that_shares_a_few_words_is_not_flagged():
    for answer in (
        "Maya rode her bike to the hobby shop and bought a small telescope.",
        "She finally had enough money to buy a telescope from the store downtown.",
        "Mayya bouhgt a telescpoe with the moeny she had put aside.",
    ):
        assert not is_story_reuse(story_reuse(answer, PROBLEM)), answer
