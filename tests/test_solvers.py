"""Decoding settings reach the model: the per-sample length cap, temperature and top-p."""

import pytest
from inspect_ai import eval

from narrative_infill.data.dataset import load_benchmark
from narrative_infill.solvers.infill import max_tokens_for
from narrative_infill.tasks import infill_task

from helpers import mock_model


def _asks(prompt, instance):
    """Whether ``prompt`` (system text, then the problem) was built from ``instance``."""
    body = prompt.split("\n\n", 1)[1]
    return body == instance.problem or body.startswith(instance.problem + "\n\n")


def _configs_by_problem(task):
    seen = {}

    def respond(messages, config):
        seen[messages[-1].text] = config
        return "<ANSWER>x</ANSWER>"

    log = eval(task, model=mock_model(respond), display="none")[0]
    assert log.status == "success", log.error
    return seen, log


def test_each_sample_gets_twice_its_gold_length():
    instances = load_benchmark("demo").instances
    seen, log = _configs_by_problem(infill_task("l2", data="demo"))
    assert len(seen) == len(instances)
    for instance in instances:
        [config] = [c for prompt, c in seen.items() if _asks(prompt, instance)]
        assert config.max_tokens == 2 * instance.gold_tokens
        assert config.temperature == 0.8 and config.top_p == 0.9
    caps = {s.id: s.metadata["max_tokens"] for s in log.samples}
    assert caps == {i.sample_id: 2 * i.gold_tokens for i in instances}
    assert len(set(caps.values())) > 5  # per sample, not one number for all


def test_fixed_cap_and_factor_override():
    seen, _ = _configs_by_problem(infill_task("l0", data="demo", n=1, max_tokens=17))
    assert {c.max_tokens for c in seen.values()} == {17}
    instances = load_benchmark("demo").instances
    seen, _ = _configs_by_problem(infill_task("l0", data="demo", n=1, max_tokens_factor=1.5))
    for instance in (i for i in instances if i.n == 1):
        [config] = [c for prompt, c in seen.items() if _asks(prompt, instance)]
        assert config.max_tokens == max_tokens_for(instance.gold_tokens, 1.5)


def test_invalid_caps_are_rejected():
    with pytest.raises(ValueError, match="max_tokens must be positive"):
        infill_task("l2", data="demo", max_tokens=0)
    with pytest.raises(ValueError, match="max_tokens_factor must be positive"):
        infill_task("l2", data="demo", max_tokens_factor=0)
