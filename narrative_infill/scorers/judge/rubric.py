"""The judge's dimensions belong to its prompt variant: each variant names the dimensions it asks for.

Both packaged variants ask for the paper's five (§3.4; the ``authors`` prompt is the published
one, verbatim); a new rubric is a new variant with its own entry here, and the report, the
submission, the annotation study and the export read a log's dimensions from the variant its
judge scores name (``judge_variant``), never from a global list.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...definitions import DIMENSIONS, OptionError, is_missing

#: Each judge prompt variant's dimensions, in its order.
VARIANT_DIMENSIONS: dict[str, tuple[str, ...]] = {"paper": DIMENSIONS, "authors": DIMENSIONS}
#: The variant of a log whose judge scores name none (written before the variant was recorded).
DEFAULT_VARIANT = "paper"


def dimensions_of(variant: str | None) -> tuple[str, ...]:
    """The dimensions a judge prompt variant asks for (the default variant's when it is unrecorded)."""
    name = DEFAULT_VARIANT if variant is None or is_missing(variant) else str(variant)
    if name not in VARIANT_DIMENSIONS:
        raise OptionError(f"unknown judge prompt variant {name!r}; known: {', '.join(VARIANT_DIMENSIONS)}")
    return VARIANT_DIMENSIONS[name]


def dimensions_of_variants(variants: Iterable[str | None]) -> tuple[str, ...]:
    """The dimensions of every variant named (each once, in the variants' order); the default
    variant's when none is named."""
    named = list(variants) or [None]
    return tuple(dict.fromkeys(d for variant in named for d in dimensions_of(variant)))


def known_dimensions() -> frozenset[str]:
    """Every dimension some variant asks for: the score keys that are the judge's."""
    return frozenset(d for dimensions in VARIANT_DIMENSIONS.values() for d in dimensions)


def frame_dimensions(frame) -> tuple[str, ...]:
    """The dimensions of a report frame's judge scores, from its ``judge_variant`` column (absent,
    or empty where no sample was judged: the default variant's)."""
    if "judge_variant" not in frame:
        return dimensions_of_variants([])
    return dimensions_of_variants(str(v) for v in frame["judge_variant"].dropna().unique())
