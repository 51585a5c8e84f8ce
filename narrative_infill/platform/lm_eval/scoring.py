"""Extraction and the five metrics for lm-eval, by the Inspect scorer's own functions.

lm-eval filters see a task's responses all at once, so ``ExtractAndScore`` extracts every answer
(``extract_with``) and scores the whole task in one ``score_pairs`` call, as the Inspect scorer's
batcher does; ``process_results`` then only reads each document's scores. The filtered response
lm-eval logs per sample is the extracted answer; its scores and the metrics signature are logged
beside it as the sample's metrics.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...extraction import DEFAULT_EXTRACTION, check_extraction, extract_with
from ...scorers.metrics.pairs import ATAVG, METRIC_NAMES, metrics_signature, resolve_backbones, score_pairs

#: The name of the filter lm-eval reports the metrics under (``atavg,extracted``).
FILTER_NAME = "extracted"
SIGNATURE = "metrics_signature"
#: lm-eval's metric keys: the Inspect scorer's, less ``truncated`` (lm-eval keeps no finish reason).
METRIC_KEYS = (ATAVG, *METRIC_NAMES)


class ScoredAnswer(str):
    """An extracted answer (the string lm-eval logs as the filtered response) carrying its scores
    and metrics signature for ``process_results``. A ``str``: lm-eval writes filtered responses
    with ``str()``, which gives the answer text alone."""

    scores: dict[str, float]
    signature: str


class ExtractAndScore:
    """lm-eval filter (``apply(resps, docs)``): each document's extracted answer and its scores."""

    def __init__(self, extraction: str = DEFAULT_EXTRACTION, backbone: str = "auto") -> None:
        self.extraction = check_extraction(extraction)
        self.backbone = backbone

    def apply(self, resps: Iterable[list[str | None]], docs: list[dict[str, Any]]) -> list[ScoredAnswer]:
        responses = [_only_response(resp) for resp in resps]
        answers = [extract_with(self.extraction, text, doc["problem"]) for text, doc in zip(responses, docs)]
        backbones = resolve_backbones(self.backbone)
        signature = metrics_signature(backbones, self.extraction)
        scored = score_pairs([a.text for a in answers], [doc["gold_answer"] for doc in docs], backbones)
        filtered = []
        for answer, result in zip(answers, scored):
            item = ScoredAnswer(answer.text)
            item.scores, item.signature = result.values, signature
            filtered.append(item)
        return filtered


def _only_response(resp: list[str | None]) -> str:
    """A document's one response (the tasks run ``repeats: 1``); a refused or unparsable one
    (lm-eval gives None or "") is scored as an empty answer, whose zero the scores' reasons name."""
    if len(resp) != 1:
        raise ValueError(f"expected one response per document (repeats: 1), got {len(resp)}")
    return resp[0] or ""


def process_results(doc: dict[str, Any], results: list[ScoredAnswer]) -> dict[str, Any]:
    """lm-eval's per-document metrics: the scores ``ExtractAndScore`` computed, and the signature."""
    [scored] = results
    return {**{key: scored.scores[key] for key in METRIC_KEYS}, SIGNATURE: scored.signature}


def one_signature(signatures: list[str]) -> str:
    """Aggregation of ``metrics_signature``: the task's one signature (two would make the mean a mix)."""
    distinct = sorted(set(signatures))
    if len(distinct) != 1:
        raise ValueError(f"{len(distinct)} metrics signatures in one task: {distinct}")
    return distinct[0]
