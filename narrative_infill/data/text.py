"""Sentence and token counting shared by instance metadata and (later) instance building."""

from __future__ import annotations

import re
import unicodedata

EOS_DOMAINS = frozenset({"rocstories", "sind"})
"""Domains whose published sources separate sentences with an explicit ``<eos>`` marker."""

#: The published sources' sentence separator. Split on as a plain string and the pieces stripped:
#: the pattern ``\s*<eos>\s*`` rescanned a run of N spaces from each of its N positions.
_EOS = "<eos>"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def split_sentences(text: str, domain: str) -> list[str]:
    """Split a source narrative the way the published benchmark did.

    ROCStories and SIND sources carry ``<eos>`` separators; prose domains go through
    NLTK's Punkt (``nltk.sent_tokenize``), as the authors' generator did.
    """
    if domain in EOS_DOMAINS or "<eos>" in text:
        return [s for s in (part.strip() for part in text.split(_EOS)) if s]
    from nltk import sent_tokenize

    from ..nltk_data import ensure_punkt

    ensure_punkt()
    return [s for s in (part.strip() for part in sent_tokenize(text)) if s]


def remove_eos(text: str) -> str:
    """The narrative with ``<eos>`` separators turned into plain spaces."""
    parts = text.split(_EOS)
    if len(parts) == 1:
        return text
    inner = [part.strip() for part in parts[1:-1]]
    return " ".join([parts[0].rstrip(), *inner, parts[-1].lstrip()])


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


def valid_unicode(text: str) -> tuple[str, int]:
    """``text`` as valid Unicode, and how many characters were replaced to make it so.

    A Python string can hold lone surrogates (a model's or a file's ``"\\ud800"`` through JSON),
    which no UTF-8 encoder, tokenizer or log writer accepts. Surrogate pairs become the character
    they encode; each lone surrogate becomes U+FFFD, the replacement character. Called once where
    text enters (a model's response where the scorers read it, a data file's fields).
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return fixed, fixed.count("\ufffd") - text.count("\ufffd")
    return text, 0


#: Unicode categories of characters that show nothing on their own: control (Cc: NUL, ...),
#: format (Cf: zero-width space, soft hyphen, BOM, ...), private use (Co), surrogate (Cs),
#: unassigned (Cn), separators (Z*: spaces, line and paragraph separators) and marks (Mn, Me:
#: combining accents, variation selectors, the grapheme joiner), which decorate a base character
#: and are no answer without one.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"})
#: Characters of visible categories that are drawn blank: the Hangul fillers (Lo) and the
#: blank Braille pattern (So).
BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def is_invisible(text: str) -> bool:
    """Whether ``text`` shows nothing: empty, or only characters of ``INVISIBLE_CATEGORIES`` and
    ``BLANK_CHARACTERS``."""
    return all(
        char in BLANK_CHARACTERS or unicodedata.category(char) in INVISIBLE_CATEGORIES for char in text
    )
