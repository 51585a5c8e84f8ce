"""Judge claims that can be checked: a hosted judge's name served from elsewhere cannot rank, and
``verify --rejudge`` passes an honest submission and catches a fake judge's, by a rule that does
not depend on the seed it draws (the stand-in judge is deterministic: see standin_grader.py)."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import varied_answers_model
from inspect_ai import eval
from standin_grader import fake_endpoint, standin_grader

from narrative_infill.platform.analysis.submission.board import write_leaderboard
from narrative_infill.platform.analysis.submission.verify import rejudging, verify
from narrative_infill.platform.cli import main
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

def judged_logs(folder, grader) -> None:
    task = infill_task("l2", data="demo", backbone="minilm", judge=True)
    [log] = eval(
        task, model=varied_answers_model(), model_roles={"grader": grader}, log_dir=str(folder), display="none"
    )
    assert log.status == "success", log.error


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """An honest submission (judged by the stand-in) and a fake judge's (all 5s), both demo track."""
    root = tmp_path_factory.mktemp("rejudge")
    for name, grader in (("honest", standin_grader()), ("fake", standin_grader("fake", fives=True))):
        judged_logs(root / name, grader)
        assert main(["submit", str(root / name), "-o", str(root / f"{name}.json"), "--track", "demo"]) == 0
    return root


def test_rejudge_passes_the_honest_submission_and_catches_the_fake_judge(judged):
    """Failed before: nothing re-tested QAvg, so the fake judge's 5.0 was 'verified'."""
    honest = verify(judged / "honest.json", judged / "honest", rejudge=8, grader=standin_grader())
    assert honest.passed and honest.rejudged, honest.failures
    assert any(c.startswith("re-judge consistent: 8 samples") for c in honest.checks)
    fake = verify(judged / "fake.json", judged / "fake", rejudge=8, grader=standin_grader())
    assert not fake.rejudged
    [failure] = fake.failures
    assert failure.startswith("re-judge: the claimed QAvg is higher than mockllm/standin gives")
    assert fake.warnings == [
        "re-judged with mockllm/standin, the submission's judges are ['grader=mockllm/fake']"
    ]
    assert "claimed QAvg 5.000" in failure


def test_the_board_shows_which_entries_passed_the_rejudge(judged, tmp_path):
    entries = tmp_path / "entries"
    entries.mkdir()
    shutil.copy(judged / "honest.json", entries)
    with rejudging(8, standin_grader()):
        [row, *baselines] = write_leaderboard(entries, tmp_path / "site", logs=judged / "honest")
    assert row["badge"] == "verified + re-judged" and row["verified"]
    assert "verified + re-judged" in (tmp_path / "site" / "leaderboard.md").read_text(encoding="utf-8")
    [plain, *_] = write_leaderboard(entries, tmp_path / "plain", logs=judged / "honest")
    assert plain["badge"] == "verified"


def test_a_hosted_judges_name_served_from_elsewhere_cannot_rank(tmp_path, monkeypatch, capsys):
    """Failed before: openai/gpt-4.1-mini reached through OPENAI_BASE_URL at a 127.0.0.1 server
    answering 5s was submitted on the demo track and 'verified', judges ['grader=openai/gpt-4.1-mini']."""
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with fake_endpoint() as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        judged_logs(tmp_path / "logs", "openai/gpt-4.1-mini")
    out = tmp_path / "fake.json"
    assert main(["submit", str(tmp_path / "logs"), "-o", str(out), "--track", "demo"]) == 1
    assert (
        f"reached at {url}, not the provider's official https://api.openai.com/v1" in capsys.readouterr().err
    )
    assert main(["submit", str(tmp_path / "logs"), "-o", str(out), "--track", "custom"]) == 0
    provenance = json.loads(out.read_text(encoding="utf-8"))["provenance"]
    assert provenance["judge_endpoints"] == [f"grader={url}"]
    assert provenance["judge_served_by"] == ["grader=gpt-4.1-mini (fp_standin)"]
