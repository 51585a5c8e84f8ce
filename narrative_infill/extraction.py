"""Answer extraction: from a raw model response to the infill text that gets scored.

First version (the rules the published pipeline lacks are added on top of this interface):
drop a reasoning trace up to its closing ``</think>`` (an unclosed trace holds no answer),
take the first ``<ANSWER>...</ANSWER>`` span, else the stripped response.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum


class ExtractionStatus(str, Enum):
    """The rule that decided the extraction."""

    TAGGED = "tagged"
    AFTER_THINK = "after_think"
    WHOLE_RESPONSE = "whole_response"
    NO_ANSWER = "no_answer"


@dataclass(frozen=True)
class Extraction:
    text: str
    status: ExtractionStatus
    steps: tuple[str, ...] = field(default_factory=tuple)


_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)
_TAGGED = re.compile(r"<ANSWER>\s*(.*?)\s*</ANSWER>", re.IGNORECASE | re.DOTALL)


def extract_answer(response: str, problem: str, n: int | None = None) -> Extraction:
    """Extract the infill from ``response`` (``problem`` and ``n`` serve the richer rules)."""
    steps: list[str] = []
    text = response
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
        steps.append("drop_think_trace")
    elif _THINK_OPEN.search(text):
        return Extraction("", ExtractionStatus.NO_ANSWER, ("unclosed_think_trace",))

    tagged = _TAGGED.search(text)
    if tagged and tagged.group(1).strip():
        steps.append("answer_tags")
        return Extraction(tagged.group(1).strip(), ExtractionStatus.TAGGED, tuple(steps))

    stripped = text.strip()
    if not stripped:
        return Extraction("", ExtractionStatus.NO_ANSWER, tuple(steps + ["empty_response"]))
    steps.append("strip")
    status = ExtractionStatus.AFTER_THINK if closes else ExtractionStatus.WHOLE_RESPONSE
    return Extraction(stripped, status, tuple(steps))
