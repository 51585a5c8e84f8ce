"""End to end with mockllm: registry names, .eval logs, analysis dataframes, and eval-set mixing."""

import json

import pytest

from inspect_ai import Task, eval, eval_set, task
from inspect_ai.analysis import samples_df
from inspect_ai.dataset import Sample
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.scorer import match
from inspect_ai.solver import generate
from inspect_ai.util import registry_create

from helpers import REPO, mock_model

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)


def answer_tagged(messages, config):
    return "<ANSWER>They walked home together.</ANSWER>"


def test_registered_task_runs_and_logs(tmp_path):
    log_dir = tmp_path / "logs"
    [log] = eval(
        "narrative_infill/l2",
        model=mock_model(answer_tagged),
        task_args={"data": "demo"},
        log_dir=str(log_dir),
        display="none",
    )
    assert log.status == "success"
    assert log.eval.task == "narrative_infill/l2"
    assert log.eval.task_args["data"] == "demo"
    assert log.results.completed_samples == 24
    stored = read_eval_log(list_eval_logs(str(log_dir))[0].name)
    assert all(s.scores["metrics"].answer == "They walked home together." for s in stored.samples)
    frame = samples_df(str(log_dir))
    assert len(frame) == 24
    assert all(
        set(json.loads(value))
        == {"atavg", "bertscore", "rouge1", "meteor", "chrf", "semf1", "truncated", "context_copy", "story_reuse"}
        for value in frame["score_metrics"]
    )
    assert set(frame["metadata_position"]) == {"opening", "middle", "closing"}


def test_task_runs_from_its_file_as_inspect_eval_file_at_name():
    [log] = eval(
        str(REPO / "narrative_infill" / "tasks" / "infill.py") + "@l2",
        model=mock_model(answer_tagged),
        task_args={"data": "demo", "domain": "sind", "n": 1},
        display="none",
        limit=1,
    )
    assert log.status == "success" and log.eval.task_args["domain"] == "sind"
    assert log.samples[0].scores["metrics"].answer == "They walked home together."


@task
def arithmetic() -> Task:
    """An independent suite, standing in for any other Inspect benchmark."""
    return Task(dataset=[Sample(input="What is 2 + 2?", target="4")], solver=generate(), scorer=match())


def test_eval_set_mixes_with_another_suite(tmp_path):
    log_dir = tmp_path / "eval-set"
    success, logs = eval_set(
        tasks=[registry_create("task", "narrative_infill/l2", data="demo", domain="sind"), arithmetic()],
        log_dir=str(log_dir),
        model=mock_model(lambda m, c: "4" if "2 + 2" in m[-1].text else "<ANSWER>Then it rained.</ANSWER>"),
        retry_attempts=0,
        display="none",
    )
    assert success
    assert sorted(log.eval.task for log in logs) == ["arithmetic", "narrative_infill/l2"]
    assert all(log.status == "success" for log in logs)
    assert len(list_eval_logs(str(log_dir))) == 2


@pytest.mark.parametrize("roles", ["grader,grader2", ["grader", "grader2"]])
def test_judge_roles_split_as_the_data_filters_do(monkeypatch, roles):
    """``-T judge_roles=grader,grader2`` was one role named "grader,grader2" while ``-T domain=a,b``
    was two domains: both now go through task_options.as_list."""
    import narrative_infill.tasks.infill as infill

    asked = {}
    real = infill.judge_scorer

    def spy(**kwargs):
        asked.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(infill, "judge_scorer", spy)
    infill.infill_task("l2", data="demo", judge_roles=roles, backbone="minilm")
    assert asked["roles"] == ["grader", "grader2"]
