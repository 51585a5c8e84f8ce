"""The paper's automatic metrics as one Inspect scorer: ``narrative_infill/metrics``."""

from __future__ import annotations

from functools import cache

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from ...copy_guards import CONTEXT_COPY_THRESHOLD, STORY_REUSE_THRESHOLD
from ...extraction import DEFAULT_EXTRACTION, check_extraction
from ...inspect_compat import shown_by_inspect
from ...number_rules import METRIC_RANGE
from ..answer import extracted, input_limits, truncated
from ..error_bars import headline_metrics, key_metrics
from .copying import context_copy, copied_share
from .loading import loads_for, wait_loaded
from .pairs import ATAVG, METRIC_NAMES, metrics_signature
from .reuse import reused_share, story_reuse
from .threads import budget

#: AtAvg first: the log viewer and the end-of-run summary lead with the paper's headline number.
#: ``truncated`` (1 when the output cap ended the response) averages to the truncated share.
_KEYS = (ATAVG, *METRIC_NAMES, "truncated")
#: Pairs scored per flush of the queue. Larger than a model batch: texts are sorted by length
#: across the whole flush before being cut into model batches, so less padding is computed.
PAIRS_PER_FLUSH = 1024


@cache
def _batcher(
    backbone: str,
    bertscore_model: str | None,
    bertscore_layer: int | None,
    semf1_model: str | None,
    batch_size: int,
    cache_dir: str | None,
):
    """One batcher (and one set of loaded models) per configuration, per process, and its backbones."""
    from .batching import DynamicBatcher
    from .pairs import resolve_backbones, score_pairs

    backbones = resolve_backbones(backbone, bertscore_model, bertscore_layer, semf1_model)

    def score_batch(pairs: list[tuple[str, str]]):
        wait_loaded(backbones)  # loading since the first sample started (the tasks' setup step)
        with budget.batch():  # the cores the model's generation leaves free
            return score_pairs(
                [p for p, _ in pairs],
                [r for _, r in pairs],
                backbones,
                batch_size=batch_size,
                cache_dir=cache_dir,
            )

    return DynamicBatcher(score_batch, max_batch=PAIRS_PER_FLUSH), backbones


#: The story guards (not part of AtAvg): ``context_copy`` and ``story_reuse``, each its mean and the
#: share of answers above its threshold.
COPY_METRICS = {
    "context_copy": [mean(), copied_share(CONTEXT_COPY_THRESHOLD)],
    "story_reuse": [mean(), reused_share(STORY_REUSE_THRESHOLD)],
}


@scorer(
    metrics={
        **{key: headline_metrics(METRIC_RANGE) if key == ATAVG else key_metrics() for key in _KEYS},
        **COPY_METRICS,
    }
)
@shown_by_inspect
def metrics(
    backbone: str = "auto",
    bertscore_model: str | None = None,
    bertscore_layer: int | None = None,
    semf1_model: str | None = None,
    batch_size: int = 64,
    cache_dir: str | None = None,
    extraction: str = DEFAULT_EXTRACTION,
) -> Scorer:
    """AtAvg, the mean of BERTScore F1, ROUGE-1 F1, METEOR, chrF and Sem-F1 of the extracted
    infill, each metric, ``truncated`` (whether the output cap ended the response) and
    ``context_copy`` (how much of the answer is copied from the story around the blank,
    ``copying.context_copy``) and ``story_reuse`` (how much of it is the story's words in any
    order, ``reuse.story_reuse``); neither is part of AtAvg.

    Args:
      backbone: "auto" (the paper's models when cached, else the packaged MiniLM with a
        warning), "paper" (fail unless the paper's models load) or "minilm".
      bertscore_model: a BERTScore model name or path, overriding ``backbone``.
      bertscore_layer: the layer BERTScore reads (required with a custom model).
      semf1_model: a sentence-transformers model name or path for Sem-F1.
      batch_size: the most pairs one model call scores.
      cache_dir: also keep the golds' embeddings on disk here, across processes (default:
        $NARRATIVE_INFILL_EMBEDDING_CACHE, else in memory only, shared by the tasks of a process).
      extraction: "ours" (the paper's extraction rules) or "published" (the authors' released
        code: the first <ANSWER> span, else the whole response). Part of the metrics signature,
        so the report never averages the two together.
    """
    check_extraction(extraction)
    batcher, backbones = _batcher(
        backbone, bertscore_model, bertscore_layer, semf1_model, batch_size, cache_dir
    )
    signature = metrics_signature(backbones, extraction)  # loads no model

    async def score(state: TaskState, target: Target) -> Score:
        answer = await extracted(state, extraction)
        result = await batcher.submit((answer.text, target.text))
        cut = truncated(state)
        value = {ATAVG: result.values[ATAVG], **{name: result.values[name] for name in METRIC_NAMES}}
        value["truncated"] = float(cut)
        value["context_copy"] = context_copy(answer.text, state.input_text)
        value["story_reuse"] = story_reuse(answer.text, state.input_text)
        metadata: dict[str, object] = {
            "truncated": cut,
            "extraction_status": answer.status.value,
            "extraction_steps": list(answer.steps),
            "metrics_signature": signature,
        }
        if result.reasons:
            metadata["zero_reasons"] = result.reasons
        metadata.update(input_limits(answer, result.truncated_chars))
        return Score(value=value, answer=answer.text, metadata=metadata)

    loads_for(score, backbones)
    return score
