"""The null baselines' rules: what a trivial answer to an instance is, defined once.

A baseline answers an instance without a model, from the instance itself. The provider
(``--model baseline/<rule>``), the board's reference rows, judge-check's probes and the
benchmark script all call :func:`baseline_answer`, so a baseline means the same everywhere.

* ``empty``: no answer.
* ``neighbour``: the ``n`` sentences next to the blank, from the side before it (the side
  after it only when the blank opens the story). Before, because a reader (and a model
  continuing the text) reaches the gap from there: echoing the preceding sentence is the
  commonest copy; it also keeps the board's former "left sentence copied" row as its
  ``n = 1`` case.
* ``context``: the whole story with the blank removed (the strongest trivial answer on the
  automatic metrics: it holds every word the context shares with the gold).
* the order-free rules (``ORDER_FREE``): the story's or the neighbouring sentences' own words with
  their order or function words broken (scrambled, sorted, swapped, interleaved, thinned). AtAvg
  reads words in any order, so these score like a model on it while saying nothing; they are the
  dishonest entrant's answers the floor and the story-reuse guard are measured against.
* ``generic-sentence``: one fixed sentence pair of the kind a story's gap often holds
  (``GENERIC_SENTENCE``), the same for every instance. It reads nothing, so no story guard can flag
  it; under the default extraction every other rule the guards let through extracts to nothing, so
  without it the floor was 0 there and this answer, AtAvg 0.207 at L2 on the 30 shared problems
  (MiniLM; written once, not tuned), was "above the floor", above five of the paper's 20 models.
* ``generic-paragraph``: one fixed paragraph of sixty fluent words (``GENERIC_PARAGRAPH``), the same
  for every instance. The metrics weigh recall (METEOR, chrF), so longer fixed text can score more
  than the sentence pair: on the packaged demo set's 24 instances 0.199 against the pair's 0.126 at
  L2, above the local model, and at L4 on the 30 shared problems 0.207 against 0.206 (MiniLM). The
  floor is the best of the two on an entry's instances.
* the story-reading rules (``STORY_READING``, ``data.story_rules``): fluent filler with the story's
  names, pronoun and nouns (or the neighbouring sentences') put in. The generic rules read nothing,
  so such filler cleared their floor (issue 58); with these the floor is what a trivial rule earns
  from the story, still a lower bound that tuned text can pass.
* ``gold``: the gold span itself (the ceiling, and a judge check). Only this rule reads the gold:
  the others are functions of the problem text and ``n`` alone.

The order-free rules read only the problem: the neighbouring sentences are the one before and the
one after the blank (``n`` unused), and a scramble's seed is the problem text's SHA-256, so a
rule's answer can be re-derived from a log (the report's forged-baseline check does).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable

from ..errors import NarrativeInfillError
from .records import BLANK
from .story_rules import STORY_RULES
from .text import normalise_space, split_sentences

GOLD = "gold"


class BaselineError(NarrativeInfillError, ValueError):
    """A baseline asked of something it cannot answer (an unknown rule, a problem with no blank)."""


def check_baseline(rule: str) -> str:
    """``rule`` when it names a baseline, else an error listing them."""
    if rule not in BASELINES:
        raise BaselineError(f"unknown baseline {rule!r}; choose from {', '.join(BASELINES)}")
    return rule


def blank_sides(problem: str) -> tuple[str, str]:
    """The problem's text before and after its blank, each stripped."""
    before, blank, after = problem.partition(BLANK)
    if not blank:
        raise BaselineError(f"no blank ({BLANK}) in the problem {problem[:80]!r}")
    return before.strip(), after.strip()


def _sentences(text: str) -> list[str]:
    # The problem text carries no <eos> markers, whatever its domain: Punkt splits it (a domain
    # outside the marker domains selects Punkt; a leftover <eos> would still split).
    return split_sentences(text, "prose") if text else []


def context_answer(problem: str, n: int = 1) -> str:
    """The story with the blank removed (``n`` is unused: the whole context is the answer)."""
    before, after = blank_sides(problem)
    return normalise_space(f"{before} {after}")


def neighbour_answer(problem: str, n: int) -> str:
    """The ``n`` sentences before the blank (fewer when the story has fewer), or the ``n`` after it
    when nothing precedes the blank."""
    before, after = blank_sides(problem)
    chosen = _sentences(before)[-n:] if before else _sentences(after)[:n]
    return " ".join(chosen)


def empty_answer(problem: str, n: int = 1) -> str:
    """No answer."""
    return ""


#: The ``generic-sentence`` rule's answer (module docstring): written once by the attack pass on
#: issue 45, not tuned on any gold; a better-tuned sentence scores more, so the floor it sets is a
#: lower bound on what gold-independent text earns.
GENERIC_SENTENCE = "He felt happy and decided to go home. It was a great day with friends."


def generic_sentence_answer(problem: str, n: int = 1) -> str:
    """``GENERIC_SENTENCE``, whatever the instance."""
    return GENERIC_SENTENCE


#: The ``generic-paragraph`` rule's answer (module docstring): written by the attack pass on issue 45 as
#: padding of no story's; its length was chosen among 30-278 words of such text as the one scoring most
#: on the demo set and the 30 shared problems (in-sample: a lower bound, like the sentence pair's).
GENERIC_PARAGRAPH = (
    "It was a quiet morning in the small town where everyone knew each other. She had been waiting for "
    "this moment for a long time and could not stop smiling. Her friends came over to help, and together "
    "they worked until the sun went down. In the end it all turned out better than anyone expected, and "
    "they were proud."
)


def generic_paragraph_answer(problem: str, n: int = 1) -> str:
    """``GENERIC_PARAGRAPH``, whatever the instance."""
    return GENERIC_PARAGRAPH


def _words(text: str) -> list[str]:
    """Words as the order-free rules move them: each with its attached punctuation ("tea.")."""
    return text.split()


def _neighbours(problem: str) -> tuple[str, str]:
    """The sentence before the blank and the sentence after it (either may be empty)."""
    before, after = blank_sides(problem)
    return " ".join(_sentences(before)[-1:]), " ".join(_sentences(after)[:1])


def scrambled_story_answer(problem: str, n: int = 1) -> str:
    """The story's words in a random order, seeded by the problem text (the same answer every run)."""
    words = _words(context_answer(problem))
    seed = int.from_bytes(hashlib.sha256(problem.encode("utf-8")).digest()[:8], "big")
    random.Random(seed).shuffle(words)
    return " ".join(words)


def sorted_story_words_answer(problem: str, n: int = 1) -> str:
    """The story's distinct words (case-folded letters and digits), sorted alphabetically."""
    return " ".join(sorted(set(re.findall(r"\w+", context_answer(problem).casefold()))))


def swapped_neighbours_answer(problem: str, n: int = 1) -> str:
    """The sentence after the blank, then the sentence before it."""
    before, after = _neighbours(problem)
    return normalise_space(f"{after} {before}")


def story_adjacent_words_swapped_answer(problem: str, n: int = 1) -> str:
    """The story with each pair of adjacent words swapped (1st with 2nd, 3rd with 4th, ...)."""
    words = _words(context_answer(problem))
    for i in range(0, len(words) - 1, 2):
        words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def neighbours_every_third_word_dropped_answer(problem: str, n: int = 1) -> str:
    """The two neighbouring sentences with every third word left out."""
    words = _words(" ".join(_neighbours(problem)))
    return " ".join(word for i, word in enumerate(words, start=1) if i % 3)


#: Each function word and the one that replaces it: a hand-written table (no library pairs function
#: words with others of their kind), swapping within a class so the text stays word-like.
_SWAPPED_BOTH_WAYS = {"the": "a", "he": "she", "his": "her", "they": "we", "i": "you", "to": "for"}
_SWAPPED_BOTH_WAYS |= {"in": "on", "of": "from", "and": "but", "was": "is"}
FUNCTION_WORD_SWAPS = {
    **_SWAPPED_BOTH_WAYS,
    **{other: word for word, other in _SWAPPED_BOTH_WAYS.items()},
    **{"an": "the", "him": "her", "at": "by", "with": "without", "were": "are", "had": "has", "it": "this"},
    "that": "which",
}


def neighbours_function_words_replaced_answer(problem: str, n: int = 1) -> str:
    """The two neighbouring sentences with each function word replaced by another of its kind."""

    def swap(word: str) -> str:
        core = word.strip(".,;:!?\"'")
        other = FUNCTION_WORD_SWAPS.get(core.casefold())
        if other is None:
            return word
        return word.replace(core, other.capitalize() if core[:1].isupper() else other, 1)

    return " ".join(swap(word) for word in _words(" ".join(_neighbours(problem))))


def neighbours_words_interleaved_answer(problem: str, n: int = 1) -> str:
    """The two neighbouring sentences' words taken in turn (1st of each, 2nd of each, ...)."""
    first, second = (_words(side) for side in _neighbours(problem))
    merged = [word for pair in zip(first, second) for word in pair]
    longer = first if len(first) > len(second) else second
    return " ".join(merged + longer[min(len(first), len(second)) :])


#: The order-free null rules (module docstring), by name: ``--model baseline/<name>``.
ORDER_FREE: dict[str, Callable[[str, int], str]] = {
    "scrambled-story": scrambled_story_answer,
    "sorted-story-words": sorted_story_words_answer,
    "swapped-neighbours": swapped_neighbours_answer,
    "story-adjacent-words-swapped": story_adjacent_words_swapped_answer,
    "neighbours-every-third-word-dropped": neighbours_every_third_word_dropped_answer,
    "neighbours-function-words-replaced": neighbours_function_words_replaced_answer,
    "neighbours-words-interleaved": neighbours_words_interleaved_answer,
}


def _story_rule(rule: Callable[[str, str], str]) -> Callable[[str, int], str]:
    """A story-reading rule (``data.story_rules``) as a problem rule: it reads the story with the
    blank removed and the sentences beside the blank (``n`` unused)."""

    def answer(problem: str, n: int = 1) -> str:
        return rule(context_answer(problem), " ".join(_neighbours(problem)))

    return answer


#: The story-reading null rules (``data.story_rules``), by name: ``--model baseline/<name>``.
STORY_READING = {name: _story_rule(rule) for name, rule in STORY_RULES.items()}

#: The rules that read only the problem and ``n``: the gold never reaches them.
PROBLEM_RULES: dict[str, Callable[[str, int], str]] = {
    "empty": empty_answer,
    "neighbour": neighbour_answer,
    "context": context_answer,
    **ORDER_FREE,
    "generic-sentence": generic_sentence_answer,
    "generic-paragraph": generic_paragraph_answer,
    **STORY_READING,
}
#: Every baseline, from nothing to the gold.
BASELINES = (*PROBLEM_RULES, GOLD)
#: The null rules: every baseline but the gold (the rules the floor is taken over).
NULL_RULES = tuple(PROBLEM_RULES)


def baseline_answer(rule: str, problem: str, n: int, gold: Callable[[], str]) -> str:
    """The answer of baseline ``rule`` to an instance. ``gold`` is called only by the ``gold``
    rule, so no other baseline can read the gold."""
    if check_baseline(rule) == GOLD:
        return gold()
    if type(n) is not int or n < 1:
        raise BaselineError(f"n must be a whole number of sentences from 1, got {n!r}")
    return PROBLEM_RULES[rule](problem, n)
