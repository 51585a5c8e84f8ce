"""The overlap scorer equals direct library calls and scores the extracted answer."""

import json

import pytest
from inspect_ai import eval
from rouge_score import rouge_scorer
from sacrebleu.metrics import CHRF

from narrative_infill.extraction import extract_answer
from narrative_infill.scorers.overlap import chrf, rouge1_f1
from narrative_infill.tasks import infill_task

from helpers import SHARED, mock_model


def _real_pairs(limit=40):
    with (SHARED / "data" / "extraction" / "annotated_dev.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle][:limit]
    return [(extract_answer(r["response"], r["problem"]).text, r["gold_answer"]) for r in rows]


def test_metrics_equal_direct_library_calls_on_real_outputs():
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
    chrf_metric = CHRF()
    for prediction, gold in _real_pairs():
        assert rouge1_f1(prediction, gold) == pytest.approx(scorer.score(gold, prediction)["rouge1"].fmeasure, abs=1e-9)
        assert chrf(prediction, gold) == pytest.approx(chrf_metric.sentence_score(prediction, [gold]).score / 100, abs=1e-9)


def test_task_scores_are_dicts_with_per_key_metrics_and_the_extraction_as_answer():
    answers = iter(["<ANSWER>She saved her coins every week.</ANSWER>", "", "plain text answer"] * 10)
    log = eval(infill_task("l2", data="demo", n=1), model=mock_model(lambda m, c: next(answers)), display="none")[0]
    assert log.status == "success"
    names = {s.name: set(s.metrics) for s in log.results.scores}
    assert names == {"rouge1": {"mean", "stderr"}, "chrf": {"mean", "stderr"}}
    statuses = set()
    for sample in log.samples:
        score = sample.scores["overlap"]
        assert set(score.value) == {"rouge1", "chrf"}
        statuses.add(score.metadata["extraction_status"])
        if score.metadata["extraction_status"] == "no_answer":
            assert score.answer == "" and score.value == {"rouge1": 0.0, "chrf": 0.0}
            assert score.metadata["zero_reason"] == "no answer extracted"
        else:
            expected = extract_answer(sample.output.completion, sample.input).text
            assert score.answer == expected
            assert score.value["rouge1"] == pytest.approx(rouge1_f1(expected, sample.target))
    assert statuses == {"tagged", "no_answer", "whole_response"}
