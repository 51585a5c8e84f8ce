"""Lexical overlap of the extracted answer with the gold span: ROUGE-1 F1 and chrF."""

from __future__ import annotations

from functools import cache

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from ..extraction import extract_answer


@cache
def _rouge():
    from rouge_score import rouge_scorer

    # The authors' settings through `evaluate`: no stemmer, the default tokenizer.
    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)


@cache
def _chrf():
    from sacrebleu.metrics import CHRF

    # sacrebleu's defaults, as `evaluate.load("chrf")` used them: char order 6, word order 0, beta 2.
    return CHRF()


def rouge1_f1(prediction: str, reference: str) -> float:
    return _rouge().score(reference, prediction)["rouge1"].fmeasure


def chrf(prediction: str, reference: str) -> float:
    """sacrebleu sentence chrF on a 0-1 scale."""
    return _chrf().sentence_score(prediction, [reference]).score / 100


@scorer(metrics={"rouge1": [mean(), stderr()], "chrf": [mean(), stderr()]})
def overlap() -> Scorer:
    """ROUGE-1 F1 and chrF of the extracted infill; an empty extraction scores 0 on both, with the reason."""

    async def score(state: TaskState, target: Target) -> Score:
        extraction = extract_answer(state.output.completion, state.input_text, state.metadata.get("n"))
        metadata = {"extraction_status": extraction.status.value, "extraction_steps": list(extraction.steps)}
        if not extraction.text:
            metadata["zero_reason"] = "no answer extracted"
            return Score(value={"rouge1": 0.0, "chrf": 0.0}, answer="", metadata=metadata)
        return Score(
            value={"rouge1": rouge1_f1(extraction.text, target.text), "chrf": chrf(extraction.text, target.text)},
            answer=extraction.text,
            metadata=metadata,
        )

    return score
