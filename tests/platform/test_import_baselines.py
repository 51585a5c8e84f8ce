"""``narrative-infill import --baselines``: the null baselines answer the imported instances (the same
problems and golds, in each setting), so the report can set the imported models beside them."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import write_jsonl
from input_records import OTHER, STORY, rows
from inspect_ai.log import read_eval_log

from narrative_infill.data.baselines import BASELINES, ORDER_FREE, context_answer
from narrative_infill.platform.analysis.floor import ABOVE, IN_FLOOR, NOT_ABOVE, REUSE_RULE
from narrative_infill.platform.analysis.importer import import_generations
from narrative_infill.platform.analysis.report.baselines import MARK, is_baseline
from narrative_infill.platform.cli import main


def logs_by_model(locations):
    logs = [read_eval_log(location) for location in locations]
    return {(log.eval.model, log.eval.task.split("/")[-1]): log for log in logs}


def test_each_baseline_answers_each_imported_instance_once_in_the_prompts_format(tmp_path):
    source = write_jsonl(tmp_path / "gen.jsonl", rows())
    logs = logs_by_model(import_generations([source], str(tmp_path / "logs"), baselines=["context", "gold"]))
    assert set(logs) == {
        ("replay/m/good", "l2"), ("replay/m/weak", "l2"), ("replay/m/good", "l0"),
        ("baseline/context", "l2"), ("baseline/context", "l0"), ("baseline/gold", "l2"), ("baseline/gold", "l0"),
    }  # fmt: skip
    context = logs[("baseline/context", "l2")]
    answers = {sample.input: sample.output.completion for sample in context.samples}
    # one sample per distinct instance (two models answered each), tagged as the L2 prompt asks
    assert answers == {p: f"<ANSWER>{context_answer(p)}</ANSWER>" for p in (STORY, OTHER)}
    [bare] = logs[("baseline/context", "l0")].samples
    assert bare.output.completion == context_answer(STORY)  # L0's prompt asks for no tags
    golds = {s.input: s.output.completion for s in logs[("baseline/gold", "l2")].samples}
    assert golds[STORY] == "<ANSWER>She took it home and fed it.</ANSWER>"
    assert all(s.metadata["n"] == 1 for s in context.samples)  # the gold's sentence count


def test_a_files_model_named_like_a_baseline_is_not_taken_for_one(tmp_path):
    """Only the package's own baseline rows name a log baseline/<rule>; a file's field cannot."""
    forged = [{**r, "model": "baseline/context"} for r in rows()[:2]]
    locations = import_generations([write_jsonl(tmp_path / "gen.jsonl", forged)], str(tmp_path / "logs"))
    [log] = [read_eval_log(location) for location in locations]
    assert log.eval.model == "replay/baseline/context" and not is_baseline(log.eval.model)


def test_an_instance_asked_for_in_two_formats_is_answered_in_each(tmp_path):
    """Found by the attack pass: the first row's prompt decided the format for every row of the instance."""
    tagged, bare = (
        rows()[0],
        {**rows()[0], "model": "m/bare", "prompt_text": STORY + "\n\nFill in the blank."},
    )
    locations = import_generations([write_jsonl(tmp_path / "gen.jsonl", [tagged, bare])], str(tmp_path / "logs"),
                                   baselines=["context"])  # fmt: skip
    context = logs_by_model(locations)[("baseline/context", "l2")]
    assert sorted(s.output.completion for s in context.samples) == sorted(
        [context_answer(STORY), f"<ANSWER>{context_answer(STORY)}</ANSWER>"]
    )


def test_a_gold_of_invisible_characters_is_refused(tmp_path):
    from narrative_infill.platform.analysis.import_rows import ImportRowError

    source = write_jsonl(tmp_path / "gen.jsonl", [{**rows()[0], "gold_answer": "\u200b\u2060"}])
    with pytest.raises(ImportRowError, match="row 1.*gold_answer"):
        import_generations([source], str(tmp_path / "logs"), baselines=["neighbour"])


def test_extraction_without_score_is_refused(tmp_path, capsys):
    source = write_jsonl(tmp_path / "gen.jsonl", rows())
    assert main(["import", source, "-o", str(tmp_path / "logs"), "--extraction", "published"]) == 1
    assert "--extraction says how --score reads the answers" in capsys.readouterr().err
    assert not (tmp_path / "logs").exists()


@pytest.mark.heavy  # scores with a real embedding backbone (torch)
@pytest.mark.parametrize("extraction", ["ours", "published"])
def test_the_report_over_imported_outputs_and_every_null_rule_marks_each_run(tmp_path, extraction):
    """Import with --baselines (every rule), score, report, under both extractions: every null rule
    is marked, those rearranging the story flagged, the models marked against the floor."""
    source = write_jsonl(tmp_path / "gen.jsonl", rows())
    logs, out = tmp_path / "logs", tmp_path / "report"
    command = [
        "import",
        source,
        "-o",
        str(logs),
        "--baselines",
        "--score",
        "metrics",
        "--extraction",
        extraction,
    ]
    assert main(command) == 0
    assert main(["report", str(logs), "-o", str(out)]) == 0
    table = pd.read_csv(out / "baselines_vs_models.csv", index_col=["setting", "run"]).loc["l2"]
    assert {f"baseline/{rule}" for rule in BASELINES} <= set(table.index)
    # the rules that rearrange the whole story are flagged even on two short stories (the rules on
    # the neighbours alone are measured against the real models in test_null_rules_floor.py)
    for rule in ("scrambled-story", "sorted-story-words", "story-adjacent-words-swapped"):
        assert table.loc[f"baseline/{rule}", MARK] == REUSE_RULE, rule
    assert all(isinstance(table.loc[f"baseline/{rule}", MARK], str) for rule in ORDER_FREE)
    assert table.loc["baseline/empty", MARK] == IN_FLOOR and table.loc["baseline/gold", MARK] == "the ceiling"
    # marked against the story-reading floor by its paired difference (above it or not, as the test
    # on these two stories' few answers decides), never by the point means alone
    good = table.loc["m/good", MARK]
    assert good.startswith(ABOVE) or (good.startswith(NOT_ABOVE) and "difference +" in good), good
    copies = pd.read_csv(out / "copy_share_by_setting.csv", index_col=0)
    assert copies.loc["m/good", "l2"] == 0.0
    # the authors' extraction keeps a copy whole (the copy guard flags it); ours removes it (AtAvg 0)
    if extraction == "published":
        assert (
            copies.loc["baseline/context", "l2"] == 100.0 and table.loc["baseline/context", MARK] != IN_FLOOR
        )
    else:
        assert (
            table.loc["baseline/context", "AtAvg"] == 0.0 and table.loc["baseline/context", MARK] == IN_FLOOR
        )
