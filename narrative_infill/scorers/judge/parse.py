"""Five integer scores out of whatever a grader replies, in time linear in the reply.

Tolerant of code fences, prose around the JSON, key spellings ("Context_Faithfulness",
"Context Faithfulness", "faithfulness"), numeric strings and {"score": n} objects; strict
about the result: exactly one complete verdict (every dimension present, once, an integer from
1 to 5), and not one copied from the candidate. Anything else is a ``JudgementError`` naming
what was wrong, so the scorer retries the grader: a reply holding two verdicts (one quoted from
the candidate, one its own) is never read as "the first one found".

Every pattern here is linear in its input (no unbounded quantifier can re-scan a line from
each of its positions), and a reply longer than ``MAX_REPLY_CHARS`` is refused before any is
read: ``tests/core/test_judge_parse_linear.py`` times the shapes that were quadratic.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ...errors import NarrativeInfillError
from ...paper_protocol import DIMENSIONS

#: The longest reply the parser reads (characters). A verdict with a short reason per dimension
#: is under 3,000; a longer reply is a failed attempt (retried), never read in part.
MAX_REPLY_CHARS = 32_768

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
# "Fluency: 4" on a line of its own (but not the template's "Fluency: 1-5"). Matched at each line
# start only, with every run bounded, so one line costs a bounded number of steps per character.
_KEY_LINE = re.compile(
    r"[ \t\"'*#\-]{0,24}([A-Za-z][A-Za-z _\-]{1,40}?)[\"'* \t]{0,8}[:=][ \t]{0,8}[\"'*]{0,3}"
    r"(\d{1,3}(?:\.\d+)?)(?!\d)(?![ \t]{0,8}[-–][ \t]{0,8}\d)"
)
# A {...} holding at most one level of {...} inside (a verdict, or one with {"score": n} values),
# written as an unrolled loop: every [^{}]* run ends at a brace, so no run can be split two ways
# and an attempt from one "{" ends at the next brace but one: linear over the reply.
_OBJECT = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
_SEPARATOR = re.compile(r"[:=]")


class JudgementError(NarrativeInfillError, ValueError):
    """The grader's reply holds no complete, valid, single verdict of its own."""


@dataclass(frozen=True)
class Judgement:
    scores: dict[str, int]
    #: character offset of each dimension's score in the reply (for probability weighting)
    offsets: dict[str, int]


@dataclass(frozen=True)
class _Verdict:
    """The dimensions one part of the reply gives (value, offset), and that part's text."""

    found: dict[str, tuple[object, int]]
    pieces: tuple[str, ...]


def _squashed_name(key: str) -> str:
    return re.sub(r"[^a-z]", "", key[:80].lower())


def _canonical(key: str, dimensions: tuple[str, ...] = DIMENSIONS) -> str | None:
    """The dimension ``key`` names: one of the paper's by its aliases, or one of ``dimensions`` (a
    rubric variant's own) by its name, case, spaces and underscores aside."""
    squashed = _squashed_name(key)
    named = _ALIASES.get(squashed) or next((d for d in dimensions if _squashed_name(d) == squashed), None)
    return named if named in dimensions else None


class _RepeatedKey(JudgementError):
    """Raised from inside json's decoder (a ValueError), told apart from bad JSON by its type."""


def _unique_scores(dimensions: tuple[str, ...]):
    """json's object hook: a JSON object's pairs as a dict, refusing a dimension of ``dimensions``
    (or "score") given twice: json keeps the last value while ``_offset_of`` finds the first, so
    one reply would have two readings."""

    def unique(pairs: list[tuple[str, object]]) -> dict:
        seen = set()
        for key, _ in pairs:
            name = "score" if key == "score" else _canonical(key, dimensions)
            if name and name in seen:
                raise _RepeatedKey(f"one object gives {name} twice")
            seen.add(name)
        return dict(pairs)

    return unique


def _decoded(text: str, dimensions: tuple[str, ...]) -> dict | None:
    """``text`` as a JSON object, or None (bad JSON, an integer too long to convert, too deep)."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_scores(dimensions))
    except _RepeatedKey:
        raise
    except (ValueError, RecursionError):  # ValueError covers JSONDecodeError and the 4,300-digit limit
        return None
    return value if isinstance(value, dict) else None


def _json_objects(text: str, dimensions: tuple[str, ...]):
    """(object, start, end) of the whole reply when it is one JSON object (arbitrary nesting),
    else of each {...} in it that is a JSON object, in order."""
    whole = text.strip()
    if whole.startswith("{") and (value := _decoded(whole, dimensions)) is not None:
        start = text.index("{")
        yield value, start, start + len(whole)
        return
    for match in _OBJECT.finditer(text):
        if (value := _decoded(match.group(), dimensions)) is not None:
            yield value, match.start(), match.end()


def _offset_of(text: str, start: int, end: int, key: str) -> int:
    """Where the digit of ``key``'s value is (bounded gaps: a constant cost per occurrence)."""
    pattern = re.escape(json.dumps(key)) + r"\s{0,20}:\s{0,20}(?:\{[^{}0-9]{0,40})?\"?(\d)"
    match = re.compile(pattern).search(text, start, end)
    return match.start(1) if match else -1


def _object_verdicts(text: str, dimensions: tuple[str, ...]) -> list[_Verdict]:
    verdicts = []
    for obj, start, end in _json_objects(text, dimensions):
        found: dict[str, tuple[object, int]] = {}
        for key, value in obj.items():
            name = _canonical(str(key), dimensions)
            if name in found:
                raise JudgementError(f"one object gives {name} twice")
            if name:
                found[name] = (value, _offset_of(text, start, end, str(key)))
        if found:
            verdicts.append(_Verdict(found, (text[start:end],)))
    return verdicts


def _line_verdict(text: str, dimensions: tuple[str, ...]) -> _Verdict | None:
    """The "Fluency: 4" lines, for graders that write no JSON; a dimension given twice is an error."""
    found: dict[str, tuple[object, int]] = {}
    pieces = []
    position = 0
    while separator := _SEPARATOR.search(text, position):  # only lines holding a ":" or "=" can match
        start = text.rfind("\n", position, separator.start()) + 1 or position
        end = text.find("\n", separator.start())
        end = len(text) if end == -1 else end
        match = _KEY_LINE.match(text, start, end)
        if match and (name := _canonical(match.group(1), dimensions)):
            if name in found:
                raise JudgementError(f"{name} is given more than once: one verdict is expected")
            found[name] = (match.group(2), match.start(2))
            pieces.append(match.group())
        position = end + 1
    return _Verdict(found, tuple(pieces)) if found else None


def _as_score(value: object) -> int | None:
    if isinstance(value, dict) and "score" in value:
        value = value["score"]
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s{0,8}\d{1,3}(?:\.0{1,8})?\s{0,8}", value):
        return int(float(value))
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _squeezed(text: str) -> str:
    """``text`` without whitespace: a verdict re-indented (or put on one line) is the same verdict."""
    return "".join(text.split())


def _quoted(verdict: _Verdict, text: str, candidate: str) -> bool:
    """Whether the verdict is copied from the candidate: every piece of it is in the candidate's
    text, and the reply holds more than the verdict (a reply that is only a verdict is the
    grader's own, whatever the candidate wrote)."""
    if not candidate or _squeezed(text) == _squeezed(" ".join(verdict.pieces)):
        return False
    source = _squeezed(candidate)
    return all(_squeezed(piece) in source for piece in verdict.pieces)


def _chosen(text: str, candidate: str, dimensions: tuple[str, ...]) -> _Verdict:
    """The reply's one complete verdict, or a JudgementError saying why there is none."""
    verdicts = _object_verdicts(text, dimensions)
    if not verdicts:
        line = _line_verdict(text, dimensions)
        verdicts = [line] if line else []
    if not verdicts:
        raise JudgementError("no scores found in the grader's reply")
    complete = [v for v in verdicts if len(v.found) == len(dimensions)]
    if len(complete) > 1:
        raise JudgementError(f"the reply holds {len(complete)} complete verdicts: give exactly one")
    if not complete:
        best = max(verdicts, key=lambda v: len(v.found))
        missing = ", ".join(d for d in dimensions if d not in best.found)
        raise JudgementError(f"missing dimension(s): {missing}")
    if _quoted(complete[0], text, candidate):
        raise JudgementError("the only verdict in the reply is quoted from the candidate: give your own")
    return complete[0]


def parse_judgement(text: str, candidate: str = "", dimensions: tuple[str, ...] = DIMENSIONS) -> Judgement:
    """The scores of ``dimensions`` (the judge variant's; the paper's five by default) in ``text``
    (``candidate``: the graded answer, so a verdict copied from it is recognised); raises
    ``JudgementError`` saying what is missing or wrong."""
    if len(text) > MAX_REPLY_CHARS:
        raise JudgementError(f"the reply is {len(text):,} characters, over the {MAX_REPLY_CHARS:,} read")
    verdict = _chosen(text, candidate, dimensions)
    scores, offsets = {}, {}
    for dimension in dimensions:
        value, offset = verdict.found[dimension]
        score = _as_score(value)
        if score is None or not 1 <= score <= 5:
            raise JudgementError(f"{dimension} must be an integer from 1 to 5, got {value!r:.40}")
        scores[dimension], offsets[dimension] = score, offset
    return Judgement(scores, offsets)
