"""The fluency check (``analysis.fluency``, issue 45) reads a salad of the story's words however it
is hidden from the reading: behind words that fill the tokens the reading is cut at, or glued into
seven "words" that the metrics' tokenizers split back. Each was unflagged and above the floor in the
attack pass (figures in each test: AtAvg at L2 on the 30 shared problems of the authors' data,
MiniLM, extraction ``ours``, against ``generic-sentence``'s 0.207 there)."""

from __future__ import annotations

import pytest
from word_salad import (
    demo_problems,
    letters_glued_into_seven,
    salad_behind_context_filler,
    thinned_and_padded,
)

from narrative_infill.copy_guards import is_copied, is_story_reuse
from narrative_infill.data.baselines import context_answer
from narrative_infill.platform.analysis.fluency import (
    FLUENCY_MIN_WORDS,
    UNREAD_WHOLE,
    answer_words,
    fluency_reader,
    is_not_fluent,
)
from narrative_infill.scorers.metrics.copying import context_copy, folded_words
from narrative_infill.scorers.metrics.reuse import story_reuse

#: Problems each attack is built from: the first ten demo problems (each reading costs two passes).
ATTACK_PROBLEMS = 10


def _flagged_share(build) -> float:
    """The share of ``build``'s answers to the first demo problems that a story guard flags."""
    read = fluency_reader()
    flagged = [
        bool(
            is_not_fluent(read(answer))
            or is_story_reuse(story_reuse(answer, problem))
            or is_copied(context_copy(answer, problem))
        )
        for problem in demo_problems()[:ATTACK_PROBLEMS]
        for answer in [build(problem)]
    ]
    return sum(flagged) / len(flagged)


@pytest.mark.heavy
def test_an_answer_that_does_not_fit_the_context_whole_is_not_fluent():
    """Seven words of twenty emoji take more tokens than the reading's context, so fewer than
    ``FLUENCY_MIN_WORDS`` words fit: such an answer was treated as short and not read (counted
    fluent), whatever followed. It is not read whole, so it is not fluent (``UNREAD_WHOLE``)."""
    answer = salad_behind_context_filler(demo_problems()[0])
    assert len(answer_words(answer)) >= FLUENCY_MIN_WORDS
    assert fluency_reader()(answer) == UNREAD_WHOLE


@pytest.mark.heavy
@pytest.mark.slow
def test_a_salad_behind_context_filling_words_is_flagged():
    """The thinned and padded salad after seven words of twenty emoji: AtAvg 0.267 (above
    Llama-3.1-8B-Instruct's 0.265), 4 of 30 answers flagged (story reuse), the rest not read."""
    assert _flagged_share(salad_behind_context_filler) > 0.75


@pytest.mark.parametrize("joiner", ["'", "\u2019"])
def test_a_salad_glued_by_apostrophes_is_read_as_words(joiner):
    """An apostrophe joins a contraction ("didn't") into one word; a chain of them ("a'b'c'd") glued
    the salad into seven words, too few to read, while ROUGE, BERTScore and the guards split them
    back. One apostrophe a word: of the authors' 9,800 outputs one word has more ("doesn'tI'm")."""
    glued = letters_glued_into_seven(thinned_and_padded(demo_problems()[0]), joiner)
    assert len(glued.split()) == 7
    assert len(answer_words(glued)) >= len(folded_words(glued)) / 2
    assert answer_words("He didn't go, O'Brien did.") == ["He", "didn't", "go,", "O'Brien", "did."]


@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.parametrize("joiner", ["'", "\u2019"])
def test_a_salad_glued_by_apostrophes_is_flagged(joiner):
    """Glued by \u2019: AtAvg 0.256, unflagged but for 4 of 30 answers (story reuse)."""

    def glued(problem: str) -> str:
        return letters_glued_into_seven(thinned_and_padded(problem), joiner)

    assert _flagged_share(glued) > 0.75


def test_a_letter_of_another_script_is_a_word_of_its_own():
    """Python's ``\\w`` holds the letters of every script, so "sat一the一cat" was one word to the check
    while ROUGE splits it at the ideograph and BERTScore's tokenizer at each: the story glued into
    seven such "words" went unread (AtAvg 0.226 at L2 on the 30 shared problems against
    ``generic-sentence``'s 0.207, none flagged; second attack pass on issue 45)."""
    assert answer_words("sat\u4e00the\u4e00cat. José's café") == [
        "sat", "\u4e00", "the", "\u4e00", "cat.", "José's", "café"
    ]  # fmt: skip
    glued = letters_glued_into_seven(context_answer(demo_problems()[0]), "\u4e00")
    assert len(glued.split()) == 7 and len(answer_words(glued)) > FLUENCY_MIN_WORDS


@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.parametrize("joiner", ["\u4e00", "\u0436", "\u03b1"], ids=["ideograph", "cyrillic", "greek"])
def test_the_story_glued_by_letters_of_another_script_is_flagged(joiner):
    """Was a strict xfail: the story glued by a CJK ideograph into seven words was seven words to the
    fluency check and to the story guards. The guards still see seven; the check reads the words."""
    assert _flagged_share(lambda problem: letters_glued_into_seven(context_answer(problem), joiner)) > 0.75
