"""Each verdict at the cost its decision needs, nothing computed twice (issue 60).

The fluency share and the re-scored metrics are decided on draws (``submission.sampling``) made
smaller here than a full entry's so that they are draws at all; the caches are this test's own
(``submission.cache``, ``fluency.GainCache``). Reads are counted where a model reads an answer: the
fluency model's readings and the pairs the metrics' backbones score, never by time.
"""

from __future__ import annotations

import json
import shutil

import pytest
from submission_runs import first_half_of_the_gold, small_demo_run

from narrative_infill.platform.analysis import fluency
from narrative_infill.platform.analysis.submission import build, replay, rescore, verify
from narrative_infill.platform.analysis.submission.build import read_settings
from narrative_infill.platform.cli import main
from narrative_infill.scorers.metrics import pairs

pytestmark = pytest.mark.heavy


@pytest.fixture
def reads(monkeypatch, tmp_path):
    """(the answers the fluency model and the metrics' backbones read since the last ``fresh()``,
    ``fresh``: a new process's memory, the disk caches kept), with this test's own verdict cache (the
    fluency gains stay in the shared one, tests/conftest.py: a test that counts them sets its own)."""
    monkeypatch.setenv("NARRATIVE_INFILL_VERDICT_CACHE", str(tmp_path / "verdicts.sqlite"))
    counted: dict[str, list[str]] = {"fluency": [], "metrics": []}
    read_gain, score_pairs = fluency.order_gain_with, pairs.score_pairs

    def gain(model, answer):
        counted["fluency"].append(answer)
        return read_gain(model, answer)

    def scored(answers, golds, *args, **kwargs):
        counted["metrics"].extend(answers)
        return score_pairs(answers, golds, *args, **kwargs)

    monkeypatch.setattr(fluency, "order_gain_with", gain)
    monkeypatch.setattr(pairs, "score_pairs", scored)

    def fresh() -> None:
        fluency._remembered.cache_clear()  # the gains a process keeps in memory
        for answers in counted.values():
            answers.clear()

    fresh()
    yield counted, fresh
    fluency._remembered.cache_clear()


def _board(submissions, logs, site) -> dict:
    assert main(["leaderboard", str(submissions), "--logs", str(logs), "-o", str(site)]) == 0
    return json.loads((site / "leaderboard.json").read_text())


def test_an_unchanged_board_reads_no_answer_again(logs, submissions, reads, monkeypatch, tmp_path):
    counted, fresh = reads
    board = tmp_path / "board"
    board.mkdir()
    shutil.copy(submissions / "alpha.json", board)
    logs_read: list[str] = []
    for module in (verify, replay):  # the two readers of an entry's sample records on the board
        monkeypatch.setattr(
            module, "read_settings", lambda paths: logs_read.extend(paths) or read_settings(paths)
        )
    first = _board(board, logs / "alpha", tmp_path / "first")
    assert counted["metrics"] and logs_read  # a cold verdict cache: the first build read
    fresh()
    logs_read.clear()
    second = _board(board, logs / "alpha", tmp_path / "second")
    assert counted == {"fluency": [], "metrics": []} and logs_read == []
    assert [row["badge"] for row in second["rows"]] == [row["badge"] for row in first["rows"]]


def test_a_changed_answer_is_read_again_and_only_it(reads, monkeypatch, tmp_path, capsys):
    counted, fresh = reads
    monkeypatch.setenv("NARRATIVE_INFILL_FLUENCY_CACHE", str(tmp_path / "fluency.sqlite"))
    calls: list[int] = []

    def one_answer_changed(messages):
        calls.append(1)
        return first_half_of_the_gold(messages) + (" Then it rained all day." if len(calls) == 1 else "")

    small_demo_run(tmp_path / "before", first_half_of_the_gold)
    small_demo_run(tmp_path / "after", one_answer_changed)
    out = tmp_path / "entry.json"
    assert main(["submit", str(tmp_path / "before"), "-o", str(out), "--track", "custom"]) == 0
    assert counted["fluency"] and counted["metrics"]
    fresh()
    assert main(["submit", str(tmp_path / "after"), "-o", str(out), "--track", "custom"]) == 0
    assert [a for a in counted["metrics"] if "rained" in a] == counted["metrics"] != []
    assert [a for a in counted["fluency"] if "rained" in a] == counted["fluency"] != []
    fresh()
    assert main(["verify", str(out), "--logs", str(tmp_path / "after")]) in (0, 3)
    assert counted == {"fluency": [], "metrics": []}  # verify on submit's machine: all remembered
    capsys.readouterr()


def test_a_sampled_fluency_share_reads_its_draw_and_says_so(logs, reads, monkeypatch, tmp_path, capsys):
    counted, fresh = reads
    monkeypatch.setattr(build, "FLUENCY_READS", 6)
    out = tmp_path / "alpha.json"
    assert main(["submit", str(logs / "alpha"), "-o", str(out), "--track", "demo"]) == 0
    printed = capsys.readouterr().out
    assert "fluency check read 6 of 48 answers (sampled, drawn from the samples digest): " in printed
    assert "% not fluent, 95% interval [" in printed
    claims = json.loads(out.read_text())["settings"]
    assert [claims[s]["fluency_read"] for s in sorted(claims)] == [3, 3]
    assert len(set(counted["fluency"])) <= 6  # of 48 (read before on this machine: none)
    fresh()
    assert main(["verify", str(out), "--logs", str(logs / "alpha")]) == 0
    printed = capsys.readouterr().out
    assert "sampled: fluency check read 6 of 48 answers (sampled" in printed
    assert ": verified: every claim and every sample recomputed" in printed
    assert "; sampled: fluency check read 6 of 48 answers" in printed  # the verdict's own words
    assert len(set(counted["fluency"])) <= 6


def test_the_metrics_draw_is_the_submission_s_and_reproducible(logs, submissions, reads, monkeypatch, capsys):
    """The same 5 samples drawn by both verifies, each distinct (answer, gold) of them scored once.
    The demo run answers a problem alike at both epochs, so a draw may hold a pair twice: which
    samples are drawn follows the submission's digest (its logs' eval ids), so it varies by run, and
    the count of scored answers is the count of the drawn pairs' distinct ones (it was once asserted
    to be 5, and failed only on the runs whose draw held a repeated pair)."""
    counted, fresh = reads
    monkeypatch.setenv("NARRATIVE_INFILL_VERDICT_CACHE", "off")
    monkeypatch.setattr(rescore, "RESCORED", 5)
    chosen_by_run: list[list[tuple[str, str]]] = []
    choose = rescore._chosen

    def recorded(*args, **kwargs):
        chosen = choose(*args, **kwargs)
        chosen_by_run.append([(p.answer, p.gold) for p in chosen])
        return chosen

    monkeypatch.setattr(rescore, "_chosen", recorded)
    drawn = []
    for _ in range(2):
        fresh()
        assert main(["verify", str(submissions / "alpha.json"), "--logs", str(logs / "alpha")]) == 0
        assert "sampled: metrics re-scored on 5 of 48 answered samples, drawn from the submission's " in (
            capsys.readouterr().out
        )
        drawn.append(list(counted["metrics"]))
    first, second = chosen_by_run
    assert len(first) == 5 and first == second
    assert sorted(drawn[0]) == sorted(answer for answer, _ in dict.fromkeys(first)) and drawn[0] == drawn[1]
