"""``--rejudge`` and ``--grader`` on verify and leaderboard: bad uses fail before anything runs."""

from narrative_infill.cli import main


def test_rejudge_needs_a_positive_count_and_the_logs(tmp_path, capsys):
    submission = tmp_path / "entry.json"
    assert main(["verify", str(submission), "--rejudge", "0"]) != 0
    assert "--rejudge must be at least 1, got 0" in capsys.readouterr().err
    assert main(["verify", str(submission), "--rejudge", "5", "--grader", "mockllm/model"]) != 0
    assert "--rejudge needs --logs" in capsys.readouterr().err
    assert main(["leaderboard", str(tmp_path), "-o", str(tmp_path / "site"), "--rejudge", "5"]) != 0
    assert "--rejudge needs --logs" in capsys.readouterr().err
    assert not submission.exists() and not (tmp_path / "site").exists()
