"""Answer extraction: from a raw model response to the infill text that gets scored.

``rules`` holds the rule pipeline (``extract_answer``), ``context`` the alignment of a
response with the problem's context that removes restated text, ``published`` the published
code's first-tag-or-whole-response rule (``extraction=published``).
"""

from .published import DEFAULT_EXTRACTION, EXTRACTIONS, check_extraction, extract_published, extract_with
from .rules import MAX_TEXT_CHARS, Extraction, ExtractionStatus, extract_answer

__all__ = [
    "DEFAULT_EXTRACTION",
    "EXTRACTIONS",
    "MAX_TEXT_CHARS",
    "Extraction",
    "ExtractionStatus",
    "check_extraction",
    "extract_answer",
    "extract_published",
    "extract_with",
]
