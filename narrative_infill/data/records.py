"""Benchmark records: the published schema, validation, and per-instance metadata.

A record is one row of the published CSV schema
``dataset,ref_id,source_text,problem,gold_answer,unit,n,unit_idx``. Structural faults make
a record unusable and raise :class:`InvalidRecordError` naming the file, row, instance and
field. Content irregularities (the published data has a few) are recorded on the instance and
counted by the loader, never fatal and never silently fixed.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from ..errors import NarrativeInfillError
from ..number_rules import is_missing
from .text import EOS_DOMAINS, count_tokens, normalise_space, remove_eos, split_sentences

SCHEMA = ("dataset", "ref_id", "source_text", "problem", "gold_answer", "unit", "n", "unit_idx")
BLANK = "______"
_BLANK_RUN = re.compile(r"_{3,}")
#: How many sentences an instance masks (the paper's n).
MASKED_SENTENCES = (1, 2, 3)
#: The largest integer a field may hold: JSON readers (``inspect view``'s among them) keep integers
#: exact only up to 2**53 - 1, and a 401-digit ``unit_idx`` once ended an eval with an OverflowError.
MAX_INTEGER = 2**53 - 1

DOMAIN_ALIASES = {
    "wikipedia": "wikipedia",
    "wikimedia/wikipedia": "wikipedia",
    "wiki": "wikipedia",
    "roc": "rocstories",
    "rocstories": "rocstories",
    "rocstory": "rocstories",
    "cnn_dailymail": "cnn_dailymail",
    "abisee/cnn_dailymail": "cnn_dailymail",
    "cnn": "cnn_dailymail",
    "cnn/dailymail": "cnn_dailymail",
    "sind": "sind",
    "vist": "sind",
}

Position = Literal["opening", "middle", "closing"]
POSITIONS: tuple[Position, ...] = ("opening", "middle", "closing")


class InvalidRecordError(NarrativeInfillError, ValueError):
    """A benchmark record that cannot be used, with where it came from."""

    def __init__(self, origin: str, row: int, record: Mapping[str, Any], fld: str, problem: str):
        self.origin, self.row, self.field = origin, row, fld
        ident = f"dataset={record.get('dataset')!r}, ref_id={record.get('ref_id')!r}"
        super().__init__(f"{origin}, row {row} ({ident}): field '{fld}': {problem}")


def canonical_domain(name: str) -> str:
    """Map published domain strings (``roc``, ``abisee/cnn_dailymail``...) to canonical names.

    Unknown names are kept (lower-cased) so that user-built domains load too.
    """
    key = name.strip().lower()
    return DOMAIN_ALIASES.get(key, key)


# The authors' fallback sentence splitter in ``count_by_position.py``: a run of . ! ? followed by
# whitespace or the end. Used on every machine (not spaCy, their first choice) so that a
# sample's position never depends on which parser happens to be installed.
_AUTHORS_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")


def problem_sentence_count(problem: str) -> int:
    """Sentences of the problem text as the authors' position rule counted them: the blank
    is no sentence of its own but merges into the one it ends up in."""
    return sum(1 for piece in _AUTHORS_SENTENCE_END.split(problem) if piece.strip())


def blank_position(unit_idx: int, problem: str) -> Position:
    """Opening / middle / closing, by the authors' tercile rule (``count_by_position.py``).

    ``T`` is the sentence count of the *problem* text (``problem_sentence_count``): for a
    blank that is not last it is the narrative's sentences minus ``n``, since the blank
    joins the next sentence. The 0-based ``unit_idx`` is opening when ``<= ceil(T/3)``,
    middle when ``<= ceil(2T/3)``, else closing. This is the rule behind the paper's
    position counts (Table 7), and it leans towards "opening". The authors dropped rows
    with ``unit_idx < 1`` or ``> T`` from this analysis; here they fall on the side they are
    on (opening, closing), as the builder's ``all-positions`` policy makes them.
    """
    total = max(problem_sentence_count(problem), 1)
    if unit_idx <= math.ceil(total / 3):
        return "opening"
    if unit_idx <= math.ceil(2 * total / 3):
        return "middle"
    return "closing"


def blank_index(problem: str) -> int:
    """The 0-based index of a problem's first masked sentence (an instance's ``unit_idx``): the
    sentences before its blank, counted as ``problem_sentence_count`` counts them. For rows that
    do not say it (the authors' shared outputs)."""
    return problem_sentence_count(_BLANK_RUN.split(problem, maxsplit=1)[0])


def breakdown_fields(dataset: str, unit_idx: int, problem: str, narrative: str) -> dict[str, Any]:
    """The domain, blank position and narrative length (in sentences) an instance is grouped by
    in the paper's breakdowns (Tables 7 and 8): one rule for the loader's instances and for
    imported generations. ``narrative`` is the source text, or, where a row has none, the problem
    with its gold put back; that text carries no ``<eos>`` separators, so it is split as prose."""
    domain = canonical_domain(dataset)
    splitting = domain if "<eos>" in narrative or domain not in EOS_DOMAINS else "prose"
    return {
        "domain": domain,
        "position": blank_position(unit_idx, problem),
        "narrative_sentences": len(split_sentences(narrative, splitting)),
    }


@dataclass(frozen=True)
class Instance:
    """One validated infilling instance with the metadata the analyses group by."""

    domain: str
    dataset: str
    ref_id: str
    source_text: str
    problem: str
    gold_answer: str
    unit: str
    n: int
    unit_idx: int
    narrative_sentences: int
    position: Position
    gold_tokens: int
    irregularities: tuple[str, ...] = field(default_factory=tuple)

    @property
    def sample_id(self) -> str:
        """Stable id from (domain, ref_id, n, unit_idx): the same instance keeps its id across files."""
        return f"{self.domain}-{self.ref_id}-n{self.n}-i{self.unit_idx}"

    def metadata(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "dataset": self.dataset,
            "ref_id": self.ref_id,
            "n": self.n,
            "unit_idx": self.unit_idx,
            "unit": self.unit,
            "position": self.position,
            "narrative_sentences": self.narrative_sentences,
            "gold_tokens": self.gold_tokens,
            "source_text": self.source_text,
            "irregularities": list(self.irregularities),
        }


def _text(record: Mapping[str, Any], fld: str, fail: Callable[[str, str], NoReturn]) -> str:
    value = record.get(fld)
    if is_missing(value):
        fail(fld, "missing value")
    if not isinstance(value, str):
        fail(fld, f"expected text, got {type(value).__name__} {value!r}")
    if not value.strip():
        fail(fld, "empty text")
    return value


def _shown(value: Any, limit: int = 40) -> str:
    """A value's repr, shortened when long (a 401-digit number is named, not printed)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def parse_integer(value: Any) -> int:
    """An integer field's value (``3``, ``3.0``, ``"3"``); ValueError saying why otherwise: not a
    whole number, or one beyond ``MAX_INTEGER`` either way."""
    if isinstance(value, bool) or value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"expected an integer, got {_shown(value)}")
    try:
        if isinstance(value, numbers.Integral):
            number = int(value)
        else:
            real = float(value.strip() if isinstance(value, str) else value)
            if math.isinf(real):
                raise OverflowError
            if not real.is_integer():
                raise ValueError(f"expected an integer, got {_shown(value)}")
            number = int(real)
    except OverflowError:
        number = MAX_INTEGER + 1
    except (TypeError, ValueError):
        raise ValueError(f"expected an integer, got {_shown(value)}") from None
    if abs(number) > MAX_INTEGER:
        raise ValueError(f"{_shown(value)} does not fit: an integer field holds at most {MAX_INTEGER:,}")
    return number


def _integer(record: Mapping[str, Any], fld: str, fail: Callable[[str, str], NoReturn]) -> int:
    try:
        return parse_integer(record.get(fld))
    except ValueError as err:
        fail(fld, str(err))


def blank_problem(problem: str) -> str | None:
    """Why a problem text is not one with exactly one blank (a run of 3+ underscores), or None."""
    blanks = _BLANK_RUN.findall(problem)
    if not blanks:
        return f"no blank ({BLANK}) in the text"
    if len(blanks) > 1:
        return f"{len(blanks)} blanks in the text; an instance has exactly one"
    return None


def id_key(identifier: str) -> str:
    """What two ids must not share: ``Café`` in NFC and in NFD, ``abc`` and ``ABC``, or ``abc`` and
    ``a\u200bbc`` render alike (and some tools fold them), so ids are compared after Unicode
    normalisation and case folding, without format characters (zero-width, BOM, soft hyphen)."""
    visible = "".join(char for char in identifier if unicodedata.category(char) != "Cf")
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", visible).casefold())


def parse_record(record: Mapping[str, Any], origin: str, row: int) -> Instance:
    """Validate one published-schema record; raise :class:`InvalidRecordError` on a structural fault."""

    def fail(fld: str, problem: str) -> NoReturn:
        raise InvalidRecordError(origin, row, record, fld, problem)

    missing = [name for name in SCHEMA if name not in record]
    if missing:
        fail(missing[0], f"column missing (the schema is {','.join(SCHEMA)})")

    dataset = _text(record, "dataset", fail).strip()
    ref_value = record.get("ref_id")
    if ref_value is None or str(ref_value).strip() == "":
        fail("ref_id", "missing value")
    ref_id = str(_integer(record, "ref_id", fail)) if _is_number(ref_value) else str(ref_value).strip()
    source_text = _text(record, "source_text", fail)
    problem = _text(record, "problem", fail)
    gold = _text(record, "gold_answer", fail)
    unit = _text(record, "unit", fail).strip()
    n = _integer(record, "n", fail)
    if n not in MASKED_SENTENCES:
        fail("n", f"must be 1, 2 or 3 masked sentences, got {n}")
    unit_idx = _integer(record, "unit_idx", fail)
    if unit_idx < 0:
        fail("unit_idx", f"must be a 0-based sentence index, got {unit_idx}")

    if reason := blank_problem(problem):
        fail("problem", reason)
    blanks = _BLANK_RUN.findall(problem)

    breakdowns = breakdown_fields(dataset, unit_idx, problem, source_text)
    irregularities = []
    if blanks[0] != BLANK:
        irregularities.append("nonstandard_blank")
    filled = problem.replace(blanks[0], gold, 1)
    if normalise_space(filled) != normalise_space(remove_eos(source_text)):
        irregularities.append("gold_does_not_reproduce_source")
    if unit_idx + n > breakdowns["narrative_sentences"]:
        irregularities.append("span_beyond_source_sentences")

    return Instance(
        **breakdowns,
        dataset=dataset,
        ref_id=ref_id,
        source_text=source_text,
        problem=problem,
        gold_answer=gold,
        unit=unit,
        n=n,
        unit_idx=unit_idx,
        gold_tokens=count_tokens(gold),
        irregularities=tuple(irregularities),
    )


def _is_number(value: Any) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    return isinstance(value, str) and re.fullmatch(r"\s*\d+(\.0+)?\s*", value) is not None
