"""Held-out attack rules (issue 58): answers without a model, kept out of the package and out of
every threshold's tuning, so the guards and the floor are tested on rules they were not fitted to.

* ``attack:names-nouns-sentence``: the issue's sentence pair with the story's commonest name and two
  commonest nouns put in (nothing tuned).
* ``attack:gold-words-paragraph``: one fixed paragraph woven from the golds' most frequent content
  words (in-sample: it reads the golds of the problems it is scored on).
* ``attack:names-nouns-gold-woven``: the first with sentences woven from frequent gold words after it
  (in-sample).
* ``attack:position-filler``: this attack pass's own: the story's name and nouns in one of three
  filler sentences chosen by the blank's neighbouring sentence, so a story's blanks get different
  filler (made to slip past the blank guard; the floor must hold it).
* ``attack:prefixed-neighbour-verbs``: the second attack pass's: the floor rule's own sentence
  (``neighbour-nouns-sentence``) after a time-of-day opener picked by how many sentences precede the
  blank (so no two blanks of a story share it: the blank guard's residuals differ), then two short
  sentences pairing the neighbours' "-ed" words with further nouns. No gold read, but picked as the
  best of about fifteen such variants on the 30 shared problems at L2 (selected in-sample).
* ``attack:function-word-tail``: the third attack pass's: the floor rule's own text
  (``neighbour-nouns-verbs``) and one sentence of common function words around its second noun
  ("She was on her way to the dad with all of them."): METEOR and ROUGE-1 pay for the function
  words a gold shares. No gold read, but the tail picked as the best of about ten on the 30 shared
  problems at L2 (selected in-sample).
* ``attack:nouns-function-tail``: the same tail after ``neighbour-nouns-sentence`` (the floor rule
  without its verb clauses, which the fluency check reads as less fluent); the same selection.
* ``attack:position-varied-tail``: the floor rule's text and one of six function-word sentences
  chosen by how many sentences precede the blank (made to slip past the blank guard); the six were
  written once, not tuned.
* ``attack:nouns-varied-tail``: ``neighbour-nouns-sentence`` and one of six function-word sentences
  in the tail's manner chosen by the blank's position (fluent and varied; written once, not tuned).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable

from narrative_infill.data.baselines import (
    _neighbours,
    _sentences,
    baseline_answer,
    blank_sides,
    context_answer,
)
from narrative_infill.data.story_rules import names, nouns, pronoun

_POSSESSIVE = {"he": "his", "she": "her", "they": "their", "i": "my"}
_FILLERS = (
    "{name} looked at the {first} and smiled. It was the best thing about the {second}.",
    "After a while {name} went back to the {first}, thinking about the {second} all day.",
    "{name} was worried about the {first}, but the {second} made everything better.",
)


def _name_nouns(problem: str) -> tuple[str, str, str, str]:
    story = context_answer(problem)
    subject = pronoun(story)
    found = names(story)
    picked = ([*nouns(story), "day", "day"])[:2]
    name = found[0] if found else ("I" if subject == "i" else subject.capitalize())
    return name, subject, picked[0], picked[1]


def names_nouns_sentence(problem: str) -> str:
    name, subject, first, second = _name_nouns(problem)
    return (
        f"{name} felt happy about the {first} and decided to go home. It was a great day, and "
        f"{'I' if subject == 'i' else subject} went to the {second} with {_POSSESSIVE[subject]} friends."
    )


def gold_words(golds: list[str], count: int = 24) -> list[str]:
    """The golds' most frequent content words (scikit-learn's stop words out), in-sample."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    words = [w for gold in golds for w in re.findall(r"[a-z]+", gold.lower()) if w not in ENGLISH_STOP_WORDS]
    return [word for word, _ in Counter(words).most_common(count)]


def woven(words: list[str]) -> str:
    """Simple sentences holding ``words`` three at a time."""
    triples = [words[i : i + 3] for i in range(0, len(words) - 2, 3)]
    return " ".join(f"Then the {a} and the {b} were {c}." for a, b, c in triples)


def position_filler(problem: str) -> str:
    name, _, first, second = _name_nouns(problem)
    near = " ".join(_neighbours(problem))
    choice = int.from_bytes(hashlib.sha256(near.encode()).digest()[:4], "big") % len(_FILLERS)
    return _FILLERS[choice].format(name=name, first=first, second=second)


_OPENERS = (
    "Early one cold winter morning, before breakfast,",
    "Soon afterwards, quite suddenly and unexpectedly,",
    "Later that sunny afternoon, almost by chance,",
    "That rainy evening, right after dinner,",
    "By nightfall, at long last, exhausted,",
    "Many years later, looking back,",
)


def _past_tense(text: str) -> list[str]:
    """Distinct words ending in "ed" (four letters or more), in order: the verbs a rule can spot."""
    return list(
        dict.fromkeys(w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3 and w.endswith("ed"))
    )


def prefixed_neighbour_verbs(problem: str) -> str:
    story = context_answer(problem)
    near = " ".join(_neighbours(problem))
    subject = pronoun(story)
    name = (names(near) or names(story) or ["I" if subject == "i" else subject])[0]
    found = list(dict.fromkeys([*nouns(near), *nouns(story)]))[:5]
    n = found + ["day"] * (5 - len(found))
    opener = _OPENERS[len(_sentences(blank_sides(problem)[0])) % len(_OPENERS)]
    capital = "I" if subject == "i" else subject.capitalize()
    text = (
        f"{opener} then {name} saw the {n[0]}. {capital} thought about the {n[1]} and the {n[2]} "
        "for a while, and then it was time to go."
    )
    verbs = _past_tense(near) + [v for v in _past_tense(story) if v not in _past_tense(near)]
    for i, verb in enumerate(verbs[:2]):
        text += f" {name if i == 0 else capital} {verb} the {n[3 + i]}."
    return " ".join(text.split())


_TAIL = "{S} was on {poss} way to the {noun} with all of them."
_TAILS = (
    "{S} was on {poss} way to the {noun} with a lot of them.",
    "Before long {s} had to get back into the {noun} because of them.",
    "After all of that, {s} was at the {noun} for an hour or so.",
    "By then {s} could see why everyone was so happy at the {noun}.",
    "Once again {s} went out into the {noun} as if nothing had happened.",
    "So {s} stayed in the {noun} until it got very late that night.",
)

_VARIED_TAILS = (
    _TAIL,
    "{S} had a bag full of {noun} in {poss} hand for them.",
    "{S} was in a hurry to get to the {noun} before any of them.",
    "{S} had one more look at the {noun} with each of them.",
    "{S} was out by the {noun} for most of the evening with them.",
    "{S} had some of {poss} {noun} left over for them too.",
)


def _tail(problem: str, tail: str) -> str:
    """``tail`` with the story's pronoun and the floor rule's second noun put in."""
    story = context_answer(problem)
    subject = pronoun(story)
    noun = (list(dict.fromkeys([*nouns(" ".join(_neighbours(problem))), *nouns(story)])) + ["day"] * 2)[1]
    return tail.format(
        S="I" if subject == "i" else subject.capitalize(),
        s="I" if subject == "i" else subject,
        poss=_POSSESSIVE[subject],
        noun=noun,
    )


def function_word_tail(problem: str, rule: str = "neighbour-nouns-verbs") -> str:
    return f"{baseline_answer(rule, problem, 1, str)} {_tail(problem, _TAIL)}"


def position_varied_tail(problem: str) -> str:
    tail = _TAILS[len(_sentences(blank_sides(problem)[0])) % len(_TAILS)]
    return f"{baseline_answer('neighbour-nouns-verbs', problem, 1, str)} {_tail(problem, tail)}"


def nouns_varied_tail(problem: str) -> str:
    tail = _VARIED_TAILS[len(_sentences(blank_sides(problem)[0])) % len(_VARIED_TAILS)]
    return f"{baseline_answer('neighbour-nouns-sentence', problem, 1, str)} {_tail(problem, tail)}"


def attack_rules(golds: list[str]) -> dict[str, Callable[[str], str]]:
    """Each attack rule by name, as a function of the problem; ``golds`` feed the in-sample ones."""
    paragraph = woven(gold_words(golds))
    return {
        "attack:names-nouns-sentence": names_nouns_sentence,
        "attack:gold-words-paragraph": lambda problem: paragraph,
        "attack:names-nouns-gold-woven": lambda problem: (
            f"{names_nouns_sentence(problem)} {woven(gold_words(golds, 12))}"
        ),
        "attack:position-filler": position_filler,
        "attack:prefixed-neighbour-verbs": prefixed_neighbour_verbs,
        "attack:function-word-tail": function_word_tail,
        "attack:nouns-function-tail": lambda problem: function_word_tail(problem, "neighbour-nouns-sentence"),
        "attack:position-varied-tail": position_varied_tail,
        "attack:nouns-varied-tail": nouns_varied_tail,
    }
