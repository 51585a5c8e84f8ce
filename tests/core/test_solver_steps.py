"""Each custom solver on its own, in a task without scorers (so no embedding backbone is loaded)."""

import pytest
from helpers import mock_model
from inspect_ai import Task, eval, task_with
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.util import registry_create

from narrative_infill.solvers.replay import replay_output
from narrative_infill.data.dataset import infill_dataset
from narrative_infill.paper_protocol import PAPER_PROMPT_VARIANT
from narrative_infill.prompts import prompt_template
from narrative_infill.solvers import generate_infill, infill_prompt
from narrative_infill.paper_protocol import output_cap
from narrative_infill.tasks.judge_check import fixed_answer, judge_check


def _run(solver, dataset, model):
    [log] = eval(Task(dataset=dataset, solver=solver), model=model, display="none")
    assert log.status == "success", log.error
    return log


def test_infill_prompt_and_generate_infill_send_the_template_and_the_per_sample_cap():
    seen = []

    def respond(messages, config):
        seen.append((messages, config))
        return "<ANSWER>x</ANSWER>"

    dataset = infill_dataset("demo", domain="sind", n=1)
    log = _run([infill_prompt("l1", system_role=True), generate_infill()], dataset, mock_model(respond))
    template = prompt_template("l1", PAPER_PROMPT_VARIANT)
    for (messages, config), sample in zip(seen, log.samples):
        assert [m.role for m in messages] == ["system", "user"] and messages[0].text == template.system
        assert sample.input in messages[1].text
        assert config.max_tokens == output_cap("l2", sample.metadata["gold_tokens"])[0]
        assert sample.metadata["max_tokens_rule"] == "per_sample"


@pytest.mark.parametrize(("run_cap", "expected"), [(None, 7), (5, 5)])
def test_a_tasks_max_tokens_replaces_the_per_sample_rule_and_the_users_max_tokens_wins(run_cap, expected):
    """``-T max_tokens=7`` caps every sample at 7; ``--max-tokens 5`` (the eval's) wins over it."""
    caps = []
    task = registry_create("task", "narrative_infill/l0", data="demo", domain="sind", n=1, max_tokens=7)
    model = mock_model(lambda m, c: caps.append(c.max_tokens) or "x")
    [log] = eval(task_with(task, scorer=None), model=model, max_tokens=run_cap, display="none")
    assert log.status == "success", log.error
    assert caps and set(caps) == {expected}
    assert {s.metadata["max_tokens"] for s in log.samples} == {expected}
    assert {s.metadata["max_tokens_rule"] for s in log.samples} == {"user"}


def test_replay_output_puts_the_stored_response_in_the_output_without_generating():
    stored = {"original_prompt": "Fill it.", "original_response": "They ran."}
    sample = Sample(input="unused", metadata=stored)
    log = _run(replay_output(), [sample], get_model("replay/some-model"))
    [replayed] = log.samples
    assert replayed.output.completion == "They ran."
    assert [m.text for m in replayed.messages] == ["Fill it.", "They ran."]


def test_fixed_answer_gives_the_gold_span_or_nothing():
    log = _run(fixed_answer(), judge_check(instances=2).dataset, "none/none")
    answers = {s.metadata["baseline"]: [] for s in log.samples}
    for sample in log.samples:
        expected = {"gold": sample.target, "empty": ""}.get(sample.metadata["baseline"])
        assert expected is None or sample.output.completion == expected and sample.target
        answers[sample.metadata["baseline"]].append(sample.output.completion)
    assert sorted(answers) == ["context", "empty", "gold", "neighbour"] and len(answers["gold"]) == 2
    assert all(answer and "______" not in answer for answer in answers["context"])
