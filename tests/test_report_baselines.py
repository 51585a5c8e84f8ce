"""The report over baseline logs: the baselines table, models marked below the context baseline,
and each run's copy share."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import mock_output
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.analysis.report.baselines import NOT_ABOVE
from narrative_infill.cli import main
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)

#: a weak answer, and one that copies the story's opening sentence of each sind story
WEAK = "Nothing happened."


def _run(model, directory, domain="sind"):
    task = infill_task("l2", data="demo", domain=domain, backbone="minilm", extraction="published")
    eval(task, model=model, log_dir=str(directory), display="none")


def test_the_report_shows_the_baselines_and_marks_models_not_above_the_context_baseline(tmp_path):
    logs, out = tmp_path / "logs", tmp_path / "report"
    weak = get_model("mockllm/weak", custom_outputs=lambda *_: mock_output(f"<ANSWER>{WEAK}</ANSWER>"))
    for model in (weak, "baseline/context", "baseline/empty"):
        _run(model, logs)
    assert main(["report", str(logs), "-o", str(out)]) == 0
    table = pd.read_csv(out / "baselines_vs_models.csv", index_col=["setting", "run"])
    context = table.loc[("l2", "baseline/context")]
    assert bool(context["baseline"]) and context["AtAvg"] > table.loc[("l2", "mockllm/weak"), "AtAvg"]
    assert table.loc[("l2", "mockllm/weak"), "vs context"] == NOT_ABOVE
    same_instances = table.loc[("l2", "mockllm/weak"), "context AtAvg (same instances)"]
    assert same_instances == pytest.approx(context["AtAvg"])
    copies = pd.read_csv(out / "copy_share_by_setting.csv", index_col=0)
    assert copies.loc["baseline/context", "l2"] == 100.0 and copies.loc["mockllm/weak", "l2"] == 0.0
    text = (out / "report.md").read_text()
    assert "## baselines_vs_models" in text and NOT_ABOVE in text and "## copy_share_by_setting" in text
    # the paper's tables are of models: a baseline in Table 3 moved its Overall row
    table3 = pd.read_csv(out / "table3_model_by_level.csv", index_col=0)
    assert not [row for row in table3.index if row.startswith("baseline/")]
    weak_atavg = table.loc[("l2", "mockllm/weak"), "AtAvg"]
    assert float(table3.loc["Overall"].filter(like="AtAvg").iloc[0]) == pytest.approx(weak_atavg, abs=1e-3)


def test_a_model_the_context_baseline_does_not_cover_is_not_compared(tmp_path):
    logs, out = tmp_path / "logs", tmp_path / "report"
    weak = get_model("mockllm/weak", custom_outputs=lambda *_: mock_output(f"<ANSWER>{WEAK}</ANSWER>"))
    _run(weak, logs, domain="roc")
    _run("baseline/context", logs)  # other instances (sind)
    assert main(["report", str(logs), "-o", str(out)]) == 0
    table = pd.read_csv(out / "baselines_vs_models.csv", index_col=["setting", "run"])
    assert table.loc[("l2", "mockllm/weak"), "vs context"].startswith("no context baseline for 6 of 6")
