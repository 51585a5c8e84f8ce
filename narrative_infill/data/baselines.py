"""The null baselines' rules: what a trivial answer to an instance is, defined once.

A baseline answers an instance without a model, from the instance itself. The provider
(``--model baseline/<rule>``), the board's reference rows, judge-check's probes and the
benchmark script all call :func:`baseline_answer`, so a baseline means the same everywhere.

* ``empty``: no answer (the floor).
* ``neighbour``: the ``n`` sentences next to the blank, from the side before it (the side
  after it only when the blank opens the story). Before, because a reader (and a model
  continuing the text) reaches the gap from there: echoing the preceding sentence is the
  commonest copy; it also keeps the board's former "left sentence copied" row as its
  ``n = 1`` case.
* ``context``: the whole story with the blank removed (the strongest trivial answer on the
  automatic metrics: it holds every word the context shares with the gold).
* ``gold``: the gold span itself (the ceiling, and a judge check). Only this rule reads the gold:
  the others are functions of the problem text and ``n`` alone.
"""

from __future__ import annotations

from collections.abc import Callable

from ..definitions import NarrativeInfillError
from .records import BLANK
from .text import normalise_space, split_sentences

BASELINES = ("empty", "neighbour", "context", "gold")
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


#: The rules that read only the problem and ``n``: the gold never reaches them.
PROBLEM_RULES: dict[str, Callable[[str, int], str]] = {
    "empty": empty_answer,
    "neighbour": neighbour_answer,
    "context": context_answer,
}


def baseline_answer(rule: str, problem: str, n: int, gold: Callable[[], str]) -> str:
    """The answer of baseline ``rule`` to an instance. ``gold`` is called only by the ``gold``
    rule, so no other baseline can read the gold."""
    if check_baseline(rule) == GOLD:
        return gold()
    if type(n) is not int or n < 1:
        raise BaselineError(f"n must be a whole number of sentences from 1, got {n!r}")
    return PROBLEM_RULES[rule](problem, n)
