"""Each order-free null rule tried as a dishonest entrant would (issue 45), on the authors' 30 shared
ROCStories problems at L0, L2 and L4 under both extractions: its answers are flagged by a story
guard over the entry limit (so it is shown but never ranked), or it scores no more than the empty
answer (not above the floor, so not ranked either), or below every one of the 20 real models on the
same problems.

The flag needs no scoring. A rule the guards let through is scored with the packaged MiniLM
backbones on the first ``SCORED`` problems of the level, and, when it scores above the empty
answer's 0, against the real models' answers on those problems, the figures computed here."""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache
from statistics import fmean

import pytest
from helpers import SHARED, require_shared

from narrative_infill.platform.analysis.floor import over_limit
from narrative_infill.copy_guards import is_copied, is_story_reuse
from narrative_infill.data.baselines import ORDER_FREE, baseline_answer
from narrative_infill.extraction import extract_with
from narrative_infill.scorers.metrics.copying import context_copy
from narrative_infill.scorers.metrics.reuse import story_reuse

pytestmark = pytest.mark.shared
RESPONSES = SHARED / "data" / "extraction" / "responses.jsonl"
LEVELS = ("fitb_l0", "fitb_l2", "fitb_l4")
#: Problems per level a rule the guards let through is scored on, with every real model's answers.
SCORED = 4


@cache
def _responses() -> dict[str, list[dict]]:
    """The real outputs at each level, by template name."""
    require_shared()
    by_level = defaultdict(list)
    for line in RESPONSES.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["template_name"] in LEVELS:
            by_level[record["template_name"]].append(record)
    return by_level


def _problems(level: str) -> dict[str, str]:
    """Each problem at ``level`` and its gold, in a fixed order."""
    return dict(sorted({(r["problem"], r["gold_answer"]) for r in _responses()[level]}))


def _rule_answer(rule: str, level: str, problem: str, extraction: str) -> str:
    """The rule's answer as the provider sends it (tagged but at L0), extracted."""
    answer = baseline_answer(rule, problem, 1, gold=lambda: "")
    sent = answer if level == "fitb_l0" else f"<ANSWER>{answer}</ANSWER>"
    return extract_with(extraction, sent, problem).text


def _flagged(rule: str, level: str, extraction: str) -> bool:
    """Whether the rule's run at ``level`` is over the entry limit of either guard."""
    answers = [(_rule_answer(rule, level, p, extraction), p) for p in _problems(level)]
    copied = fmean(bool(is_copied(context_copy(a, p))) for a, p in answers)
    reused = fmean(bool(is_story_reuse(story_reuse(a, p))) for a, p in answers)
    return over_limit(copied) or over_limit(reused)


@cache
def _lowest_real_atavg(level: str, extraction: str) -> float:
    """The lowest of the 20 real models' AtAvg on the level's first ``SCORED`` problems."""
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    problems = dict(list(_problems(level).items())[:SCORED])
    records = [r for r in _responses()[level] if r["problem"] in problems]
    answers = [extract_with(extraction, r["response"], r["problem"]).text for r in records]
    scores = score_pairs(
        answers, [r["gold_answer"] for r in records], resolve_backbones("minilm", None, None, None)
    )
    by_model = defaultdict(list)
    for record, score in zip(records, scores):
        by_model[record["model"]].append(score.values["atavg"])
    assert len(by_model) == 20
    return min(fmean(values) for values in by_model.values())


def _rule_atavg(rule: str, level: str, extraction: str) -> float:
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    problems = dict(list(_problems(level).items())[:SCORED])
    answers = [_rule_answer(rule, level, p, extraction) for p in problems]
    scores = score_pairs(answers, list(problems.values()), resolve_backbones("minilm", None, None, None))
    return fmean(score.values["atavg"] for score in scores)


@pytest.mark.heavy  # a rule the guards let through is scored with MiniLM (torch)
@pytest.mark.parametrize("extraction", ["ours", "published"])
@pytest.mark.parametrize("rule", ORDER_FREE)
def test_an_order_free_rule_is_flagged_or_below_every_real_model(rule, extraction):
    for level in LEVELS:
        assert len(_problems(level)) >= 29
        if _flagged(rule, level, extraction):
            continue
        rule_atavg = _rule_atavg(rule, level, extraction)
        if rule_atavg <= 0:  # the empty answer's AtAvg: not above the floor
            continue
        lowest = _lowest_real_atavg(level, extraction)
        assert rule_atavg < lowest, (
            f"{rule} at {level}: AtAvg {rule_atavg:.3f}, lowest real model {lowest:.3f}"
        )
