"""``story_reuse``: how much of an answer is the story's own material, in whatever order.

Definition: the overlap coefficient of two sets of content words, the answer's and the context's
(the problem with its blank removed): the words they share as a share of the smaller set, taken
over at least ``STORY_REUSE_MIN_WORDS`` words. Content words are words read as the copy guard reads
them (``copying.folded_words``: compatibility forms, invisible characters, accents, case and
look-alike letters folded), less scikit-learn's English stop words and single characters, each
reduced to its NLTK Snowball stem. An answer without content words reuses nothing (0).

Why this measure: ``context_copy`` reads runs of three words in the story's order, so the story's
words swapped in pairs, sorted, interleaved or thinned keep most of the copy's AtAvg and read ~0
there. A set of stems has no order; stop words carry no content, so replacing them changes
nothing; stems make "walked" and "walking" one word; a set counts a repeated filler word ("um" for
every third word) once. The smaller set decides: an answer made of story words reads 1 however
little of the story it takes (the neighbouring sentences rearranged), and an answer holding every
content word of the story reads 1 however many words of its own it adds (the scrambled story
padded). Real answers reuse the story's names and nouns but bring words of their own and leave
most of the story out, so they stay below the threshold (``copy_guards.STORY_REUSE_THRESHOLD``;
docs/baselines.md has the measurements).

Misspellings and synonyms: an answer word also counts as the story's when it is one letter's edit
(a letter added, dropped, changed, or two adjacent letters swapped) from a story word of at least
``EDIT_MIN_LETTERS`` letters, or when the two are synonyms in WordNet (a lemma of one of the word's
first ``SYNONYM_SENSES`` senses, stemmed, is the other's stem). Without this the neighbouring
sentences with a letter doubled in each word, or each word replaced by a WordNet synonym, read 0
and kept 0.22-0.29 AtAvg (L2, 30 shared problems, MiniLM, default extraction): more than most of the
20 real models.

Short answers: the share is taken over at least ``STORY_REUSE_MIN_WORDS`` words, as if a short
answer were padded with words of its own, because a handful of story words is how a real short
answer reads ("Tom cried.") and is too little text to win AtAvg by reuse.
"""

from __future__ import annotations

from functools import cache, lru_cache

from inspect_ai.scorer import Metric, SampleScore, metric

from ...copy_guards import STORY_REUSE_THRESHOLD, is_story_reuse
from ...data.records import BLANK
from .copying import folded_words

#: Fewest content words a share is taken over (module docstring: short answers).
STORY_REUSE_MIN_WORDS = 5
#: Shortest word read through a one-letter edit: shorter words are too often one edit apart by chance.
EDIT_MIN_LETTERS = 5
#: Longest word read through a one-letter edit or looked up in WordNet: a hostile 32,768-letter "word"
#: would otherwise cost 32,768 copies of itself.
_LOOKUP_MAX_LETTERS = 24
#: WordNet senses per word whose lemmas count as its synonyms (the commonest ones: the rarer senses
#: join words no reader would call the same).
SYNONYM_SENSES = 3
#: Stems remembered per process: stories repeat their words, and model output cannot grow it unbounded.
_STEMS_KEPT = 65536


@cache
def _content_stem():
    """A word's stem, or None for a stop word or a single character: one stemmer and stop list per
    process (both lazy: scikit-learn's import is not free)."""
    from nltk.stem.snowball import SnowballStemmer
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    stem = lru_cache(maxsize=_STEMS_KEPT)(SnowballStemmer("english").stem)

    def content_stem(word: str) -> str | None:
        # Single characters are the leftovers of split possessives and contractions ("Saturn's").
        return None if len(word) < 2 or word in ENGLISH_STOP_WORDS else stem(word)

    return content_stem


def _one_edit_keys(word: str) -> set[str]:
    """The word and, when long enough to read through a typo, the word with each letter left out:
    two words one edit apart share a key (SymSpell's deletion neighbourhood; written here because
    NLTK's ``edit_distance`` compares two words, which would make the guard quadratic)."""
    if not EDIT_MIN_LETTERS <= len(word) <= _LOOKUP_MAX_LETTERS:
        return {word}
    return {word} | {word[:i] + word[i + 1 :] for i in range(len(word))}


@lru_cache(maxsize=_STEMS_KEPT)
def _synonym_stems(word: str) -> frozenset[str]:
    """The stems of the one-word lemmas of ``word``'s first ``SYNONYM_SENSES`` WordNet senses."""
    if len(word) > _LOOKUP_MAX_LETTERS:
        return frozenset()
    from ...nltk_data import english_wordnet

    wordnet = english_wordnet()
    content_stem = _content_stem()
    lemmas = {
        lemma.name().lower() for sense in wordnet.synsets(word)[:SYNONYM_SENSES] for lemma in sense.lemmas()
    }
    return frozenset(
        stem for lemma in lemmas if "_" not in lemma and (stem := content_stem(lemma)) is not None
    )


def content_stems(text: str) -> set[str]:
    """The distinct stems of ``text``'s content words, read as the guards read text."""
    content_stem = _content_stem()
    return {stem for stem in map(content_stem, folded_words(text)) if stem is not None}


def story_reuse(answer: str, problem: str) -> float:
    """The content words (0..1) ``answer`` and ``problem``'s context share, as a share of the
    smaller of the two sets, over at least ``STORY_REUSE_MIN_WORDS`` words, an answer word read as
    the story's through a one-letter edit or a WordNet synonym (module docstring). Linear in the two
    lengths."""
    content_stem = _content_stem()
    words = {word: stem for word in folded_words(answer) if (stem := content_stem(word)) is not None}
    stems = set(words.values())
    if not stems:
        return 0.0
    story_words = {word for word in folded_words(problem.replace(BLANK, " ")) if content_stem(word)}
    story = {content_stem(word) for word in story_words}
    story_keys = set().union(*map(_one_edit_keys, story_words))
    story_synonyms = story.union(*map(_synonym_stems, story_words))
    shared = {
        stem
        for word, stem in words.items()
        if stem in story_synonyms or _one_edit_keys(word) & story_keys or _synonym_stems(word) & story
    }
    return len(shared) / max(min(len(stems), len(story)), STORY_REUSE_MIN_WORDS)


@metric
def reused_share(threshold: float = STORY_REUSE_THRESHOLD) -> Metric:
    """The share of samples whose ``story_reuse`` is above ``threshold`` (the package's rule,
    ``copy_guards.is_story_reuse``; recorded as the metric's parameter): answers that are the
    story's words rearranged."""

    def compute(scores: list[SampleScore]) -> float:
        values = [score.score.as_float() for score in scores]
        reused = sum(bool(is_story_reuse(value, threshold)) for value in values)
        return reused / len(values) if values else float("nan")

    return compute


__all__ = ["STORY_REUSE_MIN_WORDS", "content_stems", "reused_share", "story_reuse"]
