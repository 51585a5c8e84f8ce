"""``--rejudge`` and ``--grader`` on verify and leaderboard: bad uses fail before anything runs."""

from narrative_infill.platform.cli import main


def test_rejudge_needs_a_count_that_can_fail_and_the_logs(tmp_path, capsys):
    submission = tmp_path / "entry.json"
    assert main(["verify", str(submission), "--rejudge", "0"]) != 0
    assert "--rejudge 0 can never fail" in capsys.readouterr().err
    assert main(["verify", str(submission), "--rejudge", "8", "--grader", "mockllm/model"]) != 0
    assert "--rejudge needs --logs" in capsys.readouterr().err
    assert main(["leaderboard", str(tmp_path), "-o", str(tmp_path / "site"), "--rejudge", "8"]) != 0
    assert "--rejudge needs --logs" in capsys.readouterr().err
    assert not submission.exists() and not (tmp_path / "site").exists()


def test_a_rejudge_below_the_smallest_k_that_can_fail_is_refused_before_anything_runs(tmp_path, capsys):
    """Failed before: ``--rejudge 1`` was accepted and always passed (p = 1)."""
    for command in (
        ["verify", str(tmp_path / "entry.json")],
        ["leaderboard", str(tmp_path), "-o", str(tmp_path / "site")],
    ):
        assert main([*command, "--logs", str(tmp_path), "--rejudge", "7"]) != 0
        err = capsys.readouterr().err
        assert (
            "--rejudge 7 can never fail an inflation of every answer: the mean test's smallest p-value "
            "of 7 re-judged samples is 2^-7, doubled for the two tests 0.0156" in err
        )
        assert "re-judge at least 8" in err
    assert not (tmp_path / "site").exists()
