"""``context_copy``: how much of an answer is copied from the story around the blank.

Definition: the answer's words (lower-cased runs of letters and digits) that lie inside a
run of at least ``COPY_NGRAM`` (3) consecutive words also found, in the same order and
adjacent, in the context (the problem with its blank removed), as a share of the answer's
words. Equivalently, the share of answer words covered by answer word trigrams that occur in
the context. An answer shorter than three words counts as copied when it occurs whole, as
consecutive words, in the context. An empty answer copies nothing (0).

Why this measure: it reads 1 for a copied sentence, the whole story, or several copied
sentences run together, and about the copied share for an answer that copies one sentence and
adds its own; it stays near 0 for an original sentence that reuses the story's names and
common words (single shared words and pairs do not count, where ROUGE-1 or a longest common
subsequence against a long context would give credit for scattered words such as "the",
"she", "to"). Contamination (``copy_guards.CONTAMINATION_ROUGE``) counts reproducing the gold;
this counts reproducing the context, which the automatic metrics reward because the gold
shares the story's names and topic.
"""

from __future__ import annotations

import re
import unicodedata

from inspect_ai.scorer import Metric, SampleScore, metric

from ...copy_guards import CONTEXT_COPY_THRESHOLD, is_copied
from ...data.records import BLANK

#: Shortest run of consecutive words that counts as copied.
COPY_NGRAM = 3
_WORD = re.compile(r"[^\W_]+")
#: Letters of other scripts drawn like Latin ones (homoglyphs): "Аmber" with a Cyrillic А is "Amber".
_HOMOGLYPHS = str.maketrans(
    "\u0430\u0432\u0435\u0455\u0456\u0458\u043a\u043c\u043d\u043e\u0440\u0441\u0442\u0443\u0445\u04bb\u0501"
    "\u03b1\u03b9\u03ba\u03bd\u03bf\u03c1\u03c4\u03c5\u03c7",
    "abesijkmhopctyxhdaikvoptux",
)


#: Unicode categories that do not separate words: format characters, combining marks.
_DROPPED = {"Cf", "Mn", "Me"}


def _plain(text: str) -> str:
    """``text`` as read: compatibility forms folded (NFKD: full-width letters, ligatures), format
    characters and combining marks dropped (zero-width spaces and joiners, soft hyphens, accents,
    variation selectors: invisible or nearly, each would cut a copied word in two), case folded and
    look-alike letters of other scripts read as Latin. Both the answer and the context are read so."""
    kept = (c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) not in _DROPPED)
    return "".join(kept).casefold().translate(_HOMOGLYPHS)


def folded_words(text: str) -> list[str]:
    """``text``'s words as the story guards read them (``_plain``): runs of letters and digits."""
    return _WORD.findall(_plain(text))


def _ngrams(words: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def context_copy(answer: str, problem: str) -> float:
    """The share (0..1) of ``answer``'s words inside runs of ``COPY_NGRAM`` or more consecutive
    words copied from ``problem``'s context (module docstring). Linear in the two lengths."""
    words = folded_words(answer)
    if not words:
        return 0.0
    context = folded_words(problem.replace(BLANK, " "))
    size = min(COPY_NGRAM, len(words))
    found = _ngrams(context, size)
    covered = [False] * len(words)
    for start in range(len(words) - size + 1):
        if tuple(words[start : start + size]) in found:
            covered[start : start + size] = [True] * size
    return sum(covered) / len(words)


@metric
def copied_share(threshold: float = CONTEXT_COPY_THRESHOLD) -> Metric:
    """The share of samples whose ``context_copy`` is above ``threshold`` (the package's rule,
    ``copy_guards.is_copied``; recorded as the metric's parameter): answers that are mostly copies."""

    def compute(scores: list[SampleScore]) -> float:
        values = [score.score.as_float() for score in scores]
        copied = sum(bool(is_copied(value, threshold)) for value in values)
        return copied / len(values) if values else float("nan")

    return compute


__all__ = ["COPY_NGRAM", "CONTEXT_COPY_THRESHOLD", "context_copy", "copied_share", "folded_words"]
