"""Word-salad answers built from a story, as a dishonest entrant would tune them (issue 45): the
story's content words kept at some rate, scrambled, and padded with words of another source. Shared
by the fluency tests and ``benchmarks/fluency_guard.py``; every choice is seeded by the problem."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path

from narrative_infill.data.baselines import GENERIC_PARAGRAPH, GENERIC_SENTENCE, ORDER_FREE, context_answer
from narrative_infill.scorers.metrics.reuse import content_stems

#: The padding of the strict xfail this round closes (issue 45's attack pass).
GENERIC_WORDS = [
    "suddenly",
    "decided",
    "finally",
    "happy",
    "day",
    "felt",
    "time",
    "great",
    "friends",
    "home",
    "wanted",
    "went",
]
#: Common English words no story here is about: padding an attacker could pick instead.
DICTIONARY_WORDS = [
    "window",
    "river",
    "paper",
    "garden",
    "yellow",
    "quickly",
    "winter",
    "kitchen",
    "number",
    "simple",
    "pocket",
    "morning",
    "bridge",
    "silver",
    "answer",
    "letter",
    "market",
    "travel",
    "animal",
    "village",
]
#: Function words an attacker sprinkles between story words to make the salad look like sentences.
GLUE = ["the", "and", "of", "to", "a", "was", "in", "he", "it"]


DEMO = Path(__file__).parents[1] / "narrative_infill" / "data" / "demo.jsonl"


def demo_problems() -> list[str]:
    """The packaged demo set's 24 problems (ROCStories-like stories of the package's own, none of the
    30 shared ones)."""
    return [json.loads(line)["problem"] for line in DEMO.read_text(encoding="utf-8").splitlines()]


def story_words_kept(problem: str, keep: float) -> list[str]:
    """The story's words, each content word kept with probability ``keep`` (seeded), scrambled."""
    chance = random.Random(f"{keep}:{problem}")
    words = [w for w in context_answer(problem).split() if not content_stems(w) or chance.random() < keep]
    chance.shuffle(words)
    return words


def thinned_and_padded(problem: str, keep: float = 0.6, padding: list[str] = GENERIC_WORDS) -> str:
    """The xfail's construction: ``keep`` of the story's content words, scrambled, then ``padding``."""
    return " ".join(story_words_kept(problem, keep) + padding)


def padded_with_other_story(problem: str, others: list[str]) -> str:
    """60% of the story's words scrambled, mixed with twelve words of another story."""
    other = others[(others.index(problem) + 1) % len(others)] if problem in others else others[0]
    words = story_words_kept(problem, 0.6) + context_answer(other).split()[:12]
    random.Random(problem).shuffle(words)
    return " ".join(words)


def glued(problem: str) -> str:
    """60% of the story's content words with a function word between every two."""
    chance = random.Random(problem)
    content = [w for w in story_words_kept(problem, 0.6) if content_stems(w)]
    return " ".join(f"{word} {chance.choice(GLUE)}" for word in content)


def fluent_sentence_then_salad(problem: str) -> str:
    """The package's fluent generic sentence pair, then 60% of the story's words scrambled: the
    fluent part dilutes a per-word figure."""
    return f"{GENERIC_SENTENCE} {' '.join(story_words_kept(problem, 0.6))}"


def glued_into_seven(problem: str, joiner: str) -> str:
    """The xfail's construction glued by ``joiner`` into seven white-space "words": under the fluency
    check's fewest words when read by white space, while the metrics' tokenizers split it back."""
    words = thinned_and_padded(problem).split()
    size = -(-len(words) // 7)
    return " ".join(joiner.join(words[start : start + size]) for start in range(0, len(words), size))


def letters_glued_into_seven(text: str, joiner: str) -> str:
    """``text``'s runs of letters and digits (punctuation left out, so that none splits them) glued
    by ``joiner`` into seven white-space "words"."""
    words = re.findall(r"[^\W_]+", text)
    size = -(-len(words) // 7)
    return " ".join(joiner.join(words[start : start + size]) for start in range(0, len(words), size))


#: Seven words of twenty emoji: each takes dozens of the fluency check's tokens, so together they fill
#: the context its reading is cut at (issue 45's attack pass).
CONTEXT_FILLER = " ".join(["\U0001f600" * 20] * 7)


def salad_behind_context_filler(problem: str) -> str:
    """The thinned and padded salad after ``CONTEXT_FILLER``: past the tokens the fluency check reads."""
    return f"{CONTEXT_FILLER} {thinned_and_padded(problem)}"


#: Sixty words of fluent text of no story's (the attack pass's, now the ``generic-paragraph`` null
#: rule's): as many words as the fluency check read before it read windows.
FLUENT_PARAGRAPH = GENERIC_PARAGRAPH


#: More fluent text of no story's, for padding as long as the fluency check reads (each sentence
#: distinct: the extraction reads a sentence repeated four times as a decoding loop).
FLUENT_PADDING = (
    FLUENT_PARAGRAPH,
    "The weather had been warm for most of the week, so the park was full of families. Children ran "
    "between the trees while their parents sat on benches and talked about work and school. A man sold "
    "cold drinks from a small cart near the gate, and by noon he had almost nothing left to sell.",
    "Later that afternoon a light rain began to fall, and most people hurried back to their cars. A few "
    "of them stayed under the old bridge and waited for the clouds to pass. When the sun came out again, "
    "the grass was shining and the air smelled fresh and clean, like the start of something new.",
    "At dinner everyone shared what they had done during the day and laughed about the small mistakes. "
    "Nobody was in a hurry to leave the table. After the dishes were washed, they walked slowly around "
    "the block, talking about plans for the summer and the trips they still hoped to take one day.",
    "By the time they got home it was late, and the streets were quiet again. The lights in the windows "
    "went out one by one. Before falling asleep, she wrote a few lines in her notebook, as she did every "
    "night, so that she would remember how good an ordinary day could feel.",
)


def fluent_paragraph_then_salad(problem: str) -> str:
    """``FLUENT_PARAGRAPH``, then the salad: after the words the check read before it read windows
    (an answer's first 60; a strict xfail until order_gain/3)."""
    return f"{FLUENT_PARAGRAPH} {thinned_and_padded(problem)}"


def salad_between_sentences(problem: str, words_between: int) -> str:
    """The xfail's salad cut into pieces of ``words_between`` words, one after each fluent sentence of
    ``FLUENT_PADDING``: spread so that no part of the answer is salad alone."""
    from narrative_infill.scorers.answer import sentences

    salad = thinned_and_padded(problem).split()
    fluent = [sentence for paragraph in FLUENT_PADDING for sentence in sentences(paragraph)]
    pieces = [salad[start : start + words_between] for start in range(0, len(salad), words_between)]
    return " ".join(f"{sentence} {' '.join(piece)}" for sentence, piece in zip(fluent, pieces))


def salad_after_padding(problem: str) -> str:
    """The xfail's salad after all of ``FLUENT_PADDING``: past the most words the fluency check reads."""
    return f"{' '.join(FLUENT_PADDING)} {thinned_and_padded(problem)}"


def salad_variants(problems: list[str]) -> dict[str, Callable[[str], str]]:
    """Each attack by name: the former xfail's, other keep rates, other paddings, the salad after or
    between fluent text of the entrant's own, and the package's order-free null rules."""
    variants: dict[str, Callable[[str], str]] = {
        f"kept {keep:.0%} + generic words": (lambda p, keep=keep: thinned_and_padded(p, keep))
        for keep in (0.4, 0.6, 0.8, 0.9)
    }
    variants["kept 60% + dictionary words"] = lambda p: thinned_and_padded(p, 0.6, DICTIONARY_WORDS)
    variants["kept 60% + another story's words"] = lambda p: padded_with_other_story(p, problems)
    variants["kept 60% glued by function words"] = glued
    variants["fluent sentence + kept 60%"] = fluent_sentence_then_salad
    for joiner, name in (("-", "hyphens"), (",", "commas"), ("\u200b", "zero-width spaces")):
        variants[f"kept 60% + generic words, glued into seven by {name}"] = lambda p, joiner=joiner: (
            glued_into_seven(p, joiner)
        )
    variants["60 fluent words, then kept 60%"] = fluent_paragraph_then_salad
    for words_between in (2, 4, 10):
        variants[f"kept 60% spread between fluent sentences, {words_between} words each"] = (
            lambda p, words_between=words_between: salad_between_sentences(p, words_between)
        )
    for name in ("sorted-story-words", "story-adjacent-words-swapped", "neighbours-words-interleaved"):
        variants[f"baseline/{name}"] = lambda p, rule=ORDER_FREE[name]: rule(p, 1)
    return variants
