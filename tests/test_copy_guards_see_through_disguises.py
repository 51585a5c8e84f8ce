"""Attacks on the story guards (issues 37 and 45): copies of the story disguised by invisible or
look-alike characters are caught by ``context_copy``; copies with their word order broken (words
swapped in pairs, every third replaced, each doubled), which ``context_copy`` reads as ~0, are caught
by the order-free ``story_reuse``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from narrative_infill.data.baselines import context_answer
from narrative_infill.definitions import is_copied, is_story_reuse
from narrative_infill.scorers.metrics.copying import context_copy
from narrative_infill.scorers.metrics.reuse import story_reuse

DEMO = Path(__file__).parents[1] / "narrative_infill" / "data" / "demo.jsonl"
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


@pytest.mark.parametrize("reordering", REORDERINGS)
def test_an_entry_copying_with_its_word_order_broken_is_over_the_order_free_guard_s_limit(reordering):
    """Was a strict expected failure: such a copy read ~0 on context_copy and kept most of the copy's
    AtAvg (MiniLM, demo: 0.228, 0.198, 0.200 against 0.240). story_reuse reads the story's words in
    any order, through the default extraction: an entry answering so is over the entry limit (on a
    short story one filler word in eight can keep a single answer under the threshold)."""
    from narrative_infill.analysis.floor import over_limit
    from narrative_infill.extraction.published import extract_with

    caught = []
    for instance in _instances(8):
        problem = instance["problem"]
        sent = f"<ANSWER>{REORDERINGS[reordering](context_answer(problem))}</ANSWER>"
        answer = extract_with("ours", sent, problem).text
        assert not is_copied(context_copy(answer, problem))  # the in-order guard misses it
        caught.append(bool(is_story_reuse(story_reuse(answer, problem))))
    assert over_limit(sum(caught) / len(caught)), caught


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
    scores = score_pairs(answers, [i["gold_answer"] for i in instances], resolve_backbones("minilm", None, None, None))
    assert sum(s.values["atavg"] for s in scores) / len(scores) > 0.1  # the disguise pays on the metrics
    assert all(is_copied(context_copy(a, i["problem"])) for a, i in zip(answers, instances))
