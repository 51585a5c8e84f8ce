"""``story_reuse``: how much of an answer is the story's own material, in whatever order.

Definition: the answer's distinct content words (words read as the copy guard reads them,
``copying.folded_words``: compatibility forms, invisible characters, accents, case and look-alike
letters folded; scikit-learn's English stop words dropped; NLTK's Snowball stem of each) that
also occur, stemmed alike, in the context (the problem with its blank removed), as a share of
``max(distinct content words, STORY_REUSE_MIN_WORDS)``. An answer without content words reuses
nothing (0).

Why this measure: ``context_copy`` reads runs of three words in the story's order, so the story's
words swapped in pairs, sorted, interleaved or thinned keep most of the copy's AtAvg and read ~0
there. A set of stems has no order; stop words carry no content, so replacing them changes
nothing; stems make "walked" and "walking" one word; counting distinct words means a filler word
repeated ("um" for every third word) counts once. Real answers reuse the story's names and nouns
but bring words of their own (what happened in the gap), so their share stays below the
threshold (``definitions.STORY_REUSE_THRESHOLD``; docs/baselines.md has the measurements).

Short answers: the share is taken over at least ``STORY_REUSE_MIN_WORDS`` words, as if a short
answer were padded with words of its own, because a handful of story words is how a real short
answer reads ("Tom cried.") and is too little text to win AtAvg by reuse.
"""

from __future__ import annotations

from functools import cache

from inspect_ai.scorer import Metric, SampleScore, metric

from ...data.records import BLANK
from ...definitions import STORY_REUSE_THRESHOLD, is_story_reuse
from .copying import folded_words

#: Fewest content words a share is taken over (module docstring: short answers).
STORY_REUSE_MIN_WORDS = 5


@cache
def _content_stem():
    """A word's stem, or None for a stop word: one stemmer and stop list per process (both
    lazy: scikit-learn's import is not free)."""
    from nltk.stem.snowball import SnowballStemmer
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    stem = cache(SnowballStemmer("english").stem)

    def content_stem(word: str) -> str | None:
        return None if word in ENGLISH_STOP_WORDS else stem(word)

    return content_stem


def content_stems(text: str) -> set[str]:
    """The distinct stems of ``text``'s content words, read as the guards read text."""
    content_stem = _content_stem()
    return {stem for stem in map(content_stem, folded_words(text)) if stem is not None}


def story_reuse(answer: str, problem: str) -> float:
    """The share (0..1) of ``answer``'s distinct content words that occur in ``problem``'s context,
    over at least ``STORY_REUSE_MIN_WORDS`` words (module docstring). Linear in the two lengths."""
    stems = content_stems(answer)
    if not stems:
        return 0.0
    story = content_stems(problem.replace(BLANK, " "))
    return len(stems & story) / max(len(stems), STORY_REUSE_MIN_WORDS)


@metric
def reused_share(threshold: float = STORY_REUSE_THRESHOLD) -> Metric:
    """The share of samples whose ``story_reuse`` is above ``threshold`` (the package's rule,
    ``definitions.is_story_reuse``; recorded as the metric's parameter): answers that are the
    story's words rearranged."""

    def compute(scores: list[SampleScore]) -> float:
        values = [score.score.as_float() for score in scores]
        reused = sum(bool(is_story_reuse(value, threshold)) for value in values)
        return reused / len(values) if values else float("nan")

    return compute


__all__ = ["STORY_REUSE_MIN_WORDS", "content_stems", "reused_share", "story_reuse"]
