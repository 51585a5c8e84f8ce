"""Issue 58's held-out attack rules (tests/attack_rules.py, never used to set a threshold) on the
authors' 30 shared problems at L0, L2 and L4: each is flagged by the blank guard over the entry
limit, or is not significantly above the story-reading floor (so not ranked on AtAvg)."""

from __future__ import annotations

import json
from functools import cache
from statistics import fmean

import pytest
from attack_rules import attack_rules
from helpers import SHARED, require_shared

from narrative_infill.copy_guards import is_copied, is_story_reuse
from narrative_infill.data.baselines import NULL_RULES, baseline_answer
from narrative_infill.data.narrative import narrative_of_text
from narrative_infill.extraction import DEFAULT_EXTRACTION, extract_with
from narrative_infill.platform.analysis.blank_guard import ignored_share
from narrative_infill.platform.analysis.floor import floor_of, floor_test, is_above, over_limit
from narrative_infill.scorers.metrics.copying import context_copy
from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs
from narrative_infill.scorers.metrics.reuse import story_reuse

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


@cache
def _floor(level: str) -> tuple[str, list[float]]:
    """The story-reading floor at ``level`` as the report and the board take it (``floor_of``): the
    best null rule the copy and story-reuse guards keep, with its per-problem AtAvg (fluency is not
    read here: it needs the local model)."""
    problems = _problems(level)
    figures, values = {}, {}
    for rule in NULL_RULES:
        answers = _answers(level, lambda problem, r=rule: baseline_answer(r, problem, 1, str))
        copied = fmean(is_copied(context_copy(a, p)) for a, (p, _) in zip(answers, problems))
        reused = fmean(is_story_reuse(story_reuse(a, p)) for a, (p, _) in zip(answers, problems))
        if over_limit(copied) or over_limit(reused):
            continue  # left out of the floor: not scored
        values[rule] = _atavg(level, answers)
        figures[rule] = (fmean(values[rule]), copied, reused)
    floor = floor_of(figures)
    assert floor is not None
    return floor[0], values[floor[0]]


def _outcomes(level: str) -> dict[str, str]:
    """Each attack rule's outcome at ``level``: flagged by the blank guard, above the story-reading
    floor (significant, one-sided), or not above it."""
    problems = _problems(level)
    stories = [narrative_of_text(problem, gold) for problem, gold in problems]
    rules = attack_rules([gold for _, gold in problems])
    outcomes = {}
    for name in sorted(rules):
        answers = _answers(level, rules[name])
        share = ignored_share(
            (story, problem, gold, answer)
            for story, (problem, gold), answer in zip(stories, problems, answers)
        )
        if over_limit(share):
            outcomes[name] = "flagged"
            continue
        test = floor_test(_atavg(level, answers), _floor(level)[1], stories)
        outcomes[name] = "above the floor" if is_above(test) else "not above the floor"
    return outcomes


@pytest.mark.parametrize("level", LEVELS)
def test_every_attack_rule_is_flagged_or_not_above_the_story_reading_floor(level):
    assert _outcomes(level) == {
        "attack:names-nouns-sentence": "flagged",
        "attack:gold-words-paragraph": "flagged",
        "attack:names-nouns-gold-woven": "flagged",
        "attack:position-filler": "not above the floor",
        # the second attack pass's: a blank-varied opener and the neighbours' -ed verbs after the
        # floor rule's sentence, picked as the best of ~15 variants on these problems
        "attack:prefixed-neighbour-verbs": "not above the floor",
        # the third attack pass's: a function-word sentence after the floor rule's text (significantly
        # above the floor at L2 in-sample, but the same filler wherever the blank is, and not fluent
        # on 40%), after its verb-free sentence, and varied by the blank's position (the last two)
        "attack:function-word-tail": "flagged",
        "attack:nouns-function-tail": "flagged",
        "attack:position-varied-tail": "not above the floor",
        "attack:nouns-varied-tail": "flagged",
    }
