"""Decoding settings reach the model: the per-sample length cap, temperature and top-p."""

import pytest
from helpers import mock_model, mock_output
from inspect_ai import eval
from inspect_ai.model import GenerateConfig

from narrative_infill.data.dataset import load_benchmark
from narrative_infill.errors import OptionError
from narrative_infill.inspect_compat import ShownByInspect
from narrative_infill.paper_protocol import REASONING_MAX_TOKENS
from narrative_infill.paper_protocol import output_cap
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)


def _asks(prompt, instance):
    """Whether ``prompt`` (system text, then the problem) was built from ``instance``."""
    body = prompt.split("\n\n", 1)[1]
    return body == instance.problem or body.startswith(instance.problem + "\n\n")


def _configs_by_problem(task, model_args=None, **eval_args):
    seen = {}

    def respond(messages, config):
        seen[messages[-1].text] = config
        return "<ANSWER>x</ANSWER>"

    log = eval(task, model=mock_model(respond, **(model_args or {})), display="none", **eval_args)[0]
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
        assert config.max_tokens == output_cap("l2", instance.gold_tokens, factor=1.5)[0]


@pytest.mark.parametrize(
    "option, message",
    [
        ({"max_tokens": 0}, "max_tokens must be positive"),
        ({"max_tokens_factor": 0}, "max_tokens_factor must be positive"),
    ],
)
def test_invalid_caps_are_rejected(option, message):
    """Raised as the error Inspect shows by its message alone, the option error as its cause."""
    with pytest.raises(ShownByInspect, match=message) as raised:
        infill_task("l2", data="demo", **option)
    assert isinstance(raised.value.__cause__, OptionError)


@pytest.mark.parametrize("template", ["l2", "cot"])
def test_the_users_max_tokens_always_wins(template):
    """--max-tokens (the eval's config) and the model's own config beat the task's cap rule."""
    seen, log = _configs_by_problem(infill_task(template, data="demo", n=1), max_tokens=4000)
    assert {c.max_tokens for c in seen.values()} == {4000}
    assert {(s.metadata["max_tokens"], s.metadata["max_tokens_rule"]) for s in log.samples} == {
        (4000, "user")
    }
    seen, _ = _configs_by_problem(
        infill_task(template, data="demo", n=1), model_args={"config": GenerateConfig(max_tokens=321)}
    )
    assert {c.max_tokens for c in seen.values()} == {321}


def test_reasoning_tasks_leave_room_to_reason():
    seen, log = _configs_by_problem(infill_task("abductive", data="demo", n=1))
    assert {c.max_tokens for c in seen.values()} == {REASONING_MAX_TOKENS} == {4096}
    assert {s.metadata["max_tokens_rule"] for s in log.samples} == {"task_default"}
    _, teler = _configs_by_problem(infill_task("l3", data="demo", n=1))
    assert {s.metadata["max_tokens_rule"] for s in teler.samples} == {"per_sample"}


def test_a_response_cut_at_the_cap_is_flagged_and_counted():
    def respond(messages, config):
        output = mock_output("<ANSWER>She ran to the")
        output.choices[0].stop_reason = "max_tokens" if "Maya" in messages[-1].text else "stop"
        return output

    log = eval(infill_task("l2", data="demo", n=1), model=mock_model(respond), display="none")[0]
    cut = [s for s in log.samples if s.scores["metrics"].metadata["truncated"]]
    assert 0 < len(cut) < len(log.samples)
    assert all(s.scores["metrics"].value["truncated"] == 1.0 for s in cut)
    share = {s.name: s.metrics["mean"].value for s in log.results.scores}["truncated"]
    assert share == pytest.approx(len(cut) / len(log.samples))
