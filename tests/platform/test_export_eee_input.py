"""``export eee`` on awkward input: a file that is not a log (an error naming it, nothing written), a
sample that errored (absent with its error, not a bare "not scored"). Judge-only logs: no embedding model."""

import json
import shutil

import pytest
from helpers import VALID_VERDICT, mock_model
from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from narrative_infill.platform.analysis.export.every_eval_ever import ExportError, export_eee
from narrative_infill.platform.cli import main
from narrative_infill.scorers.judge import judge


@pytest.mark.parametrize(
    "name, content",
    [("notes.eval", "hello"), ("other.json", '{"a": 1}'), ("broken.json", "{not json")],
)
def test_a_file_that_is_not_a_log_is_named_and_nothing_is_written(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(ExportError, match=f"{name}: not a readable Inspect log"):
        export_eee([str(path)], out, "t")
    assert not out.exists()


def test_the_command_says_it_in_one_line(tmp_path, capsys):
    path = tmp_path / "notes.eval"
    path.write_text("hello", encoding="utf-8")
    assert main(["export", "eee", str(path), "-o", str(tmp_path / "out"), "--organization", "t"]) == 1
    assert "notes.eval: not a readable Inspect log" in capsys.readouterr().err


def test_an_errored_sample_is_absent_with_its_error(tmp_path):
    def answer(messages, config):
        if "Storm" in messages[-1].text:
            raise RuntimeError("the endpoint went away")
        return "<ANSWER>They met Bob.</ANSWER>"

    samples = [
        Sample(input="Ann went out. ____ Home.", target="x", id="calm"),
        Sample(input="Storm. ____", id="storm"),
    ]
    task = Task(dataset=samples, solver=generate(), scorer=judge(), name="l2")
    grader = mock_model(lambda m, c: VALID_VERDICT)
    [log] = eval(task, model=mock_model(answer), model_roles={"grader": grader}, display="none",
                 log_dir=str(tmp_path / "logs"), fail_on_error=False)  # fmt: skip
    assert log.status == "success" and log.samples[1].error
    [aggregate_path] = [p for p in export_eee([log.location], tmp_path / "out", "t") if p.suffix == ".json"]
    results = json.loads(aggregate_path.read_text(encoding="utf-8"))["evaluation_results"]
    [qavg] = [r for r in results if r["evaluation_result_id"] == "l2/judge/qavg"]
    absent = json.loads(qavg["score_details"]["details"]["absent_samples"])
    assert absent == {"storm@1": "the sample errored: RuntimeError('the endpoint went away')"}


def test_epochs_and_their_reducer_are_recorded_with_each_result(tmp_path):
    # Inspect reduces each sample's epochs before its metrics: the aggregate is a mean over reduced samples.
    task = Task(dataset=[Sample(input="Ann went out. ____ Home.", target="x", id="calm")], solver=generate(),
                scorer=judge(), name="l2")  # fmt: skip
    grader = mock_model(lambda m, c: VALID_VERDICT)
    [log] = eval(task, model=mock_model(lambda m, c: "<ANSWER>Bob.</ANSWER>"), model_roles={"grader": grader},
                 epochs=Epochs(2, "max"), display="none", log_dir=str(tmp_path / "logs"))  # fmt: skip
    written = export_eee([log.location], tmp_path / "out", "t")
    [aggregate_path] = [p for p in written if p.suffix == ".json"]
    [qavg] = [
        r
        for r in json.loads(aggregate_path.read_text(encoding="utf-8"))["evaluation_results"]
        if r["evaluation_result_id"] == "l2/judge/qavg"
    ]
    details = qavg["generation_config"]["additional_details"]
    assert (details["epochs"], details["epochs_reducer"]) == ("2", '["max"]')
    [samples_path] = [p for p in written if p.suffix == ".jsonl"]
    records = [json.loads(line) for line in samples_path.read_text(encoding="utf-8").splitlines()]
    assert sorted(
        r["metadata"]["epoch"] for r in records if r["evaluation_result_id"] == "l2/judge/qavg"
    ) == [1, 2]


def test_two_files_of_one_run_are_refused_instead_of_one_overwriting_the_other(tmp_path):
    # A log and its copy (a backup, a rescored copy: both keep the eval id) would write the same files.
    task = Task(dataset=[Sample(input="Ann went out. ____ Home.", target="x")], solver=generate(),
                scorer=judge(), name="l2")  # fmt: skip
    grader = mock_model(lambda m, c: VALID_VERDICT)
    [log] = eval(task, model=mock_model(lambda m, c: "<ANSWER>Bob.</ANSWER>"), model_roles={"grader": grader},
                 display="none", log_dir=str(tmp_path / "logs"))  # fmt: skip
    copy = tmp_path / "backup" / "copy.eval"
    copy.parent.mkdir()
    shutil.copy2(log.location, copy)
    with pytest.raises(ExportError, match="copy.eval.*one run"):
        export_eee([log.location, str(copy)], tmp_path / "out", "t")
    assert not (tmp_path / "out").exists()
