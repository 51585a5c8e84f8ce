"""Recompute, never trust (issue 44, findings 3-6): a dishonest submitter's forgeries of a demo log
(records, summaries and header rewritten together, a second record of one sample inside the zip, a
judge endpoint rewritten in the summaries only, a baseline log's scores) are refused or re-scored
by every command that shows a figure; the default ``backbone=auto`` log is re-scored (verified)
on the machine that made it, and where the metrics truly cannot be re-scored the verdict says so."""

from __future__ import annotations

import json
import shutil
import warnings
import zipfile
from pathlib import Path

import pytest
from helpers import mock_output
from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model

from narrative_infill.platform.analysis.submission.build import build_submission, write_submission
from narrative_infill.platform.analysis.submission.verify import NOT_VERIFIED_EXIT
from narrative_infill.platform.cli import main
from narrative_infill.scorers.metrics.pairs import METRIC_NAMES
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

FORGED = 0.45


@pytest.fixture(scope="module")
def auto_log(tmp_path_factory) -> Path:
    """The README's demo flow offline: one setting scored with the default ``backbone=auto`` (which
    falls back to MiniLM here and says so in the signature); every fourth answer is empty."""
    folder = tmp_path_factory.mktemp("auto") / "logs"
    calls = []

    def answer(*_):
        calls.append(1)
        return mock_output("<ANSWER></ANSWER>" if len(calls) % 4 == 0 else "<ANSWER>They went home.</ANSWER>")

    model = get_model("mockllm/auto", custom_outputs=answer, memoize=False)
    eval(infill_task("l1", data="demo"), model=model, log_dir=str(folder), display="none")
    return folder


def _forge_everywhere(source: Path, target: Path) -> Path:
    """Every metric 0.45 in the records, the summaries and the header; answers untouched."""
    shutil.copytree(source, target)
    for path in target.glob("*.eval"):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            sample.scores["metrics"].value.update(dict.fromkeys((*METRIC_NAMES, "atavg"), FORGED))
        for score in log.results.scores:
            if score.scorer == "metrics" and score.name in (*METRIC_NAMES, "atavg"):
                for metric in score.metrics.values():
                    metric.value = FORGED
        write_eval_log(log, str(path))
    return target


def _submitted(folder: Path, out: Path) -> Path:
    """A submission built straight from the logs, as a forger would (past ``submit``'s recheck)."""
    write_submission(build_submission([str(folder)], "demo"), out)
    return out


def test_a_default_auto_log_is_verified_on_the_machine_that_made_it(auto_log, tmp_path, capsys):
    signature = next(iter(read_eval_log(str(next(auto_log.glob("*.eval")))).samples)).scores["metrics"]
    assert "fallback: " in signature.metadata["metrics_signature"]  # the segment the verifier lost
    path = _submitted(auto_log, tmp_path / "honest.json")
    assert main(["verify", str(path), "--logs", str(auto_log)]) == 0
    out = capsys.readouterr().out
    assert "verified: every claim" in out and "not re-scored" not in out and "cannot re-score" not in out


def test_forged_metrics_in_records_summaries_and_header_fail_verify_submit_and_board(
    auto_log, tmp_path, capsys
):
    forged = _forge_everywhere(auto_log, tmp_path / "logs")
    folder = tmp_path / "submissions"
    folder.mkdir()
    path = _submitted(forged, folder / "forged.json")
    assert main(["verify", str(path), "--logs", str(forged)]) == 1
    out = capsys.readouterr().out
    assert "re-scored metrics differ from the logged ones in 18 sample(s)" in out
    assert "an empty answer is not scored 0 in 6 sample(s)" in out and "atavg 0.45 -> 0.0" in out
    assert main(["submit", str(forged), "-o", str(tmp_path / "again.json"), "--track", "demo"]) == 1
    assert "not what their sample records give" in capsys.readouterr().err
    assert not (tmp_path / "again.json").exists()
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site"), "--logs", str(forged)]) == 1
    assert "fails verification" in capsys.readouterr().err


def test_without_backbones_the_verdict_is_not_verified_and_the_forgery_still_fails(
    auto_log, tmp_path, monkeypatch, capsys
):
    from narrative_infill.scorers.metrics import pairs

    def absent(*args, **kwargs):
        raise pairs.BackboneUnavailable("no backbone here")

    honest_path = _submitted(auto_log, tmp_path / "honest.json")
    forged = _forge_everywhere(auto_log, tmp_path / "logs")
    forged_path = _submitted(forged, tmp_path / "forged.json")
    monkeypatch.setattr(pairs, "resolve_backbones", absent)
    assert main(["verify", str(honest_path), "--logs", str(auto_log)]) == NOT_VERIFIED_EXIT
    out = capsys.readouterr().out
    assert "not verified: cannot re-score here (metrics: backbones absent (no backbone here))" in out
    assert "verified: every" not in out and "consistent with its logs" not in out
    record = json.loads(Path(f"{honest_path}.verification.json").read_text())
    assert record["verified"] is False and "no backbone here" in record["cannot_rescore"]
    # ROUGE-1, METEOR, chrF and the empty answers need no backbone: the forgery fails here too
    assert main(["verify", str(forged_path), "--logs", str(forged)]) == 1
    out = capsys.readouterr().out
    assert "an empty answer is not scored 0 in 6 sample(s)" in out and "rouge1 0.45 ->" in out


def test_the_board_shows_but_never_ranks_an_entry_it_could_not_re_score(
    auto_log, tmp_path, monkeypatch, capsys
):
    """An entry whose metrics the board's machine cannot re-score keeps its file's AtAvg unchecked
    (BERTScore and Sem-F1 could be anything): it is listed with the reason, never given a rank."""
    from narrative_infill.platform.analysis.submission.reference import UNVERIFIED_RULE
    from narrative_infill.scorers.metrics import pairs

    def absent(*args, **kwargs):
        raise pairs.BackboneUnavailable("no backbone here")

    submissions = tmp_path / "submissions"
    submissions.mkdir()
    _submitted(auto_log, submissions / "entry.json")
    monkeypatch.setattr(pairs, "resolve_backbones", absent)
    assert main(["leaderboard", str(submissions), "-o", str(tmp_path / "site"), "--logs", str(auto_log)]) == 0
    rows = json.loads((tmp_path / "site" / "leaderboard.json").read_text())["rows"]
    [row] = [r for r in rows if not r["baseline"]]
    assert row["badge"].startswith("not verified: cannot re-score here")
    assert row["unranked"] == UNVERIFIED_RULE and "rank" not in row


def _with_second_record(folder: Path, value: float) -> None:
    """Each log gains a second ``samples/<id>_epoch_1.json`` for its first sample (metrics
    ``value``), and its summaries are forged to match: what the last-read record would claim."""
    for path in sorted(folder.glob("**/*.eval")):
        with zipfile.ZipFile(path) as archive:
            members = [(info.filename, archive.read(info)) for info in archive.infolist()]
        first = next(name for name, _ in members if name.startswith("samples/"))
        record = json.loads(dict(members)[first])
        record["scores"]["metrics"]["value"].update(dict.fromkeys((*METRIC_NAMES, "atavg"), value))
        summaries = json.loads(dict(members)["summaries.json"])
        for summary in summaries:
            if (str(summary["id"]), summary["epoch"]) == (str(record["id"]), record["epoch"]):
                summary["scores"]["metrics"]["value"] = record["scores"]["metrics"]["value"]
        with warnings.catch_warnings(), zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            warnings.simplefilter("ignore", UserWarning)  # "Duplicate name": the forgery itself
            for name, data in members:
                archive.writestr(name, json.dumps(summaries) if name == "summaries.json" else data)
            archive.writestr(first, json.dumps(record))


def test_a_second_record_of_one_sample_is_refused_by_report_and_submit(honest, tmp_path, capsys):  # noqa: F811
    folder = shutil.copytree(honest, tmp_path / "logs")
    _with_second_record(folder, 0.95)
    assert main(["report", str(folder), "-o", str(tmp_path / "report")]) == 1
    err = capsys.readouterr().err
    assert "one (sample id, epoch) held more than once" in err and "epoch 1: 2 records" in err
    assert main(["submit", str(folder), "-o", str(tmp_path / "sub.json"), "--track", "custom"]) == 1
    assert "epoch 1: 2 records" in capsys.readouterr().err


def test_a_failed_attempt_kept_before_its_retry_is_superseded_as_inspect_eval_retry_writes_it(
    honest,  # noqa: F811
    tmp_path,
):
    """``inspect eval-retry`` leaves the failed attempt's entry in the zip and writes the retried
    sample after it under the same name: a genuine log, read as Inspect reads it (the later entry)."""
    folder = shutil.copytree(honest, tmp_path / "logs")
    for path in sorted(folder.glob("**/*.eval")):
        with zipfile.ZipFile(path) as archive:
            members = [(info.filename, archive.read(info)) for info in archive.infolist()]
        first = next(name for name, _ in members if name.startswith("samples/"))
        failed = json.loads(dict(members)[first])
        failed.update(error={"message": "server died", "traceback": "", "traceback_ansi": ""}, scores={})
        with warnings.catch_warnings(), zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            warnings.simplefilter("ignore", UserWarning)  # "Duplicate name": Inspect's own layout
            archive.writestr(first, json.dumps(failed))
            for name, data in members:
                archive.writestr(name, data)
    assert main(["report", str(folder), "-o", str(tmp_path / "report")]) == 0


def test_a_judge_endpoint_forged_in_the_summaries_only_is_refused_naming_the_field(logs, tmp_path, capsys):  # noqa: F811
    folder = shutil.copytree(logs / "alpha", tmp_path / "logs")
    official = "grader=https://api.openai.com/v1"
    for path in sorted(folder.glob("*.eval")):
        with zipfile.ZipFile(path) as archive:
            members = [(info.filename, archive.read(info)) for info in archive.infolist()]
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in members:
                if name == "summaries.json":
                    summaries = json.loads(data)
                    for summary in summaries:
                        summary["scores"]["judge"]["metadata"]["judge_endpoints"] = official
                    data = json.dumps(summaries).encode()
                archive.writestr(name, data)
    assert main(["submit", str(folder), "-o", str(tmp_path / "sub.json"), "--track", "demo"]) == 1
    err = capsys.readouterr().err
    assert "scores.judge.judge_endpoints" in err and "summaries.json" in err
    assert main(["report", str(folder), "-o", str(tmp_path / "report")]) == 1
    assert "scores.judge.judge_endpoints" in capsys.readouterr().err


def test_a_baseline_log_with_forged_scores_cannot_move_the_context_line(tmp_path, capsys):
    folder = tmp_path / "logs"
    task = infill_task("l2", data="demo", domain="sind", backbone="minilm", extraction="published")
    eval(task, model="baseline/context", log_dir=str(folder), display="none")
    path = next(folder.glob("*.eval"))
    log = read_eval_log(str(path))
    for sample in log.samples or []:  # answers still the rule's
        sample.scores["metrics"].value["atavg"] = 0.5
    write_eval_log(log, str(path))
    assert main(["report", str(folder), "-o", str(tmp_path / "report")]) == 1
    err = capsys.readouterr().err
    assert "a baseline's scores are not taken on trust" in err and "atavg 0.5 ->" in err


def test_a_judge_endpoint_forged_in_the_header_only_is_refused_naming_the_field(logs, tmp_path, capsys):  # noqa: F811
    folder = shutil.copytree(logs / "alpha", tmp_path / "logs")
    for path in sorted(folder.glob("*.eval")):
        log = read_eval_log(str(path))
        log.eval.model_roles["grader"].base_url = "https://api.openai.com/v1"
        write_eval_log(log, str(path))
    assert main(["submit", str(folder), "-o", str(tmp_path / "sub.json"), "--track", "demo"]) == 1
    err = capsys.readouterr().err
    assert "header model_roles.grader.base_url: 'https://api.openai.com/v1'" in err
    assert "the sample records name 'provider default'" in err


def test_submit_rechecks_its_logs_and_says_so(auto_log, tmp_path, capsys):
    out = tmp_path / "sub.json"
    assert main(["submit", str(auto_log), "-o", str(out), "--track", "demo", "--sample", "5"]) == 0
    assert "metrics re-scored here" in capsys.readouterr().out and out.exists()
    assert main(["submit", str(auto_log), "-o", str(out), "--track", "demo", "--sample", "-1"]) == 1
    assert "--sample must be at least 0" in capsys.readouterr().err


def test_a_header_edited_alone_is_refused_by_submit_naming_the_field(auto_log, tmp_path, capsys):
    folder = shutil.copytree(auto_log, tmp_path / "logs")
    for path in folder.glob("*.eval"):
        log = read_eval_log(str(path))
        for score in log.results.scores:
            if score.scorer == "metrics" and score.name == "atavg":
                score.metrics["mean"].value = FORGED  # what inspect view shows; the records stay honest
        write_eval_log(log, str(path))
    assert main(["submit", str(folder), "-o", str(tmp_path / "sub.json"), "--track", "demo"]) == 1
    assert "l1: header results.atavg.mean: the header says 0.45, its sample records " in capsys.readouterr().err


def test_report_refuses_a_log_whose_empty_answers_score_above_0(auto_log, tmp_path, capsys):
    """Failed before: the report of the log forged everywhere showed AtAvg 0.45, its empty answers
    "scoring" 0.45 unflagged; an empty answer's 0 needs no backbone to check, so the report checks it."""
    forged = _forge_everywhere(auto_log, tmp_path / "logs")
    assert main(["report", str(forged), "-o", str(tmp_path / "report")]) == 1
    err = capsys.readouterr().err
    assert "an empty answer scored above 0 in 6 sample(s)" in err and "metrics.atavg 0.45" in err
    assert not (tmp_path / "report" / "report.md").exists()


def test_findings_count_samples_not_mismatches():
    """Failed before: 24 samples with 7 mismatching judge fields each read 'in 168 sample(s)'."""
    from narrative_infill.platform.analysis.submission.recompute import Findings

    findings = Findings()
    for sample in range(3):
        for field in ("qavg", "fluency"):
            findings.add("judge scores are not what the graders replied", f"l1 s{sample} epoch 1", field)
    [line] = findings.lines()
    assert line.startswith(
        "judge scores are not what the graders replied in 3 sample(s) (1 more not listed): "
    )
