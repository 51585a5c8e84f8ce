"""Sentence and token counting shared by instance metadata and (later) instance building."""

from __future__ import annotations

import re

EOS_DOMAINS = frozenset({"rocstories", "sind"})
"""Domains whose published sources separate sentences with an explicit ``<eos>`` marker."""

_EOS = re.compile(r"\s*<eos>\s*")
_TOKEN = re.compile(r"\w+|[^\w\s]")


def split_sentences(text: str, domain: str) -> list[str]:
    """Split a source narrative the way the published benchmark did.

    ROCStories and SIND sources carry ``<eos>`` separators; prose domains go through
    NLTK's Punkt (``nltk.sent_tokenize``), as the authors' generator did.
    """
    if domain in EOS_DOMAINS or "<eos>" in text:
        return [s for s in (part.strip() for part in _EOS.split(text)) if s]
    from nltk import sent_tokenize

    from ..nltk_data import ensure_punkt

    ensure_punkt()
    return [s for s in (part.strip() for part in sent_tokenize(text)) if s]


def remove_eos(text: str) -> str:
    """The narrative with ``<eos>`` separators turned into plain spaces."""
    return _EOS.sub(" ", text)


def count_tokens(text: str) -> int:
    """Tokenizer-independent length: words plus punctuation marks.

    The paper caps output at "twice the length of the masked span" without naming a
    tokenizer, and a task cannot know the tokenizer of every model Inspect can reach, so
    lengths are counted as runs of word characters and single punctuation marks
    ("Tom's car." -> Tom ' s car . = 5). For English prose this is close to, and
    usually at or above, a subword tokenizer's count for the same span.
    """
    return len(_TOKEN.findall(text))


def normalise_space(text: str) -> str:
    """Collapse every run of whitespace to one space (for comparisons only)."""
    return " ".join(text.split())
