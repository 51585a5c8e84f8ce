"""The published code's extraction rule (``extraction=published``), kept to trace differences.

The authors' released pipeline (REFERENCE §4.1, ``extractAnswerText``) does not run the rules the
paper describes: it takes the first ``<ANSWER>…</ANSWER>`` span (case-insensitive, spanning
newlines, non-greedy, the span stripped), else the whole response stripped. No ``</think>``
handling, no misspelled or unbalanced tags, no label or restatement rules; an empty answer only
comes from an empty response. The metrics code strips the text once more (``safe_text``).
"""

from __future__ import annotations

import re

from ..errors import OptionError
from .rules import Extraction, ExtractionStatus, extract_answer

#: The published regular expression is ``<ANSWER>\s*(.*?)\s*</ANSWER>`` (``re.DOTALL |
#: re.IGNORECASE``): the first opening tag that some closing tag follows, up to the first closing
#: tag after it, the span stripped. Run as written it is cubic in a run of spaces after an
#: unclosed tag (its two ``\s*`` around the lazy group: 2,000 spaces took 21 s, 4,000 took
#: 159 s), so the two tags are found with their own patterns and the span between them is stripped:
#: the same match (the span is stripped again anyway), in linear time.
_OPEN = re.compile(r"<ANSWER>", re.IGNORECASE)
_CLOSE = re.compile(r"</ANSWER>", re.IGNORECASE)


def _first_answer_span(text: str) -> str | None:
    """What the published regex's group captures, stripped; None where it does not match."""
    opening = _OPEN.search(text)
    closing = _CLOSE.search(text, opening.end()) if opening else None
    return text[opening.end() : closing.start()].strip() if opening and closing else None


#: ``ours`` (the paper's rule pipeline, ``rules.extract_answer``; the default) or ``published``.
EXTRACTIONS = ("ours", "published")
DEFAULT_EXTRACTION = "ours"


def extract_published(response: str | None) -> Extraction:
    """The answer as the published code extracted it: status ``tagged`` (the code's "success")
    or ``whole_response`` (its "fallback_full_response")."""
    text = response or ""
    span = _first_answer_span(text)
    if span is not None:
        return Extraction(span, ExtractionStatus.TAGGED, ("published_first_answer_span",))
    return Extraction(text.strip(), ExtractionStatus.WHOLE_RESPONSE, ("published_fallback_full_response",))


def check_extraction(extraction: str) -> str:
    if extraction not in EXTRACTIONS:
        raise OptionError(f"extraction must be one of {EXTRACTIONS}, got {extraction!r}")
    return extraction


def extract_with(extraction: str, response: str, problem: str) -> Extraction:
    """The answer of ``response`` under the named extraction rule."""
    if check_extraction(extraction) == "published":
        return extract_published(response)
    return extract_answer(response, problem)
