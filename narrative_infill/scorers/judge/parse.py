"""Five integer scores out of whatever a grader replies.

Tolerant of code fences, prose around the JSON, key spellings ("Context_Faithfulness",
"Context Faithfulness", "faithfulness"), numeric strings and {"score": n} objects; strict
about the result: every dimension present, an integer from 1 to 5. Anything else is a
``JudgementError`` naming what was wrong, so the scorer can retry the grader.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ...definitions import DIMENSIONS, NarrativeInfillError

_ALIASES = {
    "fluency": "fluency",
    "flu": "fluency",
    "contextfaithfulness": "context_faithfulness",
    "faithfulness": "context_faithfulness",
    "faith": "context_faithfulness",
    "bidirectionalcoherence": "bidirectional_coherence",
    "coherence": "bidirectional_coherence",
    "bico": "bidirectional_coherence",
    "narrativeconsistency": "narrative_consistency",
    "consistency": "narrative_consistency",
    "narco": "narrative_consistency",
    "informativeness": "informativeness",
    "info": "informativeness",
    "informative": "informativeness",
}
# "Fluency: 4" (but not the template's "Fluency: 1-5").
_KEY_LINE = re.compile(
    r"^[\s\"'*#\-]*([A-Za-z][A-Za-z _\-]{1,40}?)[\"'*\s]*[:=]\s*[\"'*]*(\d+(?:\.\d+)?)(?!\s*[-–]\s*\d)",
    re.MULTILINE,
)


class JudgementError(NarrativeInfillError, ValueError):
    """The grader's reply holds no complete, valid set of five scores."""


@dataclass(frozen=True)
class Judgement:
    scores: dict[str, int]
    #: character offset of each dimension's score in the reply (for probability weighting)
    offsets: dict[str, int]


def _canonical(key: str) -> str | None:
    return _ALIASES.get(re.sub(r"[^a-z]", "", key.lower()))


def _json_objects(text: str):
    """Every top-level {...} that parses as JSON, in order (a linear scan, no regex)."""
    decoder = json.JSONDecoder()
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            yield value, position, end
        position = text.find("{", end)


def _as_score(value) -> int | None:
    if isinstance(value, dict) and "score" in value:
        value = value["score"]
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and re.fullmatch(r"\s*\d+(?:\.0+)?\s*", value):
        value = float(value)
    if isinstance(value, (int, float)) and float(value).is_integer():
        return int(value)
    return None


def _offset_of(text: str, start: int, end: int, key: str) -> int:
    match = re.search(re.escape(json.dumps(key)[1:-1]) + r"[\"']?\s*:\s*\{?[^0-9]*(\d)", text[start:end])
    return start + match.start(1) if match else -1


def parse_judgement(text: str) -> Judgement:
    """The five scores in ``text``; raises ``JudgementError`` saying what is missing or wrong."""
    candidates = []
    for obj, start, end in _json_objects(text):
        found = {}
        for key, value in obj.items():
            name = _canonical(str(key))
            if name and name not in found:
                found[name] = (value, _offset_of(text, start, end, str(key)))
        if found:
            candidates.append(found)
    if not candidates:  # "Fluency: 4" lines, as some graders write without JSON
        found = {}
        for match in _KEY_LINE.finditer(text):
            name = _canonical(match.group(1))
            if name and name not in found:
                found[name] = (match.group(2), match.start(2))
        if found:
            candidates.append(found)
    if not candidates:
        raise JudgementError("no scores found in the grader's reply")
    best = max(candidates, key=len)
    missing = [d for d in DIMENSIONS if d not in best]
    if missing:
        raise JudgementError(f"missing dimension(s): {', '.join(missing)}")
    scores, offsets = {}, {}
    for dimension in DIMENSIONS:
        value, offset = best[dimension]
        score = _as_score(value)
        if score is None or not 1 <= score <= 5:
            raise JudgementError(f"{dimension} must be an integer from 1 to 5, got {value!r}")
        scores[dimension], offsets[dimension] = score, offset
    return Judgement(scores, offsets)
