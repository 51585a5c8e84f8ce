"""The report never deletes, drops or pools: its output folder spares the inputs, each log keeps its
newest scores, one cell holds one run, and every missing sample is counted (issue 26)."""

import math
import shutil
from statistics import fmean

import pandas as pd
import pytest
from helpers import mock_output, umask
from inspect_ai import eval, score
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model

from narrative_infill.platform.analysis.report.coverage import MARK
from narrative_infill.platform.cli import main
from narrative_infill.paper_protocol import DIMENSIONS
from narrative_infill.scorers.metrics import metrics
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)

ANSWERS = {"a": "They all went fishing at dawn.", "b": "Everyone swam in the cold lake."}
GRADE = "{" + ", ".join(f'"{d.title()}": {v}' for d, v in zip(DIMENSIONS, (4, 3, 4, 3, 4))) + "}"


def _grader(fail_on=None):
    def reply(messages, tools, tool_choice, config):
        return mock_output("no json here" if fail_on and fail_on in messages[-1].text else GRADE)

    return get_model("mockllm/grader", custom_outputs=reply, memoize=False)


def _model(name, answer):
    def reply(messages, tools, tool_choice, config):
        text = answer(messages) if callable(answer) else answer
        return mock_output(f"<ANSWER>{text}</ANSWER>")

    return get_model(f"mockllm/{name}", custom_outputs=reply, memoize=False)


def _run(log_dir, name, answer, template="l2", grader=None, epochs=1, **task_args):
    """A run of the registered task, as ``inspect eval narrative_infill/l2 -T ...`` makes it."""
    options = {"data": "demo", "domain": "sind", "backbone": "minilm", "judge": True, **task_args}
    roles = {"grader": grader or _grader()}
    [log] = eval(f"narrative_infill/{template}", task_args=options, model=_model(name, answer),
                 model_roles=roles, epochs=epochs, log_dir=str(log_dir), display="none")  # fmt: skip
    return log


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    """Models a and b, each on l1 and l2."""
    folder = tmp_path_factory.mktemp("two-models")
    for name, answer in ANSWERS.items():
        for template in ("l1", "l2"):
            _run(folder, name, answer, template)
    return folder


def _copy(folder, tmp_path):
    return shutil.copytree(folder, tmp_path / "logs")


def _table3(out):
    return pd.read_csv(out / "table3_model_by_level.csv", header=[0, 1], index_col=0)


def _mean(log, key, scorer):
    return fmean(s.scores[scorer].value[key] for s in log.samples)


# -- item 1: -o never replaces an input or a folder the report did not write --


@pytest.mark.parametrize("where", ["the logs", "inside the logs", "above the logs"])
def test_report_output_may_not_be_hold_or_sit_inside_its_input(two_models, tmp_path, capsys, where):
    logs = _copy(two_models, tmp_path)
    before = sorted(p.name for p in logs.iterdir())
    out = {"the logs": logs, "inside the logs": logs / "report", "above the logs": tmp_path}[where]
    assert main(["report", str(logs), "-o", str(out)]) == 1
    assert "choose an output folder apart from the inputs" in capsys.readouterr().err
    assert sorted(p.name for p in logs.iterdir()) == before and len(before) == 4


def test_report_output_through_a_link_to_the_logs_is_refused(two_models, tmp_path, capsys):
    logs = _copy(two_models, tmp_path)
    (tmp_path / "link").symlink_to(logs)
    assert main(["report", str(logs), "-o", str(tmp_path / "link")]) == 1
    assert len(list(logs.glob("*.eval"))) == 4


def test_report_replaces_its_own_folder_but_not_a_strangers_file(two_models, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", str(two_models), "-o", str(out)]) == 0
    assert main(["report", str(two_models), "-o", str(out)]) == 0  # its own: replaced
    (out / "my-notes.txt").write_text("keep me")
    assert main(["report", str(two_models), "-o", str(out)]) == 1
    assert "files it did not write: my-notes.txt" in capsys.readouterr().err
    assert (out / "my-notes.txt").read_text() == "keep me" and (out / "report.md").exists()
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "thesis.tex").write_text("years of work")
    assert main(["report", str(two_models), "-o", str(stranger)]) == 1
    assert "not written by narrative-infill" in capsys.readouterr().err
    assert (stranger / "thesis.tex").read_text() == "years of work"


def test_report_files_take_the_umask(two_models, tmp_path):
    with umask(0o022):
        assert main(["report", str(two_models), "-o", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "out" / "report.md").stat().st_mode & 0o777 == 0o644


# -- item 2: the newest scores are chosen per log --


def _rescore(location):
    """What `inspect score LOG --scorer narrative_infill/metrics --action append` does, in process."""
    rescored = score(read_eval_log(location), metrics(backbone="minilm"), action="append", display="none")
    write_eval_log(rescored, location)
    return rescored


def _logs_of(folder, model, template=None):
    return [
        str(p)
        for p in sorted(folder.glob("*.eval"))
        if (header := read_eval_log(str(p), header_only=True)).eval.model == f"mockllm/{model}"
        and template in (None, header.eval.metadata["template"])
    ]


def test_rescoring_one_models_logs_keeps_the_other_model(two_models, tmp_path):
    logs = _copy(two_models, tmp_path)
    for location in _logs_of(logs, "a"):
        _rescore(location)
    assert main(["report", str(logs), "-o", str(tmp_path / "out")]) == 0
    table = _table3(tmp_path / "out")
    [b_l2] = [read_eval_log(p) for p in _logs_of(logs, "b", "l2")]
    [a_l2] = [read_eval_log(p) for p in _logs_of(logs, "a", "l2")]
    assert table.loc["mockllm/b", ("AtAvg", "l2")] == pytest.approx(_mean(b_l2, "atavg", "metrics"))
    assert table.loc["mockllm/a", ("AtAvg", "l2")] == pytest.approx(_mean(a_l2, "atavg", "metrics1"))
    assert table.loc["Overall", ("AtAvg", "l2")] == pytest.approx(
        fmean([_mean(a_l2, "atavg", "metrics1"), _mean(b_l2, "atavg", "metrics")])
    )


def test_rescoring_one_setting_of_one_model_reports_every_setting(two_models, tmp_path):
    logs = _copy(two_models, tmp_path)
    [location] = _logs_of(logs, "a", "l1")
    _rescore(location)
    assert main(["report", str(logs), "-o", str(tmp_path / "out")]) == 0
    table = _table3(tmp_path / "out")
    assert table.loc[["mockllm/a", "mockllm/b"], [("AtAvg", "l1"), ("AtAvg", "l2")]].notna().all().all()


# -- item 3: runs that differ are never averaged into one cell --


def test_a_code_variant_run_is_its_own_row_not_averaged_with_the_paper_prompt(two_models, tmp_path):
    logs = _copy(two_models, tmp_path)
    code3 = _run(logs, "a", "Nothing much.", "l2", variant="code3")
    [paper] = [read_eval_log(p) for p in _logs_of(logs, "a", "l2")[:1]]
    assert main(["report", str(logs), "-o", str(tmp_path / "out")]) == 0
    table = _table3(tmp_path / "out")
    assert table.loc["mockllm/a [variant=code3]", ("QAvg", "l2")] == pytest.approx(
        _mean(code3, "qavg", "judge")
    )
    assert table.loc["mockllm/a [variant=code3]", ("AtAvg", "l2")] == pytest.approx(
        _mean(code3, "atavg", "metrics")
    )
    assert table.loc["mockllm/a [variant=paper]", ("AtAvg", "l2")] == pytest.approx(
        _mean(paper, "atavg", "metrics")
    )
    assert pd.notna(table.loc["mockllm/a [variant=paper]", ("AtAvg", "l1")])  # rows line up across settings
    assert "mockllm/a" not in table.index and "mockllm/b" in table.index
    text = (tmp_path / "out" / "report.md").read_text()
    assert "mockllm/a: 2 runs of l2 differ in variant" in text


def test_runs_differing_in_max_tokens_or_epochs_are_separate_rows(tmp_path):
    _run(tmp_path / "logs", "a", ANSWERS["a"], "l2", max_tokens=64)
    _run(tmp_path / "logs", "a", ANSWERS["a"], "l2", max_tokens=128)
    _run(tmp_path / "logs", "a", ANSWERS["a"], "l2", max_tokens=128, epochs=2)
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 0
    table = _table3(tmp_path / "out")
    assert sorted(table.index) == [
        "Overall", "mockllm/a [epochs=1, max_tokens=128]", "mockllm/a [epochs=1, max_tokens=64]",
        "mockllm/a [epochs=2, max_tokens=128]",
    ]  # fmt: skip


# -- item 4: coverage --


def test_coverage_counts_errored_unjudged_and_empty_samples_and_marks_the_cell(tmp_path):
    def answer(messages):
        text = messages[-1].text
        if "marshmallows" in text:  # one sample of six
            raise RuntimeError("server went away")
        return "" if "splashing" in text else "They all went fishing at dawn."  # another

    log = eval(infill_task("l2", data="demo", domain="sind", backbone="minilm", judge=True),
               model=_model("a", answer), model_roles={"grader": _grader(fail_on="meteorite")},
               log_dir=str(tmp_path / "logs"), display="none", fail_on_error=False)[0]  # fmt: skip
    assert log.status == "success"
    errored = sum(1 for s in log.samples if s.error)
    empty = sum(1 for s in log.samples if not s.error and s.scores["metrics"].answer == "")
    assert errored == 1 and empty == 1
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 0
    cells = pd.read_csv(tmp_path / "out" / "coverage_by_cell.csv", index_col=[0, 1])
    cell = cells.loc[("mockllm/a", "l2")]
    assert cell["samples"] == 6 and cell["errored"] == errored
    assert cell["metrics_scored"] == 6 - errored and cell["empty_answers_scored_0"] == empty
    judged = 6 - errored - cell["grader_failed"]
    assert cell["grader_failed"] == 2 and cell["judge_scored"] == judged
    assert cell["coverage_pct"] == pytest.approx(100 * judged / 6)
    by_model = pd.read_csv(tmp_path / "out" / "coverage_by_model.csv", index_col=0)
    assert by_model.loc["mockllm/a", "errored"] == errored
    text = (tmp_path / "out" / "report.md").read_text()
    table3_section = text.split("## table3_model_by_level")[1].split("##")[0]
    assert MARK in table3_section and f"{errored} errored" in text
    table = _table3(tmp_path / "out")
    qavgs = [s.scores["judge"].value["qavg"] for s in log.samples if not s.error]
    scored = [q for q in qavgs if not math.isnan(q)]
    assert table.loc["mockllm/a", ("QAvg", "l2")] == pytest.approx(fmean(scored))  # no failure became a 0


# -- item 5: Table 2 with epochs --


def test_table2_with_epochs_joins_each_rating_with_its_epochs_judgement(tmp_path):
    grades = iter([1, 5, 2, 4, 3, 5, 2, 1, 4, 3, 5, 2] * 4)

    def reply(messages, tools, tool_choice, config):
        value = next(grades)
        return mock_output("{" + ", ".join(f'"{d.title()}": {value}' for d in DIMENSIONS) + "}")

    grader = get_model("mockllm/grader", custom_outputs=reply, memoize=False)
    [log] = eval(infill_task("l2", data="demo", domain="sind", backbone="minilm", judge=True),
                 model=_model("a", ANSWERS["a"]), model_roles={"grader": grader}, epochs=2,
                 log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    first = {str(s.id): s.scores["judge"].value["qavg"] for s in log.samples if s.epoch == 1}
    rows = [{"sample_id": sid, "annotator": a, **{d: round(q) for d in DIMENSIONS}}
            for sid, q in first.items() for a in ("A1", "A2")]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "human.csv", index=False)
    out = tmp_path / "out"
    assert (
        main(["report", str(tmp_path / "logs"), "-o", str(out), "--human", str(tmp_path / "human.csv")]) == 0
    )
    table2 = pd.read_csv(out / "table2_human_agreement.csv", index_col=0)
    assert table2.loc["fluency", "spearman_A1"] == pytest.approx(1.0)  # the epoch-1 judgements, exactly
    assert "same (sample, epoch)" in (out / "report.md").read_text()
