"""Whole sentences in, whole sentences out: passes after the restated context is removed.

Removing the restated words can cut a model's sentence in two ("Her hard work paid off, and
[she won a medal at the state finals.]"), leaving an answer that ends in a dangling
conjunction or comma, or stitched text. The annotators decided per sentence, as these passes
do: a sentence that only restates the story is dropped whole, a sentence with new words is
kept whole. Also: bold used for emphasis inside a longer sentence is not taken for the marked
answer. A tagged answer is kept whole even when its last sentence repeats the story's next
sentence: the annotators keep the tagged span as it is (held-out finding, issue 30).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from .context import SENTENCE_END
from .marks import BOLD

_SENTENCES = re.compile(r"[^.!?\n]*[.!?]+[\"'”’)\]]*|[^.!?\n]+$", re.MULTILINE)
_DANGLING = re.compile(
    r"(?:[,;:–-]|\b(?:and|but|or|so|then|because|while|as|when|that|which|who|with|to|the|a|an))\s*$",
    re.IGNORECASE,
)
_CLOSED = re.compile(r"[.!?][\"'”’)\]]*\s*$")
_LABEL_WORDS = re.compile(r"\b(?:missing|answer|blank|fill\w*|infill|word|phrase)\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.findall(text) if re.search(r"\w", s)]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def is_dangling(kept: str, original: str) -> bool:
    """The kept text ends in a conjunction, an article or a comma, or stops where ``original``
    goes on with the same sentence: context was cut out of a sentence."""
    if not kept or _CLOSED.search(kept):
        return False
    if _DANGLING.search(kept):
        return True
    tail = kept[-40:]
    end = original.find(tail)
    return end >= 0 and bool(re.match(r"[^.!?\n]*\w", original[end + len(tail) :]))


#: A fragment led by one of these hangs on the story's sentence by design ("Because he was
#: nervous,", "When I saw him,"): the annotators kept such fragments as they were.
_SUBORDINATE = re.compile(
    r"^\W*(?:when|whenever|because|although|though|since|as|if|while|that|after|before|unless|until|once)\b",
    re.IGNORECASE,
)


def complete_cut_sentence(kept: str, original: str) -> str | None:
    """The kept text with its last sentence whole again, when context was cut out of it after
    at least one whole new sentence ("... before school. Her hard work paid off, and" ->
    "... Her hard work paid off, and she won a medal at the state finals."); None otherwise.

    A lone fragment, a subordinate lead-in and a short connective ("As a result,") stay as
    they are: that is how the annotators labelled them.
    """
    parts = sentences(kept)
    if len(parts) < 2:
        return None
    fragment = parts[-1]
    if _SUBORDINATE.match(fragment) or (len(_words(fragment)) <= 3 and fragment.rstrip().endswith(",")):
        return None
    start = original.find(fragment.rstrip(" ,;:"))
    if start < 0:
        return None
    closing = SENTENCE_END.search(original, start)
    if closing is None:  # the response itself stops mid-sentence (cut at its token limit)
        return None
    return kept[: kept.rfind(fragment)] + original[start : closing.end()].strip()


class _BoldSentences:
    """For a bold span of ``plain`` (the text with its bold marks removed): whether its sentence
    holds a label word, and how many words of that sentence outside the span are not the story's.

    Sentences and words are listed once and looked up by position (bisection, prefix counts):
    splitting and counting the span's sentence again for each span was quadratic in an answer
    of many short bold spans on one line. A word the span cuts counts as its piece outside.
    """

    def __init__(self, plain: str, story: set[str]):
        self._plain, self._story = plain, story
        sentences = [m for m in _SENTENCES.finditer(plain) if re.search(r"\w", m.group())]
        self._sentences = [(m.start(), m.end(), bool(_LABEL_WORDS.search(m.group()))) for m in sentences]
        self._sentence_starts = [start for start, _, _ in self._sentences]
        self._words = [m.span() for m in re.finditer(r"\w+", plain)]
        self._word_starts = [start for start, _ in self._words]
        self._new_before = [0]
        for start, end in self._words:
            self._new_before.append(self._new_before[-1] + self._is_new(start, end))

    def _is_new(self, start: int, end: int) -> bool:
        return self._plain[start:end].lower() not in self._story

    def _new_words(self, low: int, high: int) -> int:
        """New words of ``plain[low:high]``, a word cut at either end counted as its piece."""
        first = bisect_left(self._word_starts, low)
        last = bisect_left(self._word_starts, high)
        count = self._new_before[last] - self._new_before[first]
        if last > first and self._words[last - 1][1] > high:
            count += self._is_new(self._words[last - 1][0], high) - self._is_new(*self._words[last - 1])
        if first > 0 and self._words[first - 1][1] > low:
            count += self._is_new(low, min(self._words[first - 1][1], high))
        return count

    def around(self, start: int, end: int) -> tuple[bool, int]:
        """(label word in the sentence, new words outside ``plain[start:end]``); (False, 0)
        when no one sentence holds the span."""
        index = bisect_right(self._sentence_starts, start) - 1
        if index < 0 or end > self._sentences[index][1]:
            return False, 0
        low, high, label = self._sentences[index]
        return label, self._new_words(low, start) + self._new_words(end, high)


def bold_is_emphasis(text: str, problem: str) -> bool:
    """Bold of a few words inside a longer new sentence marks emphasis ("Despite the rain,
    **I** kept running."), not the inserted text. Bold over a whole sentence, or over the new
    words of a restated sentence ("**She nodded**, and they walked to the pier"), marks it."""
    spans = list(BOLD.finditer(text))
    if not spans:
        return False
    plain = BOLD.sub(lambda m: m.group(1) or m.group(2), text)
    if "(" in plain:  # an explanation: the bold marks the answer
        return False
    sentences_of = _BoldSentences(plain, set(_words(problem)))
    for index, span in enumerate(spans):
        raw = span.group(1) or span.group(2)
        inner = raw.strip()
        if len(inner.split()) > 3 or _CLOSED.search(inner):
            return False
        # In ``plain`` each earlier bold span is four marker characters shorter.
        start = span.start() - 4 * index + len(raw) - len(raw.lstrip())
        label, new_outside = sentences_of.around(start, start + len(inner))
        if label:  # a label: the bold marks the answer
            return False
        if new_outside < 3:  # the rest of the sentence is the story's
            return False
    return True
