"""Answer extraction: from a raw model response to the infill text that gets scored.

``rules`` holds the rule pipeline (``extract_answer``), ``context`` the alignment of a
response with the problem's context that removes restated text.
"""

from .rules import Extraction, ExtractionStatus, extract_answer

__all__ = ["Extraction", "ExtractionStatus", "extract_answer"]
