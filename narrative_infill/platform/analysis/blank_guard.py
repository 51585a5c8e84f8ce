"""The blank guard: answers that say the same thing wherever the blank sits in a story.

An infill answers one blank. A rule that reads the story but not the blank (its names and nouns in
fixed filler) gives the blanks of one story one answer, or answers that differ only in the story's
own words; AtAvg cannot tell, because the story's words are what any answer about it shares with
the gold (issue 58). The benchmark masks each story at several positions (``data.narrative``: the
sample ids name the story), so an entry's answers to one story's blanks can be read side by side.

Definition. An answer's *residual* is the set of its words (case-folded letters and digits) that no
problem of its story holds (the story as the entry was shown it, every blank's context together).
Two blanks are compared only when they are *apart*: their golds share no sentence (the benchmark's
blanks of one story are often nested spans, whose answers may rightly say the same), and both
answers have at least ``copy_guards.BLANK_MIN_WORDS`` words. A story *ignores the blank* when it has
such a pair and every such pair's answers are the same text (whitespace and case aside) or have
residuals, both non-empty, whose Jaccard similarity reaches ``copy_guards.BLANK_SAME_THRESHOLD``:
only filler and the story's own words tell them apart. The entry's share is the share of such
stories among those with a pair to compare (0 when none has: such a set cannot show it).

What it cannot see: filler varied from blank to blank (a rule choosing among sentences by the
blank's position) passes; the floor (``analysis.floor``), the judge and the other guards remain.
Thresholds and false-positive shares on the 9,800 real outputs: docs/baselines.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import combinations

from ...copy_guards import BLANK_MIN_WORDS, BLANK_SAME_THRESHOLD
from ...data.narrative import narrative_of_id
from ...data.text import split_sentences

_WORD = re.compile(r"\w+")
#: Longest answer read, in characters: a hostile answer costs no more than this.
_READ_CHARACTERS = 20_000


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text[:_READ_CHARACTERS].casefold()))


def _same(first: str, second: str, story: set[str]) -> bool:
    """Whether two answers to blanks of one story say the same thing (module docstring)."""
    if " ".join(first.casefold().split()) == " ".join(second.casefold().split()):
        return True
    a, b = _words(first) - story, _words(second) - story
    return bool(a and b) and len(a & b) / len(a | b) >= BLANK_SAME_THRESHOLD


def _sentences(gold: str) -> frozenset[str]:
    return frozenset(
        " ".join(s.casefold().split()) for s in split_sentences(gold[:_READ_CHARACTERS], "prose")
    )


def story_ignores_blank(answers: list[tuple[str, str]], problems: Iterable[str]) -> bool | None:
    """Whether a story's (answer, gold) pairs, one per blank, ignore the blank; None when no two
    blanks apart were both answered (nothing to compare)."""
    answered = [
        (answer, _sentences(gold)) for answer, gold in answers if len(answer.split()) >= BLANK_MIN_WORDS
    ]
    pairs = [(a, b) for (a, gold_a), (b, gold_b) in combinations(answered, 2) if not gold_a & gold_b]
    if not pairs:
        return None
    story = set().union(*(_words(problem) for problem in problems))
    return all(_same(a, b, story) for a, b in pairs)


def ignored_share(answers: Iterable[tuple[str, str, str, str]]) -> float:
    """The share of stories whose blanks the answers ignore, from (story key, problem, gold, answer)
    per sample (module docstring); 0 when no story has two blanks apart answered."""
    stories: dict[str, tuple[list[tuple[str, str]], set[str]]] = {}
    for story, problem, gold, answer in answers:
        said, problems = stories.setdefault(story, ([], set()))
        said.append((answer, gold))
        problems.add(problem)
    read = [story_ignores_blank(said, problems) for said, problems in stories.values()]
    known = [flag for flag in read if flag is not None]
    return sum(known) / len(known) if known else 0.0


def story_key(sample_id: object, problem: str) -> str:
    """The story a sample answers: the narrative its benchmark id names, else the sample itself (an
    id of another form: a story of its own, never compared)."""
    return narrative_of_id(sample_id) or f"own:{sample_id}:{problem}"
