"""One answer's cost in METEOR grows with its gold span, not with its vocabulary (issue 44, finding
7): an answer just under the 32 KB cap made of distinct dictionary words cost 16-18 s and +350 MB
in ``score_pairs``, because METEOR's synonym stage loaded every answer word's WordNet synsets (and
NLTK keeps each for the life of the process). Synsets are now loaded only for answer words that can
be a synonym of a gold word, and METEOR's value is unchanged. The real-size cost is measured by
benchmarks/answer_cost.py."""

from __future__ import annotations

import random

import pytest

from narrative_infill.paper_protocol import METEOR_PARAMS
from narrative_infill.scorers.metrics import lexical

GOLD = "She ran to the bus, but the driver had already left the stop."


@pytest.fixture(scope="module")
def dictionary_words() -> list[str]:
    tokenize, _, wordnet = lexical._meteor()
    words = sorted({name for name in wordnet.all_lemma_names() if name.isalpha()})
    random.Random(0).shuffle(words)
    return words[:2000]


def _plain_meteor(prediction: str, reference: str) -> float:
    """METEOR as NLTK computes it with the whole WordNet (every answer word looked up)."""
    tokenize, single_meteor, wordnet = lexical._meteor()
    return single_meteor(tokenize(reference), tokenize(prediction), wordnet=wordnet, **METEOR_PARAMS)


def test_meteor_looks_up_synonyms_for_the_gold_not_for_every_answer_word(dictionary_words, monkeypatch):
    """Failed before: each of the 2,000 distinct answer words was looked up in WordNet."""
    answer = " ".join(dictionary_words)
    wordnet = lexical._meteor()[2]
    looked_up: set[str] = set()
    lookup = wordnet.synsets
    monkeypatch.setattr(wordnet, "synsets", lambda word: looked_up.add(word) or lookup(word))
    lexical.meteor(answer, GOLD)
    assert len(looked_up) < 100, len(looked_up)  # the gold's words and the answer words related to them


@pytest.mark.parametrize("seed", range(20))
def test_meteor_is_unchanged_by_looking_up_fewer_words(dictionary_words, seed):
    """Answers mixing unrelated words with synonyms and inflections of the gold's words."""
    picked = random.Random(seed).sample(dictionary_words, 150)
    _, _, wordnet = lexical._meteor()
    related = [
        lemma.name()
        for word in GOLD.lower().split()
        for s in wordnet.synsets(word)[:3]
        for lemma in s.lemmas()
    ]
    answer = " ".join(picked + related[seed::3] + ["running", "buses", "drivers", "halted"])
    assert lexical.meteor(answer, GOLD) == _plain_meteor(answer, GOLD)
