"""Verification that earns the word (issue 27): each case a review reproduced on edited logs, with
the submission's hash recomputed, is caught and named; the board checks for itself."""

from __future__ import annotations

import json
import math
import shutil
import time

import pytest
from helpers import browser_page, mock_output
from inspect_ai import eval
from inspect_ai.log import EvalError, read_eval_log, write_eval_log
from inspect_ai.model import get_model
from submission_runs import ANSWERS, METRICS, copy_submission, resubmitted

from narrative_infill.platform.analysis.submission.build import (
    content_hash,
)
from narrative_infill.platform.analysis.submission.verify import NOT_VERIFIED_EXIT
from narrative_infill.platform.cli import main
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy

ANSWER = ANSWERS["alpha"]  # alpha's answer to a prompt
def edited_logs(source, target, edit):
    """A copy of ``source``'s logs with ``edit(sample, index, setting)`` applied to every sample."""
    shutil.copytree(source, target)
    for path in sorted(target.glob("*.eval")):
        log = read_eval_log(str(path))
        for index, sample in enumerate(log.samples):
            edit(sample, index, log.eval.metadata["template"])
        write_eval_log(log, str(path))
    return target


def test_fabricated_scores_fail_the_rescore(logs, tmp_path, capsys):  # noqa: F811
    def fabricate(sample, index, setting):
        if not (setting == "l1" and index < 3):  # 45 of 48 samples
            sample.scores["metrics"].value.update({k: 0.9 for k in METRICS})

    forged = edited_logs(logs / "alpha", tmp_path / "logs", fabricate)
    path = resubmitted(forged, tmp_path / "forged.json")
    assert main(["verify", str(path), "--logs", str(forged)]) == 1
    out = capsys.readouterr().out
    assert "re-scored metrics differ from the logged ones in 45 sample(s)" in out
    assert "atavg 0.9 ->" in out


def test_a_logged_answer_that_is_not_the_outputs_extraction_fails(logs, tmp_path, capsys):  # noqa: F811
    def swap(sample, index, setting):
        if index == 0:
            for score in sample.scores.values():
                score.answer = "Something the model never wrote."

    forged = edited_logs(logs / "alpha", tmp_path / "logs", swap)
    path = resubmitted(forged, tmp_path / "forged.json")
    assert main(["verify", str(path), "--logs", str(forged)]) == 1
    assert "logged answer is not the extraction of the raw output in 2 sample(s)" in capsys.readouterr().out


def test_without_backbones_the_verdict_says_what_was_not_checked(submissions, logs, monkeypatch, capsys):  # noqa: F811
    from narrative_infill.scorers.metrics import pairs

    def absent(*args, **kwargs):
        raise pairs.BackboneUnavailable("no backbone here")

    monkeypatch.setattr(pairs, "resolve_backbones", absent)
    verdict = main(["verify", str(submissions / "alpha.json"), "--logs", str(logs / "alpha")])
    assert verdict == NOT_VERIFIED_EXIT
    out = capsys.readouterr().out
    assert "not verified: cannot re-score here (metrics: backbones absent (no backbone here))" in out
    assert "verified: every" not in out and "consistent with its logs" not in out


def test_sample_rescoring_draws_from_the_submission_s_hash(submissions, logs, capsys):  # noqa: F811
    """Issue 60: the draw is fixed by the file (so verify is reproducible), not by the verifier."""
    seeds = []
    for _ in range(2):
        assert (
            main(["verify", str(submissions / "alpha.json"), "--logs", str(logs / "alpha"), "--sample", "5"])
            == 0
        )
        out = capsys.readouterr().out
        assert "consistent with its logs; metrics re-scored on 5 of 48 answered samples (seed " in out
        seeds.append(out.split("(seed ")[1].split(")")[0])
    assert seeds[0] == seeds[1] == json.loads((submissions / "alpha.json").read_text())["sha256"]


def test_rewritten_provenance_fails(submissions, logs, tmp_path, capsys):  # noqa: F811
    document = json.loads((submissions / "alpha.json").read_text())
    provenance = document["provenance"]
    provenance["dataset"] = {
        "source": "hf:BridgeAI-Lab/Narrative-Infilling",
        "commit": "a" * 40,
        "instances": 24,
    }
    provenance["generation_config"] = {
        s: {"temperature": 0.8, "top_p": 0.9, "seed": 42} for s in ("l1", "l2")
    }
    provenance["git"] = {
        s: {"type": "git", "origin": "https://example.org/official", "commit": "0" * 40} for s in ("l1", "l2")
    }
    provenance["prompt_variants"], provenance["judge_variant"] = ["official"], ["official"]
    document["sha256"] = content_hash(document)
    path = tmp_path / "rewritten.json"
    path.write_text(json.dumps(document))
    assert main(["verify", str(path), "--logs", str(logs / "alpha")]) == 1
    out = capsys.readouterr().out
    for key in ("dataset", "generation_config", "git", "prompt_variants", "judge_variant"):
        assert f"provenance.{key}: the file claims" in out


def test_errored_samples_fail_a_ranked_track(logs, tmp_path, capsys):  # noqa: F811
    def error(sample, index, setting):
        if setting == "l2" and index < 8:
            sample.error = EvalError(message="provider down", traceback="", traceback_ansi="")
            sample.scores = None

    broken = edited_logs(logs / "alpha", tmp_path / "logs", error)
    assert main(["submit", str(broken), "-o", str(tmp_path / "s.json"), "--track", "demo"]) == 1
    assert "8 errored sample(s)" in capsys.readouterr().err
    path = resubmitted(broken, tmp_path / "custom.json", track="custom")
    document = json.loads(path.read_text())
    document["track"] = "demo"
    document["sha256"] = content_hash(document)
    path.write_text(json.dumps(document))
    assert main(["verify", str(path), "--logs", str(broken)]) == 1
    assert "8 errored sample(s)" in capsys.readouterr().out


def test_unscored_judgements_above_two_percent_fail_a_ranked_track(logs, tmp_path, capsys):  # noqa: F811
    def unscore(sample, index, setting):
        if setting == "l2" and index < 12:
            judged = sample.scores["judge"]
            judged.value = {**{k: math.nan for k in judged.value}, "grader_failed": 1.0}
            for verdict in judged.metadata["judges"].values():
                verdict.pop("values")
                verdict["failed"] = "no scores found in the grader's reply"

    unscored = edited_logs(logs / "alpha", tmp_path / "logs", unscore)
    assert main(["submit", str(unscored), "-o", str(tmp_path / "s.json"), "--track", "demo"]) == 1
    assert "l2: 50.0% of judgements unscored, a ranked track allows 2%" in capsys.readouterr().err


def test_a_run_off_the_protocol_goes_to_custom_only(tmp_path, capsys):
    model = get_model(
        "mockllm/alpha", custom_outputs=lambda m, t, c, g: mock_output("<ANSWER>x.</ANSWER>"), memoize=False
    )
    task = infill_task("l2", data="demo", backbone="minilm", variant="code3", max_tokens=4096)
    eval(task, model=model, temperature=0.0, log_dir=str(tmp_path / "logs"), display="none")
    assert main(["submit", str(tmp_path / "logs"), "-o", str(tmp_path / "s.json"), "--track", "demo"]) == 1
    err = capsys.readouterr().err
    assert "temperature: 0.0, the protocol has 0.8" in err and "variant: 'code3'" in err
    assert "max_tokens_rule: ['user']" in err and "--track custom" in err
    assert main(["submit", str(tmp_path / "logs"), "-o", str(tmp_path / "c.json"), "--track", "custom"]) == 0


def test_a_malformed_row_is_named_with_file_and_row(submissions, tmp_path, capsys):  # noqa: F811
    folder = tmp_path / "subs"
    folder.mkdir()
    document = json.loads((submissions / "alpha.json").read_text())
    document["samples"]["l2"][3] = [1, 2]
    document["sha256"] = content_hash(document)
    (folder / "bad.json").write_text(json.dumps(document))
    assert main(["verify", str(folder / "bad.json")]) == 1
    assert "schema: samples.l2[3]: a row is [id, epoch, atavg, qavg], got [1, 2]" in capsys.readouterr().out
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site")]) == 1
    assert "bad.json: not a valid submission: samples.l2[3]" in capsys.readouterr().err


def test_the_board_ignores_sidecars_and_checks_claims_against_samples(submissions, tmp_path, capsys):  # noqa: F811
    folder = tmp_path / "subs"
    folder.mkdir()
    document = copy_submission(submissions, folder, "a.json", lambda d: None)
    sidecar = {"verified": True, "verified_from_logs": True, "submission_sha256": document["sha256"]}
    (folder / "a.json.verification.json").write_text(json.dumps(sidecar))
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site")]) == 0
    rows = json.loads((tmp_path / "site" / "leaderboard.json").read_text())["rows"]
    assert [r["badge"] for r in rows if not r["baseline"]] == ["file only"]
    copy_submission(submissions, folder, "b.json", lambda d: d["settings"]["l2"]["atavg"].update(mean=0.95))
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site2")]) == 1
    assert (
        "b.json: its claims disagree with its own samples: settings.l2.atavg.mean: claimed 0.95"
        in capsys.readouterr().err
    )


def test_the_board_ranks_only_comparable_entries(submissions, tmp_path):  # noqa: F811
    folder = tmp_path / "subs"
    folder.mkdir()

    def l2_only(d):
        d["settings"].pop("l1")
        d["samples"].pop("l1")

    copy_submission(submissions, folder, "all.json", lambda d: None)
    copy_submission(submissions, folder, "l2.json", l2_only)
    copy_submission(submissions, folder, "v0.json", lambda d: d["provenance"].update(task_versions=["0"]))
    copy_submission(submissions, folder, "weighted.json", lambda d: d["provenance"].update(judge_weighting=["True"]))
    copy_submission(
        submissions,
        folder,
        "authors.json",
        lambda d: d["provenance"].update(judge_variant=["authors prompt"]),
    )
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site")]) == 0
    rows = [
        r
        for r in json.loads((tmp_path / "site" / "leaderboard.json").read_text())["rows"]
        if not r["baseline"]
    ]
    assert len({r["group"] for r in rows}) == 5  # five groups; file only, so none of them ranked
    assert all("rank" not in r for r in rows)


@pytest.mark.browser
def test_hostile_strings_cannot_break_the_page(submissions, tmp_path):  # noqa: F811

    hostile = "x<!--<script>alert(1)</script>"
    folder = tmp_path / "subs"
    folder.mkdir()

    def poison(d):
        d["model"]["id"], d["submitter"] = hostile, hostile
        d["provenance"].update(judges=[hostile], metrics_signatures=[hostile])

    copy_submission(submissions, folder, f"{hostile.replace('/', '_')}.json", poison)
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site")]) == 0
    html = (tmp_path / "site" / "index.html").read_text()
    script = html.split("const DATA = ")[1].split("\n")[0]
    assert "<" not in script
    started = time.monotonic()
    with browser_page() as page:
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((tmp_path / "site" / "index.html").as_uri())
        models = page.eval_on_selector_all(
            "table[data-track=demo] tbody tr", "rows => rows.map(r => r.dataset.model)"
        )
        cells = page.eval_on_selector_all(
            "table[data-track=demo] tbody td", "cells => cells.map(c => c.textContent)"
        )
    assert not errors and hostile in models and hostile in cells
    print(f"browser test: {time.monotonic() - started:.1f} s")


def _forge_gold():
    """``benchmarks/regeneration_power.py``'s forgery: answers replaced by the gold, re-scored."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "benchmarks" / "regeneration_power.py"
    spec = importlib.util.spec_from_file_location("regeneration_power", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.forge_gold


def test_regeneration_passes_the_honest_and_fails_the_gold_copy(submissions, logs, tmp_path):  # noqa: F811
    from narrative_infill.platform.analysis.submission.verify import verify

    alpha = get_model(
        "mockllm/alpha",
        custom_outputs=lambda m, t, c, g: mock_output(f"<ANSWER>{ANSWER(m)}</ANSWER>"),
        memoize=False,
    )
    honest = verify(submissions / "alpha.json", logs / "alpha", regenerate=8, model=alpha)
    assert honest.passed and any(
        c.startswith("re-generation consistent: 16 instances") for c in honest.checks
    )
    _forge_gold()(logs / "alpha", tmp_path / "forged")
    path = resubmitted(tmp_path / "forged", tmp_path / "forged.json")
    itself = verify(path, tmp_path / "forged")
    assert itself.passed, itself.failures  # consistent with itself in every check a file allows
    assert any("near-verbatim copies of the gold" in w for w in itself.warnings)  # only this hints at it
    forged = verify(path, tmp_path / "forged", regenerate=8, model=alpha)
    assert not forged.passed
    assert "re-generation: the submitted scores are higher than the model reproduces" in forged.failures[0]


def test_a_newer_fabricated_scoring_is_the_one_recomputed(logs, tmp_path, capsys):  # noqa: F811
    """The claims come from each sample's newest scoring (``metrics1`` over ``metrics``): a forged
    scoring appended beside the honest one must be what verify re-extracts and re-scores."""

    def append(sample, index, setting):
        forged = sample.scores["metrics"].model_copy(deep=True)
        forged.value.update({k: 0.9 for k in METRICS})
        sample.scores["metrics1"] = forged

    forged = edited_logs(logs / "alpha", tmp_path / "logs", append)
    path = resubmitted(forged, tmp_path / "forged.json")
    assert json.loads(path.read_text())["settings"]["l2"]["atavg"]["mean"] == pytest.approx(0.9)
    assert main(["verify", str(path), "--logs", str(forged)]) == 1
    assert "re-scored metrics differ from the logged ones in 48 sample(s)" in capsys.readouterr().out


def test_the_model_block_is_compared_with_the_logs(submissions, logs, tmp_path, capsys):  # noqa: F811
    document = json.loads((submissions / "alpha.json").read_text())
    document["model"].update(base_url="https://api.official.example/v1", args={"revision": "release"})
    document["sha256"] = content_hash(document)
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(document))
    assert main(["verify", str(path), "--logs", str(logs / "alpha")]) == 1
    out = capsys.readouterr().out
    assert "model.base_url: the file claims 'https://api.official.example/v1', the l1 log records None" in out
    assert "model.args: the file claims {'revision': 'release'}, the l2 log records " in out
