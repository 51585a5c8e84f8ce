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
    closing = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s|$)").search(original, start)
    if closing is None:  # the response itself stops mid-sentence (cut at its token limit)
        return None
    return kept[: kept.rfind(fragment)] + original[start : closing.end()].strip()


def bold_is_emphasis(text: str, problem: str) -> bool:
    """Bold of a few words inside a longer new sentence marks emphasis ("Despite the rain,
    **I** kept running."), not the inserted text. Bold over a whole sentence, or over the new
    words of a restated sentence ("**She nodded**, and they walked to the pier"), marks it."""
    spans = list(BOLD.finditer(text))
    if not spans:
        return False
    plain = BOLD.sub(lambda m: m.group(1) or m.group(2), text)
    for span in spans:
        inner = (span.group(1) or span.group(2)).strip()
        if len(inner.split()) > 3 or _CLOSED.search(inner):
            return False
        holder = next((s for s in sentences(plain) if inner in s), "")
        if (
            _LABEL_WORDS.search(holder) or "(" in plain
        ):  # a label or an explanation: the bold marks the answer
            return False
        story = set(_words(problem))
        outside = holder.replace(inner, " ", 1)
        if sum(word not in story for word in _words(outside)) < 3:  # the rest of the sentence is the story's
            return False
    return True
