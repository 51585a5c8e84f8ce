"""``export eee``'s High% follows the rule asked for (``paper_protocol.is_high``: QAvg > 4, or >= 4 with
``--high-inclusive``), in its value, its label and its id; Low% is unchanged. Judge-only logs: no
embedding model."""

import json

import pytest
from helpers import mock_model
from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import write_eval_log
from inspect_ai.solver import generate

from narrative_infill.platform.analysis.export.every_eval_ever import export_eee
from narrative_infill.platform.cli import main
from narrative_infill.scorers.judge import judge


def _reply(points: int) -> str:
    dimensions = ("Fluency", "Context_Faithfulness", "Bidirectional_Coherence", "Narrative_Consistency",
                  "Informativeness")  # fmt: skip
    return json.dumps({d: points for d in dimensions})


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    """QAvg 5, 4 and 4, and one failed judgement (NaN): High% is 1/3 above 4, 3/3 at 4 or above."""
    samples = [Sample(input=f"Ann went out {i}. ____ Home.", target="x", id=f"s{i}") for i in range(4)]

    def grade(messages, config):
        text = messages[-1].text
        return "I cannot score this." if "out 3" in text else _reply(5 if "out 0" in text else 4)

    task = Task(dataset=samples, solver=generate(), scorer=judge(), name="l2")
    [log] = eval(task, model=mock_model(lambda m, c: "<ANSWER>They met Bob.</ANSWER>"),
                 model_roles={"grader": mock_model(grade)}, display="none",
                 log_dir=str(tmp_path_factory.mktemp("logs")))  # fmt: skip
    assert log.status == "success", log.error
    return log


def _shares(out):
    [aggregate] = (out / "data").rglob("*.json")
    results = json.loads(aggregate.read_text(encoding="utf-8"))["evaluation_results"]
    return {r["evaluation_result_id"]: r for r in results if "_share" in r["evaluation_result_id"]}


def test_high_share_is_above_4_by_default(log, tmp_path):
    export_eee([log.location], tmp_path / "out", "t")
    shares = _shares(tmp_path / "out")
    assert set(shares) == {"l2/judge/qavg/high_share", "l2/judge/qavg/low_share"}
    high = shares["l2/judge/qavg/high_share"]
    assert high["score_details"]["score"] == pytest.approx(1 / 3)
    assert high["score_details"]["uncertainty"]["num_samples"] == 3  # the failed judgement is not counted
    config = high["metric_config"]
    assert "QAvg > 4" in config["metric_name"] and "QAvg > 4" in config["evaluation_description"]
    assert config["metric_id"] == "narrative_infill.qavg.high_share"


def test_high_inclusive_counts_4_and_says_so(log, tmp_path):
    """The log's own High% metric counts QAvg > 4 only: with the option the export counted the same
    samples but labelled nothing, so a reader could not tell which rule the figure followed."""
    assert main(["export", "eee", log.location, "-o", str(tmp_path / "out"), "--organization", "t",
                 "--high-inclusive"]) == 0  # fmt: skip
    shares = _shares(tmp_path / "out")
    assert set(shares) == {"l2/judge/qavg/high_share_inclusive", "l2/judge/qavg/low_share"}
    high = shares["l2/judge/qavg/high_share_inclusive"]
    assert high["score_details"]["score"] == 1.0
    assert high["score_details"]["uncertainty"]["num_samples"] == 3
    config = high["metric_config"]
    assert "QAvg >= 4" in config["metric_name"] and "QAvg >= 4" in config["evaluation_description"]
    assert config["metric_id"] == "narrative_infill.qavg.high_share_inclusive"  # another metric, another id
    assert shares["l2/judge/qavg/low_share"]["score_details"]["score"] == 0.0


def test_high_inclusive_counts_reduced_samples_as_the_log_metrics_do(tmp_path):
    """Two epochs judged 3 and 5: the sample's reduced QAvg is 4.0, high under >= 4. Counting the
    epochs one by one would say 0.5."""
    calls = []

    def grade(messages, config):
        calls.append(1)
        return _reply(3 if len(calls) == 1 else 5)

    task = Task(dataset=[Sample(input="Ann went out. ____ Home.", target="x", id="calm")], solver=generate(),
                scorer=judge(), name="l2")  # fmt: skip
    [log] = eval(task, model=mock_model(lambda m, c: "<ANSWER>Bob.</ANSWER>"),
                 model_roles={"grader": mock_model(grade)}, epochs=Epochs(2, "mean"), display="none",
                 log_dir=str(tmp_path / "logs"))  # fmt: skip
    export_eee([log.location], tmp_path / "out", "t", high_inclusive=True)
    high = _shares(tmp_path / "out")["l2/judge/qavg/high_share_inclusive"]
    assert high["score_details"]["score"] == 1.0 and high["score_details"]["uncertainty"]["num_samples"] == 1


def test_the_judges_temperature_is_the_newest_scorings(log, tmp_path):
    """A log rejudged with ``inspect score --action append`` lists two judge scorers; the export's
    results are the newest scoring's, so its temperature must be too (it read the first one's)."""
    from inspect_ai import score

    rejudged = score(log, judge(temperature=0.7), action="append", display="none",
                     model_roles={"grader": mock_model(lambda m, c: _reply(4))})  # fmt: skip
    rejudged.location = str(tmp_path / "rejudged.eval")
    write_eval_log(rejudged, rejudged.location)
    export_eee([rejudged.location], tmp_path / "out", "t")
    [aggregate] = (tmp_path / "out" / "data").rglob("*.json")
    results = json.loads(aggregate.read_text(encoding="utf-8"))["evaluation_results"]
    temperatures = {
        judge_entry["temperature"]
        for result in results
        for judge_entry in (result["metric_config"].get("llm_scoring") or {}).get("judges", [])
    }
    assert temperatures == {0.7}
