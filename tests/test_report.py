"""The report's tables against hand computations on logs made here with known outputs."""

import math
from statistics import fmean

import pandas as pd
import pytest
from inspect_ai import eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model

from narrative_infill.cli import main
from narrative_infill.analysis.report import DIMENSIONS
from narrative_infill.tasks import infill_task

from helpers import mock_model, mock_output

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)

ANSWERS = {"alpha": "They all went fishing at dawn.", "beta": "Everyone swam in the cold lake.", "gamma": "Nothing."}
GRADES = {"fishing": (5, 5, 5, 5, 4), "swam": (3, 3, 4, 3, 3), "Nothing": (1, 2, 1, 1, 2)}


def grade(messages, tools, tool_choice, config):
    candidate = messages[-1].text.split("CANDIDATE INFILL:")[1]
    scores = next(values for word, values in GRADES.items() if word in candidate)
    keys = ("Fluency", "Context_Faithfulness", "Bidirectional_Coherence", "Narrative_Consistency", "Informativeness")
    return mock_output("{" + ", ".join(f'"{k}": {v}' for k, v in zip(keys, scores)) + "}")


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("report-logs")
    grader = get_model("mockllm/grader", custom_outputs=grade, memoize=False)
    for name, answer in ANSWERS.items():
        model = get_model(f"mockllm/{name}", custom_outputs=lambda m, t, c, g, a=answer: mock_output(f"<ANSWER>{a}</ANSWER>"), memoize=False)
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
            assert table.loc[model, ("AtAvg", level)] == pytest.approx(fmean(r["atavg"] for r in cell), abs=1e-9)
            assert table.loc[model, ("QAvg", level)] == pytest.approx(fmean(r["qavg"] for r in cell), abs=1e-9)
    overall = fmean(fmean(r["qavg"] for r in rows if r["model"] == m and r["setting"] == "l1") for m in {r["model"] for r in rows})
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
    from scipy.stats import kendalltau

    kendall = pd.read_csv(report_dir / "table4_kendall.csv", index_col=[0, 1])
    models = sorted({r["model"] for r in rows})
    atavg = [fmean(r["atavg"] for r in rows if r["model"] == m) for m in models]
    qavg = [fmean(r["qavg"] for r in rows if r["model"] == m) for m in models]
    assert kendall.loc[("atavg", "qavg"), "system_tau"] == pytest.approx(kendalltau(atavg, qavg).statistic)


def test_report_md_lists_what_is_absent_and_draws_figure2(report_dir):
    text = (report_dir / "report.md").read_text()
    assert "## table3_model_by_level" in text and "figure2_high_by_model.png" in text
    assert (report_dir / "figure2_high_by_model.png").stat().st_size > 1000
    assert "**table13_seed_robustness**: no task and model was run more than once" in text
    assert "**table2_human_agreement**: no --human CSV" in text
    assert not any(math.isnan(v) for v in pd.read_csv(report_dir / "table6_quality_by_setting.csv", index_col=0)["QAvg"])


def test_logs_without_judge_give_atavg_only_tables(tmp_path):
    eval(infill_task("l2", data="demo", domain="sind", backbone="minilm"), model=mock_model(lambda m, c: "They swam."),
         log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    assert main(["report", str(tmp_path / "logs"), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert "No judge scores in these logs" in text and "**table6_quality_by_setting**: no judge scores" in text
    table = pd.read_csv(tmp_path / "out" / "table3_model_by_level.csv", header=[0, 1], index_col=0)
    assert list(table.columns.get_level_values(0).unique()) == ["AtAvg"]


def test_human_agreement_from_ratings(log_dir, tmp_path, report_dir):
    from sklearn.metrics import cohen_kappa_score

    log = read_eval_log(str(sorted(log_dir.glob("*.eval"))[0]))
    ids = [s.id for s in log.samples]
    ratings = []
    for i, sample_id in enumerate(ids):
        model, setting = log.eval.model, log.eval.metadata["template"]
        ratings.append({"model": model, "setting": setting, "sample_id": sample_id, "annotator": "A1", **{d: 1 + (i % 5) for d in DIMENSIONS}})
        ratings.append({"model": model, "setting": setting, "sample_id": sample_id, "annotator": "A2", **{d: 1 + ((i + (i % 2)) % 5) for d in DIMENSIONS}})
    pd.DataFrame(ratings).to_csv(tmp_path / "human.csv", index=False)
    assert main(["report", str(log_dir), "-o", str(tmp_path / "out"), "--human", str(tmp_path / "human.csv")]) == 0
    table = pd.read_csv(tmp_path / "out" / "table2_human_agreement.csv", index_col=0)
    a1 = [1 + (i % 5) for i in range(len(ids))]
    a2 = [1 + ((i + (i % 2)) % 5) for i in range(len(ids))]
    assert table.loc["fluency", "cohen_kappa"] == pytest.approx(cohen_kappa_score(a1, a2))
    from scipy.stats import spearmanr

    judge = [s.scores["judge"].value["fluency"] for s in log.samples]
    expected = spearmanr(a1, judge).statistic
    assert (math.isnan(expected) and math.isnan(table.loc["fluency", "spearman_A1"])) or table.loc["fluency", "spearman_A1"] == pytest.approx(expected)


def test_paradigm_breakdown_length_table_and_sample_level_tau(log_dir, report_dir):
    rows = per_sample(log_dir)
    t5 = pd.read_csv(report_dir / "table5_model_by_paradigm.csv", header=[0, 1], index_col=0)
    cell = [r["atavg"] for r in rows if r["model"] == "mockllm/beta" and r["setting"] == "cot"]
    assert t5.loc["mockllm/beta", ("AtAvg", "cot")] == pytest.approx(fmean(cell))
    breakdown = pd.read_csv(report_dir / "table10_11_breakdown.csv", index_col=[0, 1])
    cell = [r["rouge1"] for r in rows if r["model"] == "mockllm/alpha" and r["setting"] == "l2"]
    assert breakdown.loc[("l2", "mockllm/alpha"), "rouge1"] == pytest.approx(fmean(cell))
    t8 = pd.read_csv(report_dir / "table8_low_by_length_position_n.csv", header=[0, 1, 2], index_col=0)
    # Every demo SIND story has 5 sentences: one "short" bucket; gamma (QAvg 1.4) is the only Low.
    for column in t8.columns:
        assert t8.loc["short (<=5)", column] == pytest.approx(100 / 3)
    kendall = pd.read_csv(report_dir / "table4_kendall.csv", index_col=[0, 1])
    from scipy.stats import kendalltau

    by_problem = {}
    for path in sorted(log_dir.glob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples:
            by_problem.setdefault(sample.input, []).append((sample.scores["metrics"].value["chrf"], sample.scores["judge"].value["fluency"]))
    taus = [kendalltau(*zip(*pairs)).statistic for pairs in by_problem.values()]
    assert kendall.loc[("chrf", "fluency"), "sample_tau"] == pytest.approx(fmean(t for t in taus if not math.isnan(t)))


def test_seed_robustness_and_judge_panel_tables(tmp_path):
    panel = {"grader": get_model("mockllm/judge-a", custom_outputs=grade, memoize=False),
             "grader2": get_model("mockllm/judge-b", custom_outputs=lambda *a: mock_output(
                 '{"Fluency": 2, "Context_Faithfulness": 2, "Bidirectional_Coherence": 2, "Narrative_Consistency": 2, "Informativeness": 2}'),
                 memoize=False)}  # fmt: skip
    answers = iter([f"<ANSWER>{a}</ANSWER>" for a in ["They all went fishing at dawn.", "Nothing."] * 6 + ["Everyone swam in the cold lake."] * 12])
    task = infill_task("l2", data="demo", domain="sind", backbone="minilm", judge=True, judge_roles=["grader", "grader2"])
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
    assert t14.iloc[0]["qavg_grader"] == pytest.approx(fmean(s.scores["judge"].value["qavg_grader"] for s in log.samples))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rows: rows[1].update(fluency=3.5), "row 2: 'fluency' must be an integer from 1 to 5, got 3.5"),
        (lambda rows: rows[0].update(informativeness=6), "row 1: 'informativeness' must be an integer from 1 to 5, got 6"),
        (lambda rows: rows.append(dict(rows[0])), "row 3: a second rating of the same sample by the same annotator"),
        (lambda rows: [row.pop("annotator") for row in rows], "missing column(s) annotator"),
    ],
)
def test_bad_human_ratings_are_refused_with_their_row(log_dir, tmp_path, capsys, edit, message):
    rows = [{"sample_id": "s1", "annotator": a, **{d: 3 for d in DIMENSIONS}} for a in ("A1", "A2")]
    edit(rows)
    pd.DataFrame(rows).to_csv(tmp_path / "human.csv", index=False)
    assert main(["report", str(log_dir), "-o", str(tmp_path / "out"), "--human", str(tmp_path / "human.csv")]) == 1
    assert message in capsys.readouterr().err
