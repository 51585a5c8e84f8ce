"""The human-rating study (``analysis/annotate/``): a blinded shared sample, ratings that survive
a killed server, the export the report reads, and the page driven in a real browser."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.analysis.annotate.study import StudyError, draw, open_study
from narrative_infill.cli import main
from narrative_infill.tasks import infill_task

from helpers import mock_output

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

VALID = '{"Fluency": 4, "Context_Faithfulness": 3, "Bidirectional_Coherence": 4, "Narrative_Consistency": 5, "Informativeness": 3}'
N = 6


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    grader = get_model("mockllm/grader", custom_outputs=lambda m, t, c, g: mock_output(VALID), memoize=False)
    for name, answer in (
        ("alpha", "They went home."),
        ("beta", "The kids splashed in the lake all afternoon."),
    ):
        model = get_model(
            f"mockllm/{name}",
            custom_outputs=lambda m, t, c, g, a=answer: mock_output(f"<ANSWER>{a}</ANSWER>"),
            memoize=False,
        )
        for setting in ("l1", "l2"):
            eval(infill_task(setting, data="demo", domain="sind", backbone="minilm", judge=True), model=model,
                 model_roles={"grader": grader}, log_dir=str(root), display="none")  # fmt: skip
    return root


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(logs, study, annotator, port):
    command = [sys.executable, "-m", "narrative_infill.cli", "annotate", str(logs), "-o", str(study), "--n", str(N),
               "--annotator", annotator, "--port", str(port)]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2)
            return server
        except OSError:
            assert server.poll() is None, server.stderr.read()
            assert time.monotonic() < deadline, "the rating server did not come up"
            time.sleep(0.2)


def api(port, path, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    return json.loads(urllib.request.urlopen(request, timeout=10).read())


def test_the_draw_is_stratified_seeded_and_blind(logs):
    manifest = draw([str(logs)], n=N, seed=3)
    assert manifest == draw([str(logs)], n=N, seed=3)
    strata = {(item["model"], item["setting"]) for item in manifest["items"]}
    assert len(strata) == 4 and len(manifest["items"]) == N  # 2 models x 2 settings, round robin
    with pytest.raises(StudyError, match="more than the 24 rateable samples"):
        draw([str(logs)], n=25, seed=3)


def test_a_study_folder_refuses_other_logs(logs, tmp_path):
    open_study(tmp_path, [str(logs)], N, 0)
    other = tmp_path / "other"
    shutil.copytree(logs, other)
    next(other.glob("*.eval")).unlink()
    with pytest.raises(StudyError, match="was drawn from other logs"):
        open_study(tmp_path, [str(other)], N, 0)


def test_bad_input_is_named(logs, tmp_path, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert (
            main(
                [
                    "annotate",
                    str(logs),
                    "-o",
                    str(tmp_path / "s"),
                    "--n",
                    str(N),
                    "--annotator",
                    "ann",
                    "--port",
                    str(port),
                ]
            )
            == 1
        )
    assert f"port {port} on 127.0.0.1 is already in use" in capsys.readouterr().err
    assert main(["annotate", str(logs), "-o", str(tmp_path / "t"), "--n", "99", "--annotator", "ann"]) == 1
    assert "more than the 24 rateable samples" in capsys.readouterr().err
    assert main(["annotate", str(logs), "-o", str(tmp_path / "s"), "--n", "5", "--annotator", "ann"]) == 1
    assert "holds a study of 6 items, not --n 5" in capsys.readouterr().err
    assert main(["annotate", str(logs), "-o", str(tmp_path / "s"), "--annotator", "../escape"]) == 1
    assert "letters, digits" in capsys.readouterr().err


def test_rate_in_a_browser_kill_the_server_resume_and_report_table2(logs, tmp_path):
    from playwright.sync_api import sync_playwright

    study, port = tmp_path / "study", free_port()
    started = time.monotonic()
    server = start(logs, study, "ann1", port)
    # The same name twice: refused while the first server runs.
    second = subprocess.run([sys.executable, "-m", "narrative_infill.cli", "annotate", str(logs), "-o", str(study), "--annotator",
                             "ann1", "--port", str(free_port())], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert second.returncode == 1 and "already rating in this study" in second.stderr
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                             args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])  # fmt: skip
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("mark")
        text = page.inner_text("body")
        assert (
            "mockllm" not in text and "alpha" not in text and "l2" not in text
        )  # blind: no model, setting or score
        for _ in range(2):  # two items by keyboard: five digits, then Enter
            page.keyboard.type("45342")
            page.keyboard.press("Enter")
            page.wait_for_function("document.getElementById('status').textContent === 'saved'")
            page.evaluate("document.getElementById('status').textContent = ''")
        for dimension in (
            "fluency",
            "context_faithfulness",
            "bidirectional_coherence",
            "narrative_consistency",
            "informativeness",
        ):
            page.click(f"input[name={dimension}][value='3']")  # the third by mouse
        page.fill("#note", "clicked")
        page.click("#save")
        page.wait_for_function("document.getElementById('count').textContent.includes('3 rated')")
        server.send_signal(signal.SIGKILL)  # no clean shutdown: nothing may be lost
        server.wait(timeout=30)
        server = start(logs, study, "ann1", port)
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_function("document.getElementById('count').textContent.includes('3 rated')")
        assert page.inner_text("#count").startswith("Item 4 of 6")  # resumed at the first unrated item
        for _ in range(N - 3):
            page.keyboard.type("55555")
            page.keyboard.press("Enter")
            page.wait_for_function("document.getElementById('status').textContent === 'saved'")
            page.evaluate("document.getElementById('status').textContent = ''")
        page.wait_for_function("document.getElementById('count').textContent.includes('6 rated')")
        browser.close()
    server.send_signal(signal.SIGINT)
    server.wait(timeout=30)
    elapsed = time.monotonic() - started
    # A second annotator on the same items, through the same API.
    server = start(logs, study, "ann2", port)
    state = api(port, "/api/state")
    for index in range(state["total"]):
        item = api(port, f"/api/item/{index}")
        scores = {"fluency": 4, "context_faithfulness": 3 + index % 2, "bidirectional_coherence": 4,
                  "narrative_consistency": 5, "informativeness": 2 + index % 3}  # fmt: skip
        api(port, "/api/rate", {"item": item["item"], "scores": scores})
    server.send_signal(signal.SIGINT)
    server.wait(timeout=30)
    with open(study / "ratings.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 * N and {r["annotator"] for r in rows} == {"ann1", "ann2"}
    first = [r for r in rows if r["annotator"] == "ann1"]
    assert sorted(r["fluency"] for r in first) == ["3", "4", "4", "5", "5", "5"] and {
        r["model"] for r in first
    } <= {"mockllm/alpha", "mockllm/beta"}
    assert (
        main(["report", str(logs), "-o", str(tmp_path / "report"), "--human", str(study / "ratings.csv")])
        == 0
    )
    table2 = (tmp_path / "report" / "report.md").read_text()
    assert "## table2_human_agreement" in table2 and "cohen_kappa" in table2 and "spearman_ann1" in table2
    print(f"browser rating test: {elapsed:.1f} s")
    assert not list(study.glob(".lock-*"))  # both servers released their locks


def test_a_rating_cut_by_a_crash_is_ignored_but_a_damaged_file_is_named(tmp_path):
    from narrative_infill.analysis.annotate.study import Ratings

    ratings = Ratings(tmp_path, "ann")
    scores = dict.fromkeys(
        (
            "fluency",
            "context_faithfulness",
            "bidirectional_coherence",
            "narrative_consistency",
            "informativeness",
        ),
        4,
    )
    ratings.add("item-0001", scores)
    with open(ratings.path, "a") as handle:
        handle.write('{"item": "item-0002", "flu')  # the process died mid-write
    assert list(ratings.load()) == ["item-0001"]
    ratings.add("item-0003", scores)  # the next rating replaces the cut line
    assert list(ratings.load()) == ["item-0001", "item-0003"]
    ratings.path.write_text('{"oops\n' + ratings.path.read_text())
    with pytest.raises(StudyError, match="ratings-ann.jsonl, line 1: not a rating"):
        ratings.load()
