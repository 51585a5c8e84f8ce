"""The report's tables against hand computations on logs made here with known outputs."""

import math
from statistics import fmean

import pandas as pd
import pytest
from inspect_ai import eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model

from narrative_infill.platform.cli import main
from narrative_infill.platform.analysis.report import DIMENSIONS
from narrative_infill.tasks import infill_task

from helpers import mock_model, mock_output
from submission_runs import small_demo_run

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)

ANSWERS = {
    "alpha": "They all went fishing at dawn.",
    "beta": "Everyone swam in the cold lake.",
    "gamma": "Nothing.",
}
GRADES = {"fishing": (5, 5, 5, 5, 4), "swam": (3, 3, 4, 3, 3), "Nothing": (1, 2, 1, 1, 2)}


def grade(messages, tools, tool_choice, config):
    candidate = messages[-1].text.split("<candidate_infill>")[-1].split("</candidate_infill>")[0]
    scores = next(values for word, values in GRADES.items() if word in candidate)
    keys = (
        "Fluency",
        "Context_Faithfulness",
        "Bidirectional_Coherence",
        "Narrative_Consistency",
        "Informativeness",
    )
    return mock_output("{" + ", ".join(f'"{k}": {v}' for k, v in zip(keys, scores)) + "}")


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("report-logs")
    grader = get_model("mockllm/grader", custom_outputs=grade, memoize=False)
    for name, answer in ANSWERS.items():
        model = get_model(
            f"mockllm/{name}",
            custom_outputs=lambda m, t, c, g, a=answer: mock_output(f"<ANSWER>{a}</ANSWER>"),
            memoize=False,
        )
        for template in ("l1", "l2", "cot"):
            eval(infill_task(template, data="demo", domain="sind", backbone="minilm", judge=True), model=model,
                 model_roles={"grader": grader}, log_dir=str(directory), display="none")  # fmt: skip
    return directory


@pytest.fixture(scope="module")
def report_dir(log_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    assert main(["report", str(log_dir), "-o", str(out)]) == 0
    return out


def per_sample(log_dir):
    """The hand computation's input: every sample's scores, read with the plain log API."""
    rows = []
    for path in sorted(log_dir.glob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples:
            metrics, judge = sample.scores["metrics"].value, sample.scores["judge"].value
            rows.append({"model": log.eval.model, "setting": log.eval.metadata["template"], "position": sample.metadata["position"],
                         "atavg": metrics["atavg"], "rouge1": metrics["rouge1"], "qavg": judge["qavg"],
                         **{d: judge[d] for d in DIMENSIONS}})  # fmt: skip
    return rows


def test_table3_model_by_level_matches_hand_means(log_dir, report_dir):
    rows = per_sample(log_dir)
    table = pd.read_csv(report_dir / "table3_model_by_level.csv", header=[0, 1], index_col=0)
    for model in ("mockllm/alpha", "mockllm/beta", "mockllm/gamma"):
        for level in ("l1", "l2"):
            cell = [r for r in rows if r["model"] == model and r["setting"] == level]
            assert table.loc[model, ("AtAvg", level)] == pytest.approx(
                fmean(r["atavg"] for r in cell), abs=1e-9
            )
            assert table.loc[model, ("QAvg", level)] == pytest.approx(
                fmean(r["qavg"] for r in cell), abs=1e-9
            )
    overall = fmean(
        fmean(r["qavg"] for r in rows if r["model"] == m and r["setting"] == "l1")
        for m in {r["model"] for r in rows}
    )
    assert table.loc["Overall", ("QAvg", "l1")] == pytest.approx(overall)
    assert "l0" not in table.columns.get_level_values(1)


def test_table6_high_and_low_shares(log_dir, report_dir):
    rows = per_sample(log_dir)
    table = pd.read_csv(report_dir / "table6_quality_by_setting.csv", index_col=0)
    for setting in ("l1", "l2", "cot"):
        cell = [r for r in rows if r["setting"] == setting]
        assert table.loc[setting, "High"] == pytest.approx(100 * fmean(r["qavg"] > 4 for r in cell))
        assert table.loc[setting, "Low"] == pytest.approx(100 * fmean(r["qavg"] < 2 for r in cell))
    assert table.loc["l1", "High"] == pytest.approx(100 / 3)  # alpha's QAvg is 4.8, beta's 3.2, gamma's 1.4


def test_table7_contamination_and_kendall(log_dir, report_dir):
    rows = per_sample(log_dir)
    t7 = pd.read_csv(report_dir / "table7_position_by_setting.csv", header=[0, 1], index_col=0)
    for setting in ("l1", "cot"):
        for position in {r["position"] for r in rows}:
            cell = [r["qavg"] for r in rows if r["setting"] == setting and r["position"] == position]
            assert t7.loc[setting, ("QAvg", position)] == pytest.approx(fmean(cell))
    contamination = pd.read_csv(report_dir / "contamination_rouge1_ge_0.8.csv", index_col=0)
    for model in ("mockllm/alpha", "mockllm/gamma"):
        cell = [r["rouge1"] for r in rows if r["model"] == model]
        assert contamination.loc[model, "share"] == pytest.approx(100 * fmean(v >= 0.8 for v in cell))
    kendall = pd.read_csv(report_dir / "table4_kendall.csv", index_col=[0, 1])
    assert kendall.loc[("chrf", "fluency"), "settings"] == 3


#: Metric and judge agree on the l1 answers and disagree on the l2 ones: pooling the settings
#: and keeping them apart give different taus.
SETTING_ANSWERS = {
    ("m1", "l1"): "The kids spent the afternoon splashing in the shallow water, fishing.",
    ("m2", "l1"): "Everyone swam in the cold lake.",
    ("m3", "l1"): "Nothing.",
    ("m1", "l2"): "Nothing. The kids spent the afternoon splashing in the shallow water.",
    ("m2", "l2"): "Everyone swam.",
    ("m3", "l2"): "They all went fishing at dawn.",
}  # fmt: skip


def test_sample_level_tau_keeps_settings_apart(tmp_path):
    """Appendix A.2: per (setting, sample) across the models' outputs, never pooling settings."""
    from scipy.stats import kendalltau

    grader = get_model("mockllm/grader", custom_outputs=grade, memoize=False)
    for (name, setting), answer in SETTING_ANSWERS.items():
        model = get_model(
            f"mockllm/{name}",
            custom_outputs=lambda m, t, c, g, a=answer: mock_output(f"<ANSWER>{a}</ANSWER>"),
            memoize=False,
        )
        eval(infill_task(setting, data="demo", domain="sind", n=1, backbone="minilm", judge=True), model=model,
             model_roles={"grader": grader}, log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 0
    per_setting, pooled = {}, {}
    for path in sorted((tmp_path / "logs").glob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples:
            pair = (sample.scores["metrics"].value["chrf"], sample.scores["judge"].value["qavg"])
            per_setting.setdefault((log.eval.metadata["template"], sample.id), []).append(pair)
            pooled.setdefault(sample.input, []).append(pair)  # what earlier releases did
    expected = fmean(
        t for t in (kendalltau(*zip(*p)).statistic for p in per_setting.values()) if not math.isnan(t)
    )
    wrong = fmean(t for t in (kendalltau(*zip(*p)).statistic for p in pooled.values()) if not math.isnan(t))
    kendall = pd.read_csv(tmp_path / "out" / "table4_kendall.csv", index_col=[0, 1])
    assert kendall.loc[("chrf", "qavg"), "sample_tau"] == pytest.approx(expected)
    assert abs(expected - wrong) > 0.01  # 0.333 per setting vs 0.298 pooled
    by_setting = pd.read_csv(tmp_path / "out" / "table4_kendall_by_setting.csv", index_col=[0, 1, 2])
    for setting in ("l1", "l2"):
        means = {}
        for (name, s), _ in SETTING_ANSWERS.items():
            if s == setting:
                [log] = [
                    read_eval_log(str(p))
                    for p in (tmp_path / "logs").glob("*.eval")
                    if read_eval_log(str(p), header_only=True).eval.model == f"mockllm/{name}"
                    and read_eval_log(str(p), header_only=True).eval.metadata["template"] == setting
                ]
                means[name] = (
                    fmean(x.scores["metrics"].value["chrf"] for x in log.samples),
                    fmean(x.scores["judge"].value["qavg"] for x in log.samples),
                )
        system = kendalltau(*zip(*means.values())).statistic
        assert by_setting.loc[(setting, "chrf", "qavg"), "system_tau"] == pytest.approx(system)


def test_seed_robustness_and_judge_panel_tables(tmp_path):
    panel = {"grader": get_model("mockllm/judge-a", custom_outputs=grade, memoize=False),
             "grader2": get_model("mockllm/judge-b", custom_outputs=lambda *a: mock_output(
                 '{"Fluency": 2, "Context_Faithfulness": 2, "Bidirectional_Coherence": 2, "Narrative_Consistency": 2, "Informativeness": 2}'),
                 memoize=False)}  # fmt: skip
    answers = iter(
        [
            f"<ANSWER>{a}</ANSWER>"
            for a in ["They all went fishing at dawn.", "Nothing."] * 6
            + ["Everyone swam in the cold lake."] * 12
        ]
    )
    task = infill_task(
        "l2", data="demo", domain="sind", backbone="minilm", judge=True, judge_roles=["grader", "grader2"]
    )
    [log] = eval(task, model=mock_model(lambda m, c: next(answers)), model_roles=panel, epochs=2,
                 log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 0
    by_epoch = {}
    for sample in log.samples:
        by_epoch.setdefault(sample.epoch, []).append(sample.scores["judge"].value["qavg"])
    epoch_means = [fmean(values) for _, values in sorted(by_epoch.items())]
    t13 = pd.read_csv(tmp_path / "out" / "table13_seed_robustness.csv", index_col=[0, 1])
    row = t13.iloc[0]
    assert row["runs"] == 2 and row["QAvg_mean"] == pytest.approx(fmean(epoch_means))
    assert row["QAvg_sd"] == pytest.approx(pd.Series(epoch_means).std())
    t14 = pd.read_csv(tmp_path / "out" / "table14_judge_sensitivity.csv", index_col=[0, 1])
    assert t14.iloc[0]["qavg_grader2"] == pytest.approx(2.0)
    assert t14.iloc[0]["qavg_grader"] == pytest.approx(
        fmean(s.scores["judge"].value["qavg_grader"] for s in log.samples)
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda rows: rows[1].update(fluency=3.5),
            "row 2: 'fluency' must be an integer from 1 to 5, got 3.5",
        ),
        (
            lambda rows: rows[0].update(informativeness=6),
            "row 1: 'informativeness' must be an integer from 1 to 5, got 6",
        ),
        (
            lambda rows: rows.append(dict(rows[0])),
            "row 3: a second rating of the same sample by the same annotator",
        ),
        (lambda rows: [row.pop("annotator") for row in rows], "missing column(s) annotator"),
    ],
)
def test_bad_human_ratings_are_refused_with_their_row(log_dir, tmp_path, capsys, edit, message):
    rows = [{"sample_id": "s1", "annotator": a, **{d: 3 for d in DIMENSIONS}} for a in ("A1", "A2")]
    edit(rows)
    pd.DataFrame(rows).to_csv(tmp_path / "human.csv", index=False)
    assert (
        main(["report", str(log_dir), "-o", str(tmp_path / "out"), "--human", str(tmp_path / "human.csv")])
        == 1
    )
    assert message in capsys.readouterr().err


def test_a_retried_run_counts_once_and_its_error_log_is_set_aside(tmp_path):
    def flaky(messages):
        if "museum" in messages[-1].text:
            raise RuntimeError("server went away")
        return "<ANSWER>They all went fishing at dawn.</ANSWER>"

    failed = small_demo_run(tmp_path / "logs", flaky, max_samples=1)
    assert failed.status == "error" and 0 < len([s for s in failed.samples if not s.error]) < 6
    retried = small_demo_run(tmp_path / "logs", lambda m: "<ANSWER>They all went fishing at dawn.</ANSWER>")
    assert retried.status == "success"
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert f"{len(retried.samples)} samples from 1 logs" in text and "1 log(s) set aside" in text


def test_an_unfinished_run_is_listed_as_absent_with_its_counts(tmp_path):
    small_demo_run(tmp_path / "logs", lambda m: "<ANSWER>They swam.</ANSWER>", name="done")
    small_demo_run(
        tmp_path / "logs",
        lambda m: (_ for _ in ()).throw(RuntimeError("down")) if "museum" in m[-1].text else "x",
        name="broken",
    )
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert "mockllm/broken**: no successful log (1 log(s), the latest error:" in text and "eval-retry" in text
    assert "of 6 samples)" in text


def test_the_newest_scores_of_a_scorer_are_reported(tmp_path):
    from inspect_ai import score
    from inspect_ai.log import write_eval_log

    from narrative_infill.scorers.metrics import metrics

    log = small_demo_run(tmp_path / "logs", lambda m: "<ANSWER>They all went fishing at dawn.</ANSWER>")
    for sample in log.samples:  # stale scores, as an earlier scoring would have left them
        sample.scores["metrics"].value = {**sample.scores["metrics"].value, "atavg": 0.0}
    write_eval_log(log, log.location)
    rescored = score(log, metrics(backbone="minilm"), action="append")
    write_eval_log(rescored, log.location)
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 0
    table = pd.read_csv(tmp_path / "out" / "table3_model_by_level.csv", header=[0, 1], index_col=0)
    newest = fmean(s.scores["metrics1"].value["atavg"] for s in rescored.samples)
    assert newest > 0 and table.loc["mockllm/model", ("AtAvg", "l2")] == pytest.approx(newest)


def test_runs_with_different_metric_signatures_are_refused_and_the_old_report_kept(tmp_path, capsys):
    from inspect_ai.log import write_eval_log

    small_demo_run(tmp_path / "logs", lambda m: "<ANSWER>They swam.</ANSWER>", name="a")
    other = small_demo_run(tmp_path / "logs", lambda m: "<ANSWER>They swam.</ANSWER>", name="b")
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 0
    before = (tmp_path / "out" / "report.md").read_text()
    for sample in other.samples:
        sample.scores["metrics"].metadata["metrics_signature"] = "bertscore=roberta-large:L17 | ..."
    write_eval_log(other, other.location)
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert (
        "2 different metric signatures" in err
        and "roberta-large" in err
        and other.location.split("/")[-1] in err
    )
    assert (tmp_path / "out" / "report.md").read_text() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []  # no partial folder left
