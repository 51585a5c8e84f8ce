"""The judge finds its graders when it scores: roles bound under another name, or a panel bound in part,
are said, never silently judged by fewer models than asked."""

import pytest
from helpers import VALID_VERDICT, mock_model
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from narrative_infill.scorers.judge import judge

STORY = "Ann went out. ____ They came home."


def _judged(bound, **judge_options):
    """One sample judged by the judge alone (no metrics, so no embedding backbone)."""
    task = Task(dataset=[Sample(input=STORY, target="x")], solver=generate(), scorer=judge(**judge_options))
    model = mock_model(lambda m, c: "<ANSWER>They met Bob.</ANSWER>")
    [log] = eval(task, model=model, model_roles=bound, display="none", fail_on_error=False)
    return log


def test_a_role_bound_under_another_name_is_named_in_the_warning(caplog):
    with caplog.at_level("WARNING"):
        log = _judged({"judge": mock_model(lambda m, c: VALID_VERDICT)}, optional=True)
    assert log.status == "success" and "judge" not in log.samples[0].scores
    [warning] = [r.getMessage() for r in caplog.records if "LLM judge not run" in r.getMessage()]
    assert "'grader'" in warning and "bound: judge" in warning


def test_a_panel_bound_in_part_fails_naming_the_missing_role():
    log = _judged({"grader": mock_model(lambda m, c: VALID_VERDICT)}, roles=["grader", "grader2"], optional=True)
    error = str(log.samples[0].error or log.error)
    assert "grader2" in error and "not bound" in error, error
    assert "judge" not in (log.samples[0].scores or {})


def test_a_full_panel_still_judges():
    grader = mock_model(lambda m, c: VALID_VERDICT)
    log = _judged({"grader": grader, "grader2": grader}, roles=["grader", "grader2"])
    assert log.samples[0].scores["judge"].value["qavg_grader2"] == pytest.approx(3.8)
