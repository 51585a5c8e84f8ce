"""The metrics' models load while the first samples generate (issue 49): the tasks' setup step starts
the load as a sample that will be scored starts, so the first score finds it under way instead of
starting it; under ``--no-score`` nothing loads; a failed load fails the scored samples with its error.

Scoring itself is replaced by a stand-in ``score_pairs`` (the load is one warm-up call of it, with
the golds' cache off), so these tests load no model; no timing is asserted, only what had happened
when the model was called."""

from __future__ import annotations

import pytest
from helpers import mock_model
from inspect_ai import eval as inspect_eval

ANSWER = "<ANSWER>She went home.</ANSWER>"


@pytest.fixture
def scoring_calls(monkeypatch):
    """The stand-in ``score_pairs``'s calls, ("warm-up" or "score", pairs); no load started yet."""
    from narrative_infill.scorers.metrics import loading, pairs, scorer

    calls: list[tuple[str, int]] = []

    def stand_in(predictions, references, backbones, batch_size=64, cache_dir=None, use_cache=True):
        calls.append(("score" if use_cache else "warm-up", len(predictions)))
        values = dict.fromkeys((*pairs.METRIC_NAMES, pairs.ATAVG), 0.5)
        return [pairs.PairScores(dict(values)) for _ in predictions]

    monkeypatch.setattr(pairs, "score_pairs", stand_in)
    monkeypatch.setattr(loading, "_started", {})
    scorer._batcher.cache_clear()  # a batcher of an earlier test would hold the real score_pairs
    yield calls
    scorer._batcher.cache_clear()


def _run(tmp_path, respond, **options):
    [log] = inspect_eval(
        "narrative_infill/l2",
        task_args={"data": "demo", "backbone": "minilm", "judge": False},
        model=mock_model(respond, memoize=False),
        limit=3,
        display="none",
        log_dir=str(tmp_path),
        **options,
    )
    return log


def test_loading_has_begun_when_a_scored_sample_generates(tmp_path, scoring_calls):
    from narrative_infill.scorers.metrics import loading

    loads_begun_at_generation = []

    def respond(messages, config):
        loads_begun_at_generation.append(len(loading._started))
        return ANSWER

    log = _run(tmp_path, respond)
    assert log.status == "success", log.error
    assert loads_begun_at_generation == [1, 1, 1]
    # one load, finished before the first batch was scored; then the samples' own pairs
    assert scoring_calls[0] == ("warm-up", 1)
    assert [kind for kind, _ in scoring_calls[1:]] == ["score"] * (len(scoring_calls) - 1)
    assert sum(n for _, n in scoring_calls[1:]) == 3


def test_nothing_loads_under_no_score(tmp_path, scoring_calls):
    from narrative_infill.scorers.metrics import loading

    log = _run(tmp_path, lambda messages, config: ANSWER, score=False)
    assert log.status == "success", log.error
    assert loading._started == {}
    assert scoring_calls == []


def test_a_failed_load_fails_each_scored_sample_with_its_error(tmp_path, monkeypatch, scoring_calls):
    from narrative_infill.scorers.metrics import pairs
    from narrative_infill.scorers.metrics.embedding import BackboneUnavailable

    def no_backbone(predictions, references, backbones, batch_size=64, cache_dir=None, use_cache=True):
        raise BackboneUnavailable("stand-in: the encoder's weights are missing")

    monkeypatch.setattr(pairs, "score_pairs", no_backbone)
    log = _run(tmp_path, lambda messages, config: ANSWER, fail_on_error=False)
    assert len(log.samples) == 3
    assert all(
        sample.error and "the encoder's weights are missing" in sample.error.message for sample in log.samples
    )


def test_every_scored_task_sets_up_load_metric_models():
    """The tasks run ``load_metric_models()`` as their setup step, so the load starts with a sample."""
    from narrative_infill.scorers.metrics.loading import load_metric_models
    from narrative_infill.tasks import infill_task

    task = infill_task("l2", data="demo", judge=False, backbone="minilm")
    assert task.setup.__qualname__ == load_metric_models().__qualname__ == "load_metric_models.<locals>.solve"
