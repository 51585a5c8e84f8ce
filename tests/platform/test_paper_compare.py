"""``--compare-paper`` and the sensitivity table on frames made here (the load step's output shape)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from helpers import REPO

from narrative_infill.platform.analysis.report.paper_compare import NOT_COMPARABLE, compare_with_paper, paper_name
from narrative_infill.platform.analysis.report.paper_results import paper_results
from narrative_infill.platform.analysis.report.sensitivity import sensitivity_table
from narrative_infill.paper_protocol import BERTSCORE_LAYER, BERTSCORE_MODEL, SEMF1_MODEL
from narrative_infill.scorers.signature import MINILM_DISPLAY, BackboneSignature

LEXICAL = " | rouge1=rouge-score-0.1.2 | chrF2"


def _signature(bert: str, layer: int, semf1: str) -> str:
    """A rendered backbone signature, as the metrics scorer writes it."""
    return str(BackboneSignature(bert, layer, "0.3.13", "4.46", semf1, "128", "3.3")) + LEXICAL


MINILM = _signature(MINILM_DISPLAY, 6, MINILM_DISPLAY)
PAPER = _signature(BERTSCORE_MODEL, BERTSCORE_LAYER, SEMF1_MODEL)
MODELS = {  # log model -> its paper name
    "vllm/meta-llama/Llama-3.1-8B-Instruct": "LLaMA-3.1-8B",
    "vllm/google/gemma-2-2b-it": "Gemma-2-2B",
    "vllm/Qwen/Qwen2.5-14B-Instruct-1M": "Qwen-2.5-14B",
    "vllm/allenai/OLMo-2-1124-13B-Instruct": "Olmo-2-13B",
}


def _paper(setting: str, model: str) -> float:
    cells = paper_results("table3")
    return cells[(cells["setting"] == setting) & (cells["row"] == model) & (cells["column"] == "atavg")][
        "value"
    ].item()


def _frame(backbones: str = MINILM, empty_model: str | None = None) -> pd.DataFrame:
    """Four paper models at L0 and L1, 8 problems each. ``ours`` ranks them as the paper does
    (the paper's AtAvg plus noise), ``published`` in reverse."""
    rows = []
    for setting in ("l0", "l1"):
        for model, name in MODELS.items():
            paper = _paper(setting, name)
            for problem in range(8):
                noise = 0.002 * ((problem % 3) - 1)
                empty = model == empty_model and problem < 4
                ours = 0.0 if empty else paper + noise
                published = 1.0 - paper + noise
                scores = {
                    "metrics": {
                        "signature": f"{backbones} | extraction=ours",
                        "status": "no_answer" if empty else "tagged",
                        "empty": empty,
                    },
                    "metrics1": {
                        "signature": f"{backbones} | extraction=published",
                        "status": "tagged",
                        "empty": False,
                    },
                }
                rows.append(
                    {
                        "model": model,
                        "setting": setting,
                        "input": f"problem {problem} ______ end.",
                        "metrics_scorings": json.dumps(scores),
                        "score_metrics": json.dumps(
                            {
                                "atavg": ours,
                                "rouge1": ours,
                                "bertscore": ours,
                                "meteor": ours,
                                "chrf": ours,
                                "semf1": ours,
                            }
                        ),
                        "score_metrics1": json.dumps(
                            {
                                "atavg": published,
                                "rouge1": published,
                                "bertscore": 0.5,
                                "meteor": 0.5,
                                "chrf": 0.5,
                                "semf1": 0.5,
                            }
                        ),
                    }
                )
    return pd.DataFrame(rows)


def test_paper_names_match_log_models_with_any_provider_prefix():
    names = sorted(set(paper_results("table3")["row"]) - {"Overall"})
    assert paper_name("google/gemma-2-2b-it", names) == "Gemma-2-2B"
    assert paper_name("hf/allenai/OLMo-2-1124-13B-Instruct", names) == "Olmo-2-13B"
    assert paper_name("mockllm/model", names) is None
    assert paper_name("google/gemma-2-2b-it-extra", names) is None


def test_rankings_per_level_and_scoring_with_tau_bounds():
    comparison = compare_with_paper(_frame())
    tau = comparison.tables["paper_tau_atavg"]
    for setting in ("l0", "l1"):
        assert tau.loc[("table3", setting), "tau ours"] == pytest.approx(1.0)
        assert tau.loc[("table3", setting), "tau published"] == pytest.approx(-1.0)
        low, high = (tau.loc[("table3", setting), f"{bound} ours"] for bound in ("tau_low", "tau_high"))
        assert low <= 1.0 <= high + 1e-9
    agreement = comparison.tables["paper_rank_agreement"].reset_index()
    row = agreement[
        (agreement["table"] == "table3") & (agreement["scoring"] == "ours") & (agreement["setting"] == "l0")
    ]
    assert (
        row["models"].item() == 4
        and row["instances"].item() == 8
        and row["spearman_rho"].item() == pytest.approx(1.0)
    )
    assert set(agreement["level"]) == {NOT_COMPARABLE}
    assert {"rouge1 ours", "rouge1 published"} <= set(comparison.tables["paper_tau_by_metric"].columns)


def test_side_by_side_difference_missing_rows_and_summary_lines():
    comparison = compare_with_paper(_frame())
    side = comparison.tables["paper_table3"]
    cell = side.loc[("l0", "Gemma-2-2B", "atavg")]
    assert cell["paper"] == _paper("l0", "Gemma-2-2B")
    assert cell[f"diff ours ({NOT_COMPARABLE})"] == pytest.approx(cell["ours"] - cell["paper"])
    missing = comparison.tables["paper_missing"].reset_index()
    table3 = missing[missing["table"] == "table3"]
    assert len(table3) == 2 * 16 and "Gemma-2-2B" not in set(table3["paper_model"])
    assert "l2" not in set(table3["setting"])  # a level the logs never ran is not a missing row
    [line] = [line for line in comparison.lines if line.startswith("**table3**")]
    assert "8 paper rows" in line and "32 missing" in line and NOT_COMPARABLE in line
    assert "paper_table5" in comparison.absent  # no reasoning runs


def test_the_papers_backbones_are_comparable_in_level():
    agreement = compare_with_paper(_frame(backbones=PAPER)).tables["paper_rank_agreement"]
    assert set(agreement["level"]) == {"paper backbones"}


def test_sensitivity_shows_a_rank_that_comes_from_not_answering():
    table = sensitivity_table(_frame(empty_model="vllm/google/gemma-2-2b-it"))
    row = table.loc[("ours", "l0", "vllm/google/gemma-2-2b-it")]
    paper = _paper("l0", "Gemma-2-2B")
    assert row["empty_pct"] == 50 and row["no_answer_pct"] == 50 and row["samples"] == 8
    assert row["atavg"] == pytest.approx(paper / 2, abs=0.002)
    assert row["atavg_nonempty"] == pytest.approx(paper, abs=0.002)
    assert table.loc[("published", "l0", "vllm/google/gemma-2-2b-it"), "empty_pct"] == 0
    overall = table.loc[("ours", "l0", "Overall")]
    assert overall["empty_pct"] == pytest.approx(50 / 4) and overall["samples"] == 32
    assert list(table.loc[("ours", "l0")].index)[-1] == "Overall"


def test_no_metric_scores_is_a_reason_not_a_table():
    from narrative_infill.platform.analysis.report.document import Absent

    assert sensitivity_table(pd.DataFrame({"model": [], "setting": []})) == Absent(
        "no automatic-metric scores in the logs"
    )


def test_the_tau_bounds_cover_the_true_tau_at_10_narratives():
    """Issue 61: the bootstrap's 2.5-97.5% range covered the true tau in 48-55% of draws at 10
    narratives (82-92% at 30) when models differed by about their noise, every miss below; its BCa
    form did little better (63%). The bounds from the Holm-ordered pairs must cover in >= 93% at the
    smallest size users run (benchmarks/tau_interval_coverage.py runs the full simulation)."""
    import importlib.util

    import numpy as np

    spec = importlib.util.spec_from_file_location("tau_coverage", REPO / "benchmarks" / "tau_interval_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    coverage = module.coverage
    share, width, estimate, true_tau = coverage(np.random.default_rng(47), 60, 8, 0.01, 10, 4)
    assert share >= 0.93 and estimate < true_tau  # the estimate is pulled low, the bounds still cover
    share, width, _, _ = coverage(np.random.default_rng(47), 30, 8, 0.05, 10, 4)
    assert share >= 0.93 and width < 1.5  # models well apart: the bounds narrow


@pytest.mark.heavy
def test_report_compare_paper_on_logs_scored_both_ways(tmp_path, capsys):
    """Three models named as the paper's, L1 and L2, scored with ours and then rescored with
    the published rule (``inspect score --action append``): the report keeps both apart."""
    from helpers import mock_output
    from inspect_ai import eval, score
    from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log
    from inspect_ai.model import get_model

    from narrative_infill.platform.cli import main
    from narrative_infill.scorers.metrics import metrics
    from narrative_infill.tasks import infill_task

    answers = {
        "google/gemma-2-2b-it": "",
        "google/gemma-2-9b-it": "They laughed.",
        "google/gemma-2-27b-it": "<think>x</think>They ran.",
    }
    logs = tmp_path / "logs"
    for name, answer in answers.items():
        for setting in ("l1", "l2"):
            eval(
                infill_task(setting, data="demo", domain="sind", n=1, backbone="minilm"),
                model=get_model(
                    f"mockllm/{name}",
                    custom_outputs=lambda m, t, c, g, a=answer: mock_output(a),
                    memoize=False,
                ),
                log_dir=str(logs),
                display="none",
            )
    for info in list_eval_logs(str(logs)):
        write_eval_log(
            score(
                read_eval_log(info.name),
                metrics(backbone="minilm", extraction="published"),
                action="append",
                display="none",
            ),
            info.name,
        )
    out = tmp_path / "report"
    assert main(["report", str(logs), "-o", str(out), "--compare-paper"]) == 0
    printed = capsys.readouterr().out
    assert (
        "Kendall tau of the AtAvg model ranking" in printed and "published" in printed and "ours" in printed
    )
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Comparison with the paper" in report and NOT_COMPARABLE in report
    assert "**table3**: 6 paper rows (setting x model) in the logs, 34 missing" in report
    sensitivity = pd.read_csv(out / "sensitivity_extraction.csv", index_col=[0, 1, 2])
    assert sensitivity.loc[("ours", "l1", "mockllm/google/gemma-2-2b-it"), "empty_pct"] == 100
    assert sensitivity.loc[("published", "l1", "mockllm/google/gemma-2-9b-it"), "empty_pct"] == 0
    side = pd.read_csv(out / "paper_table3.csv", index_col=[0, 1, 2])
    diffs = {f"diff {rule} ({NOT_COMPARABLE})" for rule in ("ours", "published")}
    assert {"paper", "ours", "published", *diffs} <= set(side.columns)


def test_two_log_models_matching_one_paper_model_are_not_averaged():
    frame = _frame()
    twin = frame[frame["model"] == "vllm/google/gemma-2-2b-it"].assign(model="hf/google/gemma-2-2b-it")
    comparison = compare_with_paper(pd.concat([frame, twin], ignore_index=True))
    assert "hf/google/gemma-2-2b-it" in comparison.absent["paper row Gemma-2-2B"]
    assert "Gemma-2-2B" not in set(comparison.tables["paper_table3"].index.get_level_values("paper_model"))
    assert comparison.tables["paper_rank_agreement"]["models"].max() == 3


def test_a_scoring_repeated_with_one_signature_counts_once_newest_first():
    """``inspect score --action append`` twice with the same options: one scoring, the newest."""
    scorings = {
        "metrics": {"signature": "old-backbones", "status": "tagged", "empty": False},
        "metrics1": {"signature": "old-backbones", "status": "tagged", "empty": False},
    }
    frame = pd.DataFrame(
        [
            {
                "model": "m",
                "setting": "l0",
                "input": "p ______ q.",
                "metrics_scorings": json.dumps(scorings),
                "score_metrics": json.dumps({"atavg": 0.1}),
                "score_metrics1": json.dumps({"atavg": 0.3}),
            }
        ]
    )
    table = sensitivity_table(frame)
    row = table.loc[("unrecorded", "l0", "m")]  # scored before the rule joined the signature
    assert row["samples"] == 1 and row["atavg"] == pytest.approx(0.3)


def _noisy_frame(rules: tuple[str, ...]) -> pd.DataFrame:
    """Four paper models at L0 and L1, 12 problems, values noisy enough that the bootstrap
    intervals are wide; every scoring in ``rules`` holds the same values."""
    import numpy as np

    rng = np.random.default_rng(7)
    rows = []
    for setting in ("l0", "l1"):
        for model, name in MODELS.items():
            for problem in range(12):
                value = _paper(setting, name) + rng.normal(0, 0.05)
                keys = ["metrics", *(f"metrics{k}" for k in range(1, len(rules)))]
                scorings = {
                    key: {"signature": f"{MINILM} | extraction={rule}", "status": "tagged", "empty": False}
                    for key, rule in zip(keys, rules)
                }
                values = json.dumps({"atavg": value, **{name: value for name in ("rouge1", "chrf")}})
                rows.append(
                    {"model": model, "setting": setting, "input": f"problem {problem} ______ end.",
                     "metrics_scorings": json.dumps(scorings), **{f"score_{key}": values for key in keys}}
                )  # fmt: skip
    return pd.DataFrame(rows)


def test_a_cells_tau_bounds_do_not_move_when_another_scoring_is_added():
    """Was one bootstrap generator per table, shared in group order: adding the published scoring
    shifted the intervals of ours. The bounds now come from tests, with no draws at all."""
    both = compare_with_paper(_noisy_frame(("ours", "published"))).tables["paper_rank_agreement"]
    alone = compare_with_paper(_noisy_frame(("ours",))).tables["paper_rank_agreement"]
    bounds = ["tau_low", "tau_high"]
    ours = both.xs("ours", level="scoring")[bounds]
    assert ours.equals(alone.xs("ours", level="scoring")[bounds])
    assert ours.equals(both.xs("published", level="scoring")[bounds])
    assert (ours["tau_low"] < ours["tau_high"]).any()  # the intervals are not degenerate
    assert "rho_low" not in both  # no interval is claimed for rho


def test_a_difference_across_backbones_is_labelled_not_comparable_in_level():
    minilm = compare_with_paper(_frame()).tables["paper_table3"]
    assert f"diff ours ({NOT_COMPARABLE})" in minilm.columns and "diff ours" not in minilm.columns
    paper = compare_with_paper(_frame(backbones=PAPER)).tables["paper_table3"]
    assert "diff ours" in paper.columns


def test_a_scoring_without_a_signature_is_reported_not_dropped():
    """A metrics score with no ``metrics_signature`` (a log older than signatures) was labelled
    NaN and vanished from the sensitivity table and the comparison; it is ``unrecorded``, apart
    from a signature that lacks only the extraction rule."""
    scorings = {
        "metrics": {"signature": None, "status": "tagged", "empty": False},
        "metrics1": {"signature": "old-backbones", "status": "tagged", "empty": False},
    }
    frame = pd.DataFrame(
        [
            {
                "model": "m",
                "setting": "l0",
                "input": f"p{problem} ______ q.",
                "metrics_scorings": json.dumps(scorings),
                "score_metrics": json.dumps({"atavg": 0.1}),
                "score_metrics1": json.dumps({"atavg": 0.3}),
            }
            for problem in range(2)
        ]
    )
    table = sensitivity_table(frame)
    assert table.xs("m", level="model")["samples"].sum() == 4
    assert set(table.index.get_level_values(0)) == {"unrecorded", "unrecorded#2"}  # never pooled


@pytest.mark.parametrize(
    ("judge_models", "comparable"),
    [
        ("grader=openai/gpt-4.1-mini", True),
        ("grader=azure/openai/gpt-4.1-mini-2025-04-14 | extraction=published", True),
        ("grader=hf/HuggingFaceTB/SmolLM2-1.7B-Instruct", False),
        ("grader=openai/gpt-4.1-mini-large", False),
        ("a=openai/gpt-4.1-mini, b=google/gemini-2.5-flash-lite", False),  # a panel is not the paper's judge
    ],
)
def test_a_judge_other_than_the_papers_is_not_comparable_in_level(judge_models, comparable):
    """Was labelled ``judge`` whatever judged, its QAvg difference a bare 'diff judge'."""
    frame = _frame(backbones=PAPER)
    frame = frame.assign(
        qavg=[3.0 + 0.1 * list(MODELS).index(m) for m in frame["model"]], judge_models=judge_models
    )
    comparison = compare_with_paper(frame)
    agreement = comparison.tables["paper_rank_agreement"].reset_index()
    agreement = agreement[agreement["scoring"].str.startswith("judge")]
    assert set(agreement["level"]) == ({"paper judge"} if comparable else {NOT_COMPARABLE})
    side = comparison.tables["paper_table3"]
    judge = "judge published" if "extraction=published" in judge_models else "judge"
    assert (f"diff {judge}" in side.columns) == comparable
    assert (f"diff {judge} ({NOT_COMPARABLE})" in side.columns) == (not comparable)
    [line] = [line for line in comparison.lines if line.startswith("**table3**")]
    assert ("judge scores not comparable" in line) == (not comparable)


def test_judge_scores_of_the_published_extraction_are_labelled_so():
    """Were labelled ``judge`` whichever extraction the judge read, beside ``ours``/``published``."""
    frame = _frame(backbones=PAPER).assign(
        qavg=3.5, judge_models="grader=openai/gpt-4.1-mini | extraction=published"
    )
    agreement = compare_with_paper(frame).tables["paper_rank_agreement"]
    assert "judge published" in set(agreement.index.get_level_values("scoring"))
    assert set(agreement.xs("judge published", level="scoring")["level"]) == {"paper judge"}
