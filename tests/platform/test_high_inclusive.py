"""``--high-inclusive`` is one rule end to end: a report, a submission, its verification and a
leaderboard built from the same logs with (or without) the flag agree on High%."""

from __future__ import annotations

import csv
import json

import pytest
from helpers import mock_output
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.platform.cli import main
from narrative_infill.paper_protocol import DIMENSIONS, high_label, reply_key
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

#: Every dimension 4: QAvg is exactly the High% threshold, High% is 0 (> 4) or 100 (>= 4).
AT_THRESHOLD = json.dumps({reply_key(d): 4 for d in DIMENSIONS})


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    grader = get_model("mockllm/grader", custom_outputs=lambda m, t, c, g: mock_output(AT_THRESHOLD))
    model = get_model(
        "mockllm/model", custom_outputs=lambda m, t, c, g: mock_output("<ANSWER>Home.</ANSWER>")
    )
    task = infill_task("l2", data="demo", backbone="minilm", judge=True)
    eval(task, model=model, model_roles={"grader": grader}, log_dir=str(root), display="none")
    return root


@pytest.mark.parametrize("inclusive, high", [(False, 0.0), (True, 1.0)])
def test_report_submission_verify_and_board_agree_on_high(logs, tmp_path, capsys, inclusive, high):
    flag = ["--high-inclusive"] if inclusive else []
    assert main(["report", str(logs), "-o", str(tmp_path / "report"), *flag]) == 0
    with open(tmp_path / "report" / "table6_quality_by_setting.csv") as table:
        [row] = list(csv.DictReader(table))
    assert float(row["High"]) == pytest.approx(100 * high)

    submissions = tmp_path / "submissions"
    submissions.mkdir()
    submission = submissions / "model.json"
    assert main(["submit", str(logs), "-o", str(submission), "--track", "demo", *flag]) == 0
    assert json.loads(submission.read_text())["settings"]["l2"]["high"] == pytest.approx(high)
    assert main(["verify", str(submission), "--logs", str(logs)]) == 0

    for board_inclusive in (False, True):  # the board counts by its own flag, whatever the file claims
        site = tmp_path / f"site-{board_inclusive}"
        board_flag = ["--high-inclusive"] if board_inclusive else []
        assert main(["leaderboard", str(submissions), "-o", str(site), *board_flag]) == 0
        board = json.loads((site / "leaderboard.json").read_text())
        [entry] = [r for r in board["rows"] if not r["baseline"]]
        assert entry["high"] == pytest.approx(float(board_inclusive))
        assert board["high_rule"] == high_label(board_inclusive)  # the page says which rule it counts
