"""An adversarial pass over issue 57's guarantees: what a dishonest submitter, a careless user or a
hostile file tried on the verdicts after the issue's fixes. Each test is the smallest reproduction
of one hole (failed before its fix) or names what stays open (strict xfail)."""

from __future__ import annotations

import json
import shutil

import pytest
from submission_runs import ANSWERS, copy_submission, small_demo_run

from narrative_infill.platform.analysis.submission.build import read_settings
from narrative_infill.platform.analysis.submission.replay import REPLAY_SHARE, answers_of, replayed_share
from narrative_infill.platform.cli import main

DEPTH = 100_000


def test_a_deeply_nested_submission_is_refused_by_verify_and_the_board(tmp_path, capsys):
    """Failed before: ``json`` hit Python's recursion limit and ``verify`` and the board stopped with
    a RecursionError traceback instead of refusing the file."""
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "deep.json").write_text('{"a":' * DEPTH + "1" + "}" * DEPTH)
    assert main(["verify", str(folder / "deep.json")]) == 1
    assert "nested too deeply" in capsys.readouterr().err
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site")]) == 1
    refused = json.loads((tmp_path / "site" / "leaderboard.json").read_text())["refused"]
    assert [r["file"] for r in refused] == ["deep.json"] and "nested too deeply" in refused[0]["reasons"][0]


@pytest.mark.heavy
def test_two_entries_whose_model_names_only_look_alike_are_not_both_boarded(submissions, tmp_path):
    """Failed before: ``mockllm/alpha`` and ``mockllm/aIpha`` (a capital I for the l) were two rows
    that print as one name; the second in name order is refused, naming the first, and a file name
    NFKC would change (a fullwidth letter) is refused too."""
    folder = tmp_path / "subs"
    folder.mkdir()
    shutil.copy(submissions / "alpha.json", folder / "a-alpha.json")
    copy_submission(submissions, folder, "b-alike.json", lambda d: d["model"].update(id="mockllm/aIpha"))
    copy_submission(submissions, folder, "c-\uff42eta.json", lambda d: d["model"].update(id="mockllm/gamma"))
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site")]) == 1
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert [r["file"] for r in board["rows"] if not r["baseline"]] == ["a-alpha.json"]
    refused = {r["file"]: " ".join(r["reasons"]) for r in board["refused"]}
    assert "only in look-alike characters" in refused["b-alike.json"]
    assert "mockllm/alpha" in refused["b-alike.json"]
    assert "not in Unicode NFKC form" in refused["c-\uff42eta.json"]


@pytest.fixture(scope="module")
def first_half(tmp_path_factory):
    """alpha's answers (the first half of each gold) on the demo set's SIND rows of l2, and their
    answers as the replay rule reads them."""
    folder = tmp_path_factory.mktemp("alpha") / "logs"
    small_demo_run(folder, ANSWERS["alpha"], name="alpha")
    return answers_of(read_settings([str(p) for p in folder.glob("*.eval")]))


def _replayed(tmp_path, disguise) -> float:
    """The share of a copycat's answers (alpha's, each passed through ``disguise``) the replay rule finds."""
    folder = tmp_path / "logs"
    small_demo_run(folder, lambda m: disguise(ANSWERS["alpha"](m)), name="copycat")
    return answers_of(read_settings([str(p) for p in folder.glob("*.eval")]))


#: Armenian օ, Latin alpha and dotless i: letters drawn as o, a and i that the story guards' own
#: homoglyph table does not fold (confusables.txt does).
LOOK_ALIKES = str.maketrans("oai", "\u0585\u0251\u0131")


@pytest.mark.heavy
@pytest.mark.parametrize(
    "disguise",
    [
        lambda text: text.translate(LOOK_ALIKES),
        lambda text: " ".join(f"{w[:1]} {w[1:]}" if len(w) > 3 else w for w in text.split()),
    ],
    ids=["look-alike letters", "a space inside each long word"],
)
def test_a_replay_disguised_letter_by_letter_is_found(first_half, tmp_path, disguise):
    """Failed before: each answer's words were compared as written, so alpha's answers with look-alike
    letters of other scripts, or a space inside each word, shared 0% with alpha's, and both entries
    were ranked."""
    copycat = _replayed(tmp_path, disguise)
    assert replayed_share(copycat, first_half) >= REPLAY_SHARE


@pytest.mark.heavy
@pytest.mark.xfail(
    strict=True,
    reason="open: the replay rule matches answers word for word; a replay with one word added to each "
    "answer shares none, and a near-duplicate rule needs its honest share measured on ../shared first",
)
def test_a_replay_with_a_word_added_to_each_answer_is_found(first_half, tmp_path):
    copycat = _replayed(tmp_path, lambda text: f"{text} then")
    assert replayed_share(copycat, first_half) >= REPLAY_SHARE


def test_a_line_break_in_a_submission_field_cannot_forge_a_line_of_verify(tmp_path, capsys):
    """Failed before: ``verify`` escaped control characters but kept a field's own line break, so a
    setting named ``"l1\\nok: ..."`` printed a line of its own that reads as a passed check."""
    forged = "l1\nok: every claim recomputed from the logs; verified"
    path = tmp_path / "forged.json"
    path.write_text(json.dumps({"schema_version": 1, "settings": {forged: {}}, "samples": {forged: []}}))
    assert main(["verify", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith(("FAILED: ", f"{path}: ")) for line in lines), lines
