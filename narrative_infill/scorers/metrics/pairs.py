"""The paper's five automatic metrics and their mean (AtAvg), scored in batches.

``score_pairs`` is the one place a batch of (prediction, reference) pairs is scored; the
Inspect scorer (``narrative_infill.scorers.metrics.scorer``) feeds it the extracted answers of
the samples being scored concurrently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# The answer the metrics read is the judge's too: one home for its limits (scorers.answer).
from ..answer import MAX_ANSWER_SENTENCES, bounded_answer, sentences
from ..signature import MetricsSignature
from .cache import EmbeddingCache, embedding_cache
from .embedding import (
    Backbones,
    BackboneUnavailable,
    bertscore_f1,
    encode_texts,
    resolve_backbones,
    semf1,
)
from .lexical import chrf, lexical_signature, meteor, rouge1_f1

#: AtAvg is the paper's mean of exactly these five metrics (§3.3): its components, named apart from
#: the reported metrics so that reporting another metric never moves the headline number.
ATAVG_COMPONENTS = ("bertscore", "rouge1", "meteor", "chrf", "semf1")
#: The metrics each sample reports (AtAvg's components, and any other metric added beside them).
METRIC_NAMES = ATAVG_COMPONENTS
ATAVG = "atavg"


def atavg(values: dict[str, float]) -> float:
    """AtAvg of one pair's metric values: the mean of ``ATAVG_COMPONENTS``, whatever else is reported."""
    return sum(values[name] for name in ATAVG_COMPONENTS) / len(ATAVG_COMPONENTS)


__all__ = [
    "ATAVG",
    "ATAVG_COMPONENTS",
    "MAX_ANSWER_SENTENCES",
    "METRIC_NAMES",
    "BackboneUnavailable",
    "Backbones",
    "PairScores",
    "atavg",
    "bounded_answer",
    "metrics_signature",
    "resolve_backbones",
    "score_pairs",
    "sentences",
]


@dataclass(frozen=True)
class PairScores:
    values: dict[str, float]
    #: why a metric is 0 by definition rather than measured (empty answer, no sentences)
    reasons: dict[str, str] = field(default_factory=dict)
    #: characters of the answer past the metrics' input limit, not scored (0: scored whole)
    truncated_chars: int = 0


def metrics_signature(backbones: Backbones, extraction: str) -> str:
    """Everything that decides the numbers (``MetricsSignature``): the backbones, the lexical
    metrics and the extraction rule, which decides the scored text; two runs are comparable only
    if these match."""
    return str(MetricsSignature(backbones.backbone_signature(), lexical_signature(), extraction))


def _golds_caches(backbones: Backbones, cache_dir: str | None) -> tuple[EmbeddingCache, EmbeddingCache]:
    """BERTScore's and Sem-F1's caches of the golds' embeddings, kept across calls (every gold is
    scored once per model and setting)."""
    signature = backbones.signature()
    return embedding_cache("bertscore", signature, cache_dir), embedding_cache("semf1", signature, cache_dir)


def score_pairs(
    predictions: list[str],
    references: list[str],
    backbones: Backbones,
    batch_size: int = 64,
    cache_dir: str | None = None,
    use_cache: bool = True,
) -> list[PairScores]:
    """All five metrics and AtAvg for each pair; model-based metrics run once per batch.

    An empty prediction scores 0 on every metric (BERTScore's own convention for an empty
    candidate), with the reason recorded; a non-finite value is an error, never averaged. A
    prediction is scored on its ``bounded_answer``; the characters left out are each result's
    ``truncated_chars``.
    """
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    if not predictions:
        return []  # nothing to score loads nothing (verify --sample 0 re-scores no pair)
    stripped = [p.strip() for p in predictions]
    predictions = [bounded_answer(p) for p in stripped]
    references = [r.strip() for r in references]
    filled = [i for i, p in enumerate(predictions) if p]
    bert_cache, sem_cache = _golds_caches(backbones, cache_dir) if use_cache else (None, None)
    answered = [predictions[i] for i in filled]
    their_golds = [references[i] for i in filled]
    pred_sentences = [sentences(text) for text in answered]
    ref_sentences = [sentences(text) for text in their_golds]
    # A text that is one whole sentence gets its Sem-F1 vector from BERTScore's forward pass when one
    # encoder serves both metrics (see encode_texts): one pass per text instead of two.
    whole_sentences = {
        text
        for pair in (zip(answered, pred_sentences), zip(their_golds, ref_sentences))
        for text, split in pair
        if split == [text]
    }
    stats, pooled = encode_texts(answered, their_golds, backbones, whole_sentences, batch_size, bert_cache)
    bert = dict(zip(filled, bertscore_f1(answered, their_golds, stats)))
    semantic = dict(
        zip(filled, semf1(pred_sentences, ref_sentences, backbones, batch_size, sem_cache, pooled))
    )
    no_sentences = {i for i, s in zip(filled, pred_sentences) if not s}

    results = []
    for i, (prediction, reference) in enumerate(zip(predictions, references)):
        if not prediction:
            values = dict.fromkeys(METRIC_NAMES, 0.0)
            reasons = dict.fromkeys(METRIC_NAMES, "empty answer")
        else:
            values = {
                "bertscore": bert[i],
                "rouge1": rouge1_f1(prediction, reference),
                "meteor": meteor(prediction, reference),
                "chrf": chrf(prediction, reference),
                "semf1": semantic[i],
            }
            reasons = {"semf1": "no sentences in the answer"} if i in no_sentences else {}
        bad = [name for name, value in values.items() if not math.isfinite(value)]
        if bad:
            raise ValueError(
                f"non-finite {bad} for prediction {prediction[:80]!r}: refusing to average it into AtAvg"
            )
        values[ATAVG] = atavg(values)
        results.append(PairScores(values, reasons, len(stripped[i]) - len(prediction)))
    return results
