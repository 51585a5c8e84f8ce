"""The board's reference rows (the null baselines on the entries' own data, never the hub), each
entry's copy share and mark against the context baseline, the copy flag, and a page that fits."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import browser_page, mock_output
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.analysis.submission.reference import COPY_RULE, NOT_ABOVE, REFERENCE_RULES
from narrative_infill.cli import main
from narrative_infill.data.baselines import neighbour_answer
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone


def _problem(messages) -> str:
    """The problem of a paper-variant L2 prompt led by the system text."""
    return messages[-1].text.split("\n\n")[1]


def copier(messages, tools, tool_choice, config):
    """Two thirds of the sentence before the blank, then a word of its own: a copy the extraction keeps."""
    words = neighbour_answer(_problem(messages), 1).split()
    return mock_output(f"<ANSWER>{' '.join(words[: max(4, len(words) * 2 // 3)])} again.</ANSWER>")


def weak(messages, tools, tool_choice, config):
    return mock_output("<ANSWER>Nothing happened.</ANSWER>")


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A demo-track entry that copies; a custom-track entry run on the demo data (published extraction)."""
    root = tmp_path_factory.mktemp("board")
    for name, respond, track, extraction in (
        ("copier", copier, "demo", "ours"),
        ("weak", weak, "custom", "published"),
    ):
        model = get_model(f"mockllm/{name}", custom_outputs=respond, memoize=False)
        task = infill_task("l2", data="demo", backbone="minilm", judge=False, extraction=extraction)
        eval(task, model=model, log_dir=str(root / "logs" / name), display="none")
        out = root / "submissions" / f"{name}.json"
        assert main(["submit", str(root / "logs" / name), "-o", str(out), "--track", track]) == 0
    assert main(["leaderboard", str(root / "submissions"), "-o", str(root / "site")]) == 0
    return root


@pytest.fixture(scope="module")
def site(board):
    return board / "site"


def _rows(site) -> list[dict]:
    return json.loads((site / "leaderboard.json").read_text())["rows"]


def test_reference_rows_are_computed_on_the_entries_own_data_and_never_ranked(site):
    references = [r for r in _rows(site) if r["baseline"]]
    assert sorted((r["track"], r["model"]) for r in references) == sorted(
        (track, f"baseline/{rule}") for track in ("custom", "demo") for rule in REFERENCE_RULES
    )
    assert all("unavailable" not in r and "rank" not in r and r["n"] == 24 for r in references)
    assert all(r["atavg"][0] == 0.0 for r in references if r["model"] == "baseline/empty")


def test_an_entry_not_above_the_context_baseline_is_marked(site):
    rows = {(r["track"], r["model"]): r for r in _rows(site)}
    weak_row, context = rows[("custom", "mockllm/weak")], rows[("custom", "baseline/context")]
    assert context["atavg"][0] > weak_row["atavg"][0]
    assert weak_row["vs_context"] == NOT_ABOVE and weak_row["context_atavg"] == pytest.approx(
        context["atavg"][0]
    )
    markdown = (site / "leaderboard.md").read_text()
    assert "| copied% | vs context |" in markdown and NOT_ABOVE in markdown


def test_a_ranked_entry_above_the_copy_limit_is_flagged_and_not_ranked(site):
    rows = {(r["track"], r["model"]): r for r in _rows(site)}
    copied = rows[("demo", "mockllm/copier")]
    assert copied["copied"] == 1.0 and copied["copy_flag"] == COPY_RULE and "rank" not in copied
    assert (
        rows[("custom", "mockllm/weak")]["copied"] == 0.0
        and "copy_flag" not in rows[("custom", "mockllm/weak")]
    )
    assert COPY_RULE in (site / "leaderboard.md").read_text()


@pytest.mark.browser
def test_the_page_fits_a_1400_pixel_window_and_shows_the_marks(site, tmp_path):
    with browser_page() as page:
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto((site / "index.html").as_uri())
        width = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(tmp_path / "board.png"), full_page=True)
        marks = page.eval_on_selector_all("td.below", "cells => cells.map(c => c.textContent)")
        page.click("table[data-track=demo] tr[data-model='mockllm/copier'] summary")  # unfold a signature
        unfolded = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(tmp_path / "board-unfolded.png"), full_page=True)
        flagged = page.eval_on_selector_all("tr.flagged", "rows => rows.map(r => r.dataset.model)")
    assert width <= 1400 and unfolded <= 1400, f"the page is {width} px wide ({unfolded} unfolded)"
    assert NOT_ABOVE in marks and COPY_RULE in marks and flagged == ["mockllm/copier"]


def test_a_forged_copy_share_fails_verification(board, tmp_path, capsys):
    """The flag rests on each sample's context_copy: verify recomputes it from the logged answer."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from narrative_infill.analysis.submission.build import build_submission, write_submission

    forged = tmp_path / "logs"
    shutil.copytree(board / "logs" / "copier", forged)
    for path in forged.glob("*.eval"):
        log = read_eval_log(str(path))
        for sample in log.samples:
            sample.scores["metrics"].value["context_copy"] = 0.0
        write_eval_log(log, str(path))
    document = build_submission([str(forged)], "demo")
    assert document["settings"]["l2"]["rates"]["copied"] == 0.0  # the forger's file claims no copying
    write_submission(document, tmp_path / "forged.json")
    assert main(["verify", str(tmp_path / "forged.json"), "--logs", str(forged)]) == 1
    assert "context_copy is not the copy share of the answer in 24 sample(s)" in capsys.readouterr().out


def test_deleting_context_copy_from_the_copied_samples_does_not_dodge_the_flag(board, tmp_path):
    """Failed before: the share was taken over the samples that kept the key, so an entrant who
    deleted it from the copied ones showed 0% copied and was ranked."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from narrative_infill.analysis.submission.reference import COPY_UNKNOWN_RULE

    edited, submissions = tmp_path / "logs", tmp_path / "submissions"
    shutil.copytree(board / "logs" / "copier", edited)
    for path in edited.glob("*.eval"):
        log = read_eval_log(str(path))
        for sample in log.samples:
            if sample.scores["metrics"].value["context_copy"] > 0.8:
                del sample.scores["metrics"].value["context_copy"]
        write_eval_log(log, str(path))
    submissions.mkdir()
    assert main(["submit", str(edited), "-o", str(submissions / "copier.json"), "--track", "demo"]) == 0
    document = json.loads((submissions / "copier.json").read_text())
    assert document["settings"]["l2"]["rates"]["copied"] is None
    assert main(["leaderboard", str(submissions), "-o", str(tmp_path / "site")]) == 0
    [row] = [r for r in _rows(tmp_path / "site") if r["model"] == "mockllm/copier"]
    assert row["copy_flag"] == COPY_UNKNOWN_RULE and "rank" not in row
