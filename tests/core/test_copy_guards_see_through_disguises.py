"""Attacks on the copy guard (issue 37): copies of the story disguised by invisible or look-alike
characters, or by shuffling its words, must be caught by ``context_copy`` (or, with its order broken,
``story_reuse``: issue 45) or gain no AtAvg."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from narrative_infill.copy_guards import is_copied, is_story_reuse
from narrative_infill.data.baselines import context_answer
from narrative_infill.scorers.metrics.copying import context_copy
from narrative_infill.scorers.metrics.reuse import story_reuse

DEMO = Path(__file__).parents[2] / "narrative_infill" / "data" / "demo.jsonl"
HOMOGLYPHS = str.maketrans({"a": "\u0430", "e": "\u0435", "o": "\u043e", "c": "\u0441", "p": "\u0440"})


def _each_word(text: str, change) -> str:
    return " ".join(change(word) for word in text.split())


DISGUISES = {
    "zero-width space in each word": lambda t: _each_word(t, lambda w: w[:1] + "\u200b" + w[1:]),
    "soft hyphen in each word": lambda t: _each_word(t, lambda w: w[:2] + "\u00ad" + w[2:]),
    "word joiner in each word": lambda t: _each_word(t, lambda w: w[:1] + "\u2060" + w[1:]),
    "combining grapheme joiner": lambda t: _each_word(t, lambda w: w[:1] + "\u034f" + w[1:]),
    "Cyrillic look-alike letters": lambda t: t.translate(HOMOGLYPHS),
    "full-width letters": lambda t: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in t),
    "upper case": str.upper,
}


def _instances(count: int = 4) -> list[dict]:
    return [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()[:count]]


@pytest.mark.parametrize("disguise", DISGUISES)
def test_a_copy_of_the_story_disguised_by_characters_is_still_a_copy(disguise):
    for instance in _instances():
        problem = instance["problem"]
        answer = DISGUISES[disguise](context_answer(problem))
        assert is_copied(context_copy(answer, problem)), (disguise, answer[:60])


def test_the_characters_read_alike_do_not_make_an_own_answer_a_copy():
    problem = "Maya saved for months. ______ That night she saw the rings of Saturn."
    assert context_copy("She rode her bike to the hobby shop.", problem) == 0.0
    assert context_copy("Mаyа bought а telescope at the shop.", problem) == 0.0  # Cyrillic а


def _swap_pairs(text: str) -> str:
    words = text.split()
    for i in range(0, len(words) - 1, 2):
        words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def _every_third_replaced(text: str) -> str:
    return " ".join(word if i % 3 != 2 else "um" for i, word in enumerate(text.split()))


def _words_doubled(text: str) -> str:
    return " ".join(f"{word} {word}" for word in text.split())


REORDERINGS = {"adjacent words swapped": _swap_pairs, "every third word replaced": _every_third_replaced,
               "every word doubled": _words_doubled}  # fmt: skip


@pytest.mark.heavy  # scores with the packaged MiniLM backbone (torch)
@pytest.mark.parametrize("reordering", REORDERINGS)
def test_a_copy_with_its_word_order_broken_is_caught_or_gains_nothing(reordering):
    from narrative_infill.extraction.published import extract_with
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    instances = _instances()
    answers = [
        extract_with("ours", f"<ANSWER>{REORDERINGS[reordering](context_answer(i['problem']))}</ANSWER>",
                     i["problem"]).text
        for i in instances
    ]  # fmt: skip
    golds = [i["gold_answer"] for i in instances]
    copies = [context_answer(i["problem"]) for i in instances]
    scores = score_pairs(answers + copies, golds + golds, resolve_backbones("minilm", None, None, None))
    disguised = sum(s.values["atavg"] for s in scores[: len(answers)]) / len(answers)
    plain = sum(s.values["atavg"] for s in scores[len(answers) :]) / len(answers)
    guarded = sum(
        bool(is_copied(context_copy(a, i["problem"])) or is_story_reuse(story_reuse(a, i["problem"])))
        for a, i in zip(answers, instances)
    )  # context_copy reads ~0 here (no three words in the story's order); story_reuse has no order
    assert guarded == len(answers) or disguised < plain / 2, (disguised, plain, guarded)


@pytest.mark.heavy  # scores with the packaged MiniLM backbone (torch)
def test_a_zero_width_copy_that_survives_the_extraction_is_caught():
    """Under the default extraction a plain copy is removed (AtAvg 0), but a copy with a zero-width
    space in each word survives it and keeps most of the copy's AtAvg: context_copy must read it 1."""
    from narrative_infill.extraction.published import extract_with
    from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs

    instances = _instances()
    disguise = DISGUISES["zero-width space in each word"]
    answers = [
        extract_with("ours", f"<ANSWER>{disguise(context_answer(i['problem']))}</ANSWER>", i["problem"]).text
        for i in instances
    ]
    scores = score_pairs(
        answers, [i["gold_answer"] for i in instances], resolve_backbones("minilm", None, None, None)
    )
    assert sum(s.values["atavg"] for s in scores) / len(scores) > 0.1  # the disguise pays on the metrics
    assert all(is_copied(context_copy(a, i["problem"])) for a, i in zip(answers, instances))
