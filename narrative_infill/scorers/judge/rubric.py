"""The judge variants, one registry: each variant's prompt, the dimensions it asks for and the reply
shape it asks in, held together so nothing walks from one module to another to find them.

Both packaged variants ask for the paper's five (§3.4; the ``authors`` prompt is the published
one, verbatim); a new rubric is a new entry here, and the scorer, the report, the submission, the
annotation study and the export read a log's dimensions from the variant its judge scores name
(``judge_variant``), never from a global list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from inspect_ai.util import JSONSchema

from ...errors import OptionError
from ...number_rules import is_missing
from ...paper_protocol import DIMENSIONS, PAPER_JUDGE_VARIANT
from .prompt import JudgePrompt, authors_prompt, paper_prompt
from .schema import reply_schema


@dataclass(frozen=True)
class JudgeVariant:
    """One judge prompt variant."""

    name: str
    #: the dimensions it asks for, in its order (score keys, reply keys and names derive from them)
    dimensions: tuple[str, ...]
    #: builds its prompt from the packaged YAML files (cached there), read on first use
    build_prompt: Callable[[], JudgePrompt]

    @property
    def prompt(self) -> JudgePrompt:
        return self.build_prompt()

    @property
    def reply_schema(self) -> JSONSchema:
        return reply_schema(self.dimensions)


#: Every judge prompt variant, by the name ``-T judge_variant`` / ``-S variant`` takes.
JUDGE_VARIANTS: dict[str, JudgeVariant] = {
    PAPER_JUDGE_VARIANT: JudgeVariant(PAPER_JUDGE_VARIANT, DIMENSIONS, paper_prompt),
    "authors": JudgeVariant("authors", DIMENSIONS, authors_prompt),
}


def judge_variant(name: str | None) -> JudgeVariant:
    """The variant called ``name``; the paper's for a log whose judge scores name none (written
    before the variant was recorded)."""
    key = PAPER_JUDGE_VARIANT if name is None or is_missing(name) else str(name)
    if key not in JUDGE_VARIANTS:
        raise OptionError(f"unknown judge prompt variant {key!r}; known: {', '.join(JUDGE_VARIANTS)}")
    return JUDGE_VARIANTS[key]


def dimensions_of(variant: str | None) -> tuple[str, ...]:
    """The dimensions a judge prompt variant asks for (the paper variant's when it is unrecorded)."""
    return judge_variant(variant).dimensions


def dimensions_of_variants(variants: Iterable[str | None]) -> tuple[str, ...]:
    """The dimensions of every variant named (each once, in the variants' order); the paper
    variant's when none is named."""
    named = list(variants) or [None]
    return tuple(dict.fromkeys(d for variant in named for d in dimensions_of(variant)))


def known_dimensions() -> frozenset[str]:
    """Every dimension some variant asks for: the score keys that are the judge's."""
    return frozenset(d for variant in JUDGE_VARIANTS.values() for d in variant.dimensions)


def frame_dimensions(frame) -> tuple[str, ...]:
    """The dimensions of a report frame's judge scores, from its ``judge_variant`` column (absent,
    or empty where no sample was judged: the paper variant's)."""
    if "judge_variant" not in frame:
        return dimensions_of_variants([])
    return dimensions_of_variants(str(v) for v in frame["judge_variant"].dropna().unique())
