"""Issue 58's held-out attack rules (tests/attack_rules.py, never used to set a threshold) on the
authors' 30 shared problems at L0, L2 and L4: each is flagged by the blank guard over the entry
limit, or is not significantly above the story-reading floor (so not ranked on AtAvg)."""

from __future__ import annotations

import json
from functools import cache

import pytest
from attack_rules import attack_rules
from helpers import SHARED, require_shared

from narrative_infill.data.baselines import NULL_RULES, baseline_answer
from narrative_infill.data.narrative import narrative_of_text
from narrative_infill.extraction import DEFAULT_EXTRACTION, extract_with
from narrative_infill.platform.analysis.blank_guard import ignored_share
from narrative_infill.platform.analysis.floor import floor_test, is_above, over_limit
from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

pytestmark = [pytest.mark.shared, pytest.mark.heavy]  # MiniLM scores the rules the guard lets through
RESPONSES = SHARED / "data" / "extraction" / "responses.jsonl"
LEVELS = ("fitb_l0", "fitb_l2", "fitb_l4")


@cache
def _problems(level: str) -> list[tuple[str, str]]:
    """Each (problem, gold) at ``level``, in a fixed order."""
    require_shared()
    records = [json.loads(line) for line in RESPONSES.read_text(encoding="utf-8").splitlines()]
    return sorted({(r["problem"], r["gold_answer"]) for r in records if r["template_name"] == level})


def _answers(level: str, rule) -> list[str]:
    """The rule's answer to each problem as the provider sends it (tagged but at L0), extracted."""
    out = []
    for problem, _ in _problems(level):
        answer = rule(problem)
        sent = answer if level == "fitb_l0" else f"<ANSWER>{answer}</ANSWER>"
        out.append(extract_with(DEFAULT_EXTRACTION, sent, problem).text)
    return out


def _atavg(level: str, answers: list[str]) -> list[float]:
    golds = [gold for _, gold in _problems(level)]
    return [r.values["atavg"] for r in score_pairs(answers, golds, resolve_backbones("minilm"))]


#: Attack rules this suite knows clear every guard and the floor (their own strict-xfail test below).
ABOVE_THE_FLOOR = {"attack:prefixed-neighbour-verbs"}


def _outcomes(level: str, names: set[str]) -> dict[str, str]:
    """Each named attack rule's outcome at ``level``: flagged by the blank guard, above the story-reading
    floor (significant, one-sided), or not above it; the test's reading is kept in the outcome."""
    problems = _problems(level)
    stories = [narrative_of_text(problem, gold) for problem, gold in problems]
    rules = attack_rules([gold for _, gold in problems])
    floor_rule = "neighbour-nouns-sentence"  # the floor at each level (docs/baselines.md)
    assert floor_rule in NULL_RULES
    floor = _atavg(level, _answers(level, lambda problem: baseline_answer(floor_rule, problem, 1, str)))
    outcomes = {}
    for name in sorted(names):
        answers = _answers(level, rules[name])
        share = ignored_share(
            (story, problem, gold, answer)
            for story, (problem, gold), answer in zip(stories, problems, answers)
        )
        if over_limit(share):
            outcomes[name] = "flagged"
            continue
        test = floor_test(_atavg(level, answers), floor, stories)
        outcomes[name] = "above the floor" if is_above(test) else "not above the floor"
    return outcomes


@pytest.mark.parametrize("level", LEVELS)
def test_every_attack_rule_is_flagged_or_not_above_the_story_reading_floor(level):
    names = set(attack_rules([])) - ABOVE_THE_FLOOR
    assert _outcomes(level, names) == {
        "attack:names-nouns-sentence": "flagged",
        "attack:gold-words-paragraph": "flagged",
        "attack:names-nouns-gold-woven": "flagged",
        "attack:position-filler": "not above the floor",
    }


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=(
        "open (issue 58's second attack pass): attack:prefixed-neighbour-verbs passes every guard "
        "(copied 0%, story reuse 13-14%, blank ignored 0%, not fluent 10% at L2) and is significantly "
        "above the story-reading floor (neighbour-nouns-sentence): L0 and L2 AtAvg 0.3197 vs 0.3060, "
        "+0.0137, one-sided p 0.0188; L4 0.3225 vs 0.3095, +0.0130, p 0.0282 (MiniLM, 30 shared "
        "problems). No gold read, but chosen as the best of ~15 variants on these problems."
    ),
)
@pytest.mark.parametrize("level", LEVELS)
def test_a_floor_rule_with_a_blank_varied_opener_and_neighbour_verbs_is_not_ranked(level):
    assert _outcomes(level, ABOVE_THE_FLOOR) == {name: "not above the floor" for name in ABOVE_THE_FLOOR}
