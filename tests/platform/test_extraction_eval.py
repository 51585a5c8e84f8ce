"""``extract-eval`` (``platform/analysis/extraction_eval.py``): extraction measured against labelled responses."""

import json
import os
import subprocess
import sys

import pytest

from narrative_infill.platform.analysis.extraction_eval import (
    downstream,
    extraction_rouge1,
    judge_rows,
    read_labelled,
    summary,
)
from narrative_infill.platform.cli import main

from helpers import SHARED

PROBLEM = "Mira loved to bake bread. ______ Mira hurried to the market and bought more flour."
ANNOTATED = SHARED / "data" / "extraction" / "annotated_dev.jsonl"


def test_extraction_rouge_protocol_for_empty_labels():
    assert extraction_rouge1("", "") == 1.0
    assert extraction_rouge1("text", "") == 0.0 and extraction_rouge1("", "text") == 0.0


def test_extract_eval_reports_the_figures_by_status_and_model(tmp_path, capsys):
    labelled = tmp_path / "labelled.jsonl"
    rows = [
        {
            "response": "<ANSWER>He was out of flour.</ANSWER>",
            "problem": PROBLEM,
            "expected": "He was out of flour.",
            "model": "m1",
        },
        {"response": "I'm sorry, I can't help with that.", "problem": PROBLEM, "expected": "", "model": "m2"},
        {"response": "Eggs, please.", "problem": PROBLEM, "expected": "He was out of flour.", "model": "m2"},
    ]
    labelled.write_text("\n".join(json.dumps(row) for row in rows))
    assert main(["extract-eval", str(labelled), "--errors"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "n=3  PMR=0.667  ROUGE-1=0.667  failure=0.333"
    assert "by status:" in out and "by model:" in out and "m2" in out
    assert "expected: 'He was out of flour.'" in out and "got:      'Eggs, please.'" in out


@pytest.mark.subprocess
@pytest.mark.shared
def test_extract_eval_stops_quietly_when_its_reader_goes_away():
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `narrative-infill extract-eval ... | head` once head has exited
    try:
        done = subprocess.run([sys.executable, "-m", "narrative_infill.platform.cli", "extract-eval", str(ANNOTATED), "--errors"],
                              stdout=write_end, stderr=subprocess.PIPE, timeout=120)  # fmt: skip
    finally:
        os.close(write_end)
    assert done.returncode == 141 and b"Traceback" not in done.stderr


def test_extract_eval_names_the_bad_line(tmp_path, capsys):
    labelled = tmp_path / "bad.jsonl"
    labelled.write_text('{"response": "x", "problem": "p ______"}\n')
    assert main(["extract-eval", str(labelled)]) == 1
    assert "bad.jsonl:1: field 'expected'" in capsys.readouterr().err


@pytest.mark.shared
def test_agreement_with_the_authors_annotations_does_not_regress():
    figures = summary(judge_rows(read_labelled(ANNOTATED)))
    # Measured 0.885 / 0.938 / 0.050 (0.880 / 0.930 / 0.055 a stop earlier); the first version reached 0.42 PMR.
    assert figures["pmr"] >= 0.885 and figures["rouge1"] >= 0.935 and figures["failure"] <= 0.05


def _row(model, response, expected, gold="He was out of flour."):
    return {
        "response": response,
        "problem": PROBLEM,
        "expected": expected,
        "model": model,
        "gold_answer": gold,
        "_line": 1,
    }


def test_downstream_figure_compares_model_rankings_on_extracted_and_annotated_text():
    rows = [
        _row("good", "<ANSWER>He was out of flour.</ANSWER>", "He was out of flour."),
        _row("fair", "<ANSWER>He wanted flour.</ANSWER>", "He wanted flour."),
        _row("poor", "<ANSWER>Eggs.</ANSWER>", "Eggs."),
    ]
    figures = downstream(judge_rows(rows))
    assert figures["rouge1"]["kendall_tau"] == 1.0 and figures["rouge1"]["mean_difference"] == 0.0
    # The extraction misses "good"'s answer (labelled by hand): that model drops to the bottom.
    rows[0] = _row("good", "I'm sorry, I can't help with that.", "He was out of flour.")
    figures = downstream(judge_rows(rows))
    assert figures["rouge1"]["mean_difference"] == pytest.approx(-1 / 3)
    assert figures["chrf"]["kendall_tau"] == pytest.approx(-1 / 3) and figures["chrf"]["models"] == 3


@pytest.mark.shared
def test_downstream_figure_on_the_dev_annotations_is_printed(capsys):
    assert main(["extract-eval", str(ANNOTATED)]) == 0
    out = capsys.readouterr().out
    assert "downstream" in out and "Kendall tau of the rankings" in out
    figures = downstream(judge_rows(read_labelled(ANNOTATED)))
    # Measured (in-sample: the rules were tuned on these rows): ROUGE-1 tau 0.863, chrF tau 0.832.
    assert figures["rouge1"]["kendall_tau"] >= 0.8 and figures["rouge1"]["mean_abs_difference"] <= 0.02
