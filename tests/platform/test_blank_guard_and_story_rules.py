"""Issue 58: the story-reading null rules, and the guard for answers that ignore where the blank is."""

from __future__ import annotations

import pytest

from narrative_infill.data.baselines import NULL_RULES, baseline_answer
from narrative_infill.platform.analysis.blank_guard import ignored_share, story_ignores_blank

#: One story masked three times: two blanks apart (golds sharing no sentence), one spanning both.
STORY = ["Maya saved her allowance for a telescope.", "Every Saturday she counted coins in her jar.",
         "In spring she had enough money.", "She rode her bike to the hobby shop.",
         "That night Maya saw the rings of Saturn."]  # fmt: skip
BLANKS = ((1, 2), (3, 4), (1, 4))


def _instances():
    out = []
    for start, end in BLANKS:
        problem = " ".join([*STORY[:start], "______", *STORY[end:]])
        out.append((f"rocstories-7-n{end - start}-i{start}", problem, " ".join(STORY[start:end])))
    return out


def _no_gold():
    raise AssertionError("a story-reading rule read the gold")


@pytest.mark.parametrize(
    "rule", ["story-names-sentence", "story-names-paragraph", "neighbour-nouns-sentence", "neighbour-nouns-verbs"]
)
def test_the_story_reading_rules_are_null_rules_that_put_the_story_s_names_and_nouns_in_filler(rule):
    assert rule in NULL_RULES
    _, problem, _ = _instances()[0]
    answer = baseline_answer(rule, problem, 1, gold=_no_gold)
    assert "Maya" in answer and answer == baseline_answer(rule, problem, 1, gold=_no_gold)
    assert any(noun in answer for noun in ("telescope", "allowance", "coins", "money", "bike", "rings"))


def test_one_answer_for_every_blank_of_a_story_is_flagged_and_real_answers_are_not():
    same = [(f"{s}|x", p, g, "Maya felt happy about the telescope and decided to go home.")
            for s, p, g in _instances()]  # fmt: skip
    names_swapped = [(s, p, g, f"{name} felt happy about the {noun} and went home with friends.")
                     for (s, p, g), name, noun in zip(_instances(), ("Maya", "Saturn", "Maya"),
                                                      ("telescope", "jar", "bike"))]  # fmt: skip
    real = [(s, p, g, a) for (s, p, g), a in zip(_instances(), (
        "She kept every coin she earned from chores in a jar.",
        "Finally she bought a small refractor and set it up outside.",
        "Months passed, and at last she walked into the store with cash."))]  # fmt: skip
    assert ignored_share((s.split("-n")[0], p, g, a) for s, p, g, a in same) == 1.0
    assert ignored_share((s.split("-n")[0], p, g, a) for s, p, g, a in names_swapped) == 1.0
    assert ignored_share((s.split("-n")[0], p, g, a) for s, p, g, a in real) == 0.0


def test_nested_blanks_short_answers_and_lone_blanks_are_not_compared():
    _, problem, gold = _instances()[0]
    # the same gold sentence: the blanks overlap, alike answers are right
    assert story_ignores_blank([("She kept the coins in a jar.", gold)] * 2, [problem]) is None
    assert story_ignores_blank([("Suddenly", "A b."), ("Suddenly", "C d.")], [problem]) is None
    assert ignored_share([("s", problem, gold, "She kept the coins in a jar.")]) == 0.0
