"""The human-rating study (``platform/analysis/annotate/``): a blinded shared sample, ratings that survive
a killed server, the export the report reads, the page driven in a real browser, a server that
takes ratings only from its own page, and two annotators' servers that never lose a rating."""

from __future__ import annotations

import csv
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers import browser_page, free_port, mock_output
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.data.records import BLANK
from narrative_infill.platform.analysis.annotate.study import StudyError, draw, open_study
from narrative_infill.platform.analysis.report.human import read_human_ratings
from narrative_infill.platform.cli import main
from narrative_infill.tasks import infill_task

heavy = pytest.mark.heavy  # the logs are scored with a real embedding backbone

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


def start(logs, study, annotator, port):
    command = [sys.executable, "-m", "narrative_infill.platform.cli", "annotate", str(logs), "-o", str(study), "--n", str(N),
               "--annotator", annotator, "--port", str(port)]  # fmt: skip
    return wait_until_up(
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), port
    )


def wait_until_up(server, port):
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2)
            return server
        except OSError:
            assert server.poll() is None, server.stderr.read()
            assert time.monotonic() < deadline, "the rating server did not come up"
            time.sleep(0.2)


def token_of(port) -> str:
    """The study's secret, as the page receives it ('' where the page carries none)."""
    found = re.search(rb'name="rating-token" content="([^"]*)"', send(port, "GET", "/")[1])
    return found.group(1).decode() if found else ""


def api(port, path, body=None, token=""):
    headers = {"Content-Type": "application/json", **({"X-Rating-Token": token} if token else {})}
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode() if body else None,
                                     headers=headers)  # fmt: skip
    return json.loads(urllib.request.urlopen(request, timeout=10).read())


def send(port, method, path, body=b"", headers=None):
    """One raw request with exactly these headers (Host too, when given): (status, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body or None, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@heavy
def test_the_draw_is_stratified_seeded_and_blind(logs):
    manifest = draw([str(logs)], n=N, seed=3)
    assert manifest == draw([str(logs)], n=N, seed=3)
    strata = {(item["model"], item["setting"]) for item in manifest["items"]}
    assert len(strata) == 4 and len(manifest["items"]) == N  # 2 models x 2 settings, round robin
    with pytest.raises(StudyError, match="more than the 24 rateable samples"):
        draw([str(logs)], n=25, seed=3)


@heavy
def test_a_study_folder_refuses_other_logs(logs, tmp_path):
    open_study(tmp_path, [str(logs)], N, 0)
    other = tmp_path / "other"
    shutil.copytree(logs, other)
    next(other.glob("*.eval")).unlink()
    with pytest.raises(StudyError, match="was drawn from other logs"):
        open_study(tmp_path, [str(other)], N, 0)


@heavy
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


@pytest.mark.browser
@heavy
def test_rate_in_a_browser_kill_the_server_resume_and_report_table2(logs, tmp_path):

    study, port = tmp_path / "study", free_port()
    started = time.monotonic()
    server = start(logs, study, "ann1", port)
    # The same name twice: refused while the first server runs.
    second = subprocess.run([sys.executable, "-m", "narrative_infill.platform.cli", "annotate", str(logs), "-o", str(study), "--annotator",
                             "ann1", "--port", str(free_port())], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert second.returncode == 1 and "already rating in this study" in second.stderr
    with browser_page(f"http://127.0.0.1:{port}/") as page:
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
        page.evaluate("document.getElementById('status').textContent = ''")
        page.keyboard.type(
            "55555"
        )  # the tab opened before the kill still saves: the study's token outlived it
        page.keyboard.press("Enter")
        page.wait_for_function("document.getElementById('status').textContent === 'saved'")
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_function("document.getElementById('count').textContent.includes('4 rated')")
        assert page.inner_text("#count").startswith("Item 5 of 6")  # resumed at the first unrated item
        for _ in range(N - 4):
            page.keyboard.type("55555")
            page.keyboard.press("Enter")
            page.wait_for_function("document.getElementById('status').textContent === 'saved'")
            page.evaluate("document.getElementById('status').textContent = ''")
        page.wait_for_function("document.getElementById('count').textContent.includes('6 rated')")
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
        api(port, "/api/rate", {"item": item["item"], "scores": scores}, token_of(port))
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
    from narrative_infill.platform.analysis.annotate.study import Ratings

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
    # A score edited into the file by hand is named too, never exported for report --human to trip on.
    good = ratings.path.read_text().removeprefix('{"oops\n')
    ratings.path.write_text(good.replace('"fluency": 4', '"fluency": true', 1))
    with pytest.raises(StudyError, match="ratings-ann.jsonl, line 1: fluency: each must be an integer"):
        ratings.load()


# --- The server takes ratings only from its own page (no logs needed: a hand-made study) ---

SCORES = {"fluency": 4, "context_faithfulness": 3, "bidirectional_coherence": 4, "narrative_consistency": 5,
          "informativeness": 2}  # fmt: skip
SERVE = """
import json, sys
from pathlib import Path
from narrative_infill.platform.analysis.annotate.server import serve
folder, annotator, port = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
try:
    serve(folder, json.loads((folder / "manifest.json").read_text()), annotator, "127.0.0.1", port)
except KeyboardInterrupt:
    pass
"""


def small_study(folder, n=3):
    items = [{"item": f"item-{i:04d}", "sample_id": f"s{i}", "model": "mockllm/m", "setting": "l2",
              "problem": f"They left at dawn. {BLANK} They slept well.", "answer": "They walked all day."}
             for i in range(1, n + 1)]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({"seed": 0, "n": n, "logs": [], "items": items}))
    return folder


def serve_study(folder, annotator="ann", control=None):
    """One annotator's server on a study folder: (process, port); with ``control``, the test can hold
    its export (PAUSE)."""
    port, script, environment = free_port(), SERVE, None
    if control is not None:
        script, environment = PAUSE + SERVE, {**os.environ, "RATING_TEST_CONTROL": str(control)}
    command = [sys.executable, "-c", script, str(folder), annotator, str(port)]
    return wait_until_up(subprocess.Popen(command, env=environment), port), port


def stop(server):
    server.send_signal(signal.SIGINT)
    server.wait(timeout=30)


@pytest.fixture
def rating_server(tmp_path):
    """A study of three items and one annotator's server on it: (folder, port)."""
    folder = small_study(tmp_path / "study")
    server, port = serve_study(folder)
    yield folder, port
    stop(server)


def rate_request(port, token, scores=SCORES, note="", item="item-0001", **headers):
    """A save as the page sends it, with any header replaced (None: left out)."""
    body = json.dumps({"item": item, "scores": scores, "note": note}).encode()
    sent = {"Content-Type": "application/json", "X-Rating-Token": token, "Origin": f"http://127.0.0.1:{port}"}
    sent.update((key.replace("_", "-"), value) for key, value in headers.items())
    return send(port, "POST", "/api/rate", body, {k: v for k, v in sent.items() if v is not None})


def nothing_saved(folder):
    return not (folder / "ratings-ann.jsonl").exists() and not (folder / "ratings.csv").exists()


@pytest.mark.subprocess
def test_another_page_cannot_rate_or_read_the_token(rating_server):
    folder, port = rating_server
    # The review's reproduction: a simple text/plain POST from another page, sent without a preflight.
    status, _ = rate_request(port, None, Content_Type="text/plain", Origin="http://evil.example")
    assert status == 403 and nothing_saved(folder)
    token = token_of(port)
    assert len(token) >= 32
    refused = {
        "no token": ({"X_Rating_Token": None}, 403),
        "a wrong token": ({"X_Rating_Token": "0" * len(token)}, 403),
        "the token, from another page": ({"Origin": "http://evil.example"}, 403),
        "the token, from another port": ({"Origin": f"http://127.0.0.1:{port + 1}"}, 403),
        "the token, from an opaque origin": ({"Origin": "null"}, 403),
        "the token, as text/plain": ({"Content_Type": "text/plain"}, 415),
        "the token, no content type": ({"Content_Type": None}, 415),
        "the token, a rebinding Host": ({"Host": "evil.example"}, 403),
        "the token, a rebinding Host and port": ({"Host": f"evil.example:{port}"}, 403),
    }
    for case, (headers, expected) in refused.items():
        assert rate_request(port, token, **headers)[0] == expected, case
        assert nothing_saved(folder), case
    # DNS rebinding: a page served as evil.example (resolving to 127.0.0.1) must not read the token.
    for host in ("evil.example", f"evil.example:{port}"):
        status, page = send(port, "GET", "/", headers={"Host": host})
        assert status == 403 and token.encode() not in page
        assert send(port, "GET", "/api/state", headers={"Host": host})[0] == 403
    # The page itself, by either name of the loopback address.
    assert rate_request(port, token)[0] == 200
    assert (
        rate_request(
            port, token, item="item-0002", Host=f"localhost:{port}", Origin=f"http://localhost:{port}"
        )[0]
        == 200
    )
    assert (
        rate_request(port, token, item="item-0003", Origin=None)[0] == 200
    )  # curl with the token: no Origin
    assert len((folder / "ratings-ann.jsonl").read_text().splitlines()) == 3


@pytest.mark.subprocess
def test_the_page_cannot_be_framed_by_another_page(rating_server):
    """Clickjacking: another page framing the rating page would send the right token on the user's keys."""
    connection = http.client.HTTPConnection("127.0.0.1", rating_server[1], timeout=60)
    connection.request("GET", "/")
    headers = connection.getresponse().headers
    connection.close()
    assert (
        headers["X-Frame-Options"] == "DENY"
        and "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    )


@pytest.mark.subprocess
def test_a_body_over_64_kb_is_refused_unread(rating_server):
    folder, port = rating_server
    token = token_of(port)
    body = json.dumps({"item": "item-0001", "scores": SCORES, "note": "x" * 20_000_000}).encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.putrequest("POST", "/api/rate")
    for key, value in (("Content-Type", "application/json"), ("X-Rating-Token", token),
                       ("Content-Length", str(len(body)))):  # fmt: skip
        connection.putheader(key, value)
    connection.endheaders()  # the 20 MB body is never sent: the answer comes from the headers alone
    assert connection.getresponse().status == 413 and nothing_saved(folder)
    connection.close()
    assert rate_request(port, token, note="x" * 70_000)[0] == 413 and nothing_saved(folder)
    assert rate_request(port, token, Content_Length="lots")[0] == 400 and nothing_saved(folder)
    assert rate_request(port, token, note="x" * 60_000)[0] == 200  # a long note under the cap is kept


@pytest.mark.subprocess
def test_scores_are_integers_never_booleans(rating_server, tmp_path):
    folder, port = rating_server
    token = token_of(port)
    for bad in (True, False, 4.0, "4", 0, 6, None):
        status, answer = rate_request(port, token, scores={**SCORES, "fluency": bad})
        assert status == 400 and b"fluency" in answer and nothing_saved(folder), bad
    for body in (b"[1, 2]", b'{"item": "item-0001", "scores": [4, 4, 4, 4, 4]}', b'{"item": ["item-0001"]}',
                 b'{"item": "item-0001", "scores": {}, "note": 5}', b"\xff\xfe", b"[" * 60_000):  # fmt: skip
        headers = {"Content-Type": "application/json", "X-Rating-Token": token}
        assert send(port, "POST", "/api/rate", body, headers)[0] == 400 and nothing_saved(folder), body
    status, answer = rate_request(port, token, scores={**SCORES, "originality": 5})
    assert status == 400 and b"originality" in answer and nothing_saved(folder)
    assert rate_request(port, token)[0] == 200
    assert len(read_human_ratings(str(folder / "ratings.csv"))) == 1  # what report --human reads


@pytest.mark.subprocess
def test_the_server_stops_on_sigint_and_sigterm_even_when_sigint_was_ignored(tmp_path):
    """A shell that starts a command in the background (``cmd &`` in a script) hands it SIGINT
    ignored; the rating server still stops cleanly on SIGINT and on SIGTERM."""
    folder = small_study(tmp_path / "study")
    for sent in (signal.SIGINT, signal.SIGTERM):
        port = free_port()
        command = [sys.executable, "-c", SERVE, str(folder), "ann", str(port)]
        ignoring = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # noqa: E731
        server = wait_until_up(subprocess.Popen(command, preexec_fn=ignoring), port)
        server.send_signal(sent)
        try:
            assert server.wait(timeout=30) == 0, f"{sent.name}: exit status {server.returncode}"
        finally:
            server.kill()


@pytest.mark.subprocess
def test_a_revised_rating_is_marked_and_the_earlier_one_kept(rating_server):
    folder, port = rating_server
    token = token_of(port)
    assert rate_request(port, token)[0] == 200
    assert rate_request(port, token, item="item-0002")[0] == 200
    assert rate_request(port, token, scores={**SCORES, "fluency": 1}, note="second look")[0] == 200
    with open(folder / "ratings.csv", newline="") as handle:
        rows = {row["sample_id"]: row for row in csv.DictReader(handle)}
    assert (rows["s1"]["fluency"], rows["s1"]["note"], rows["s1"]["revised"]) == ("1", "second look", "true")
    assert rows["s2"]["revised"] == "false"
    lines = [json.loads(line) for line in (folder / "ratings-ann.jsonl").read_text().splitlines()]
    assert [(r["item"], r["fluency"]) for r in lines] == [
        ("item-0001", 4),
        ("item-0002", 4),
        ("item-0001", 1),
    ]
    assert len(read_human_ratings(str(folder / "ratings.csv"))) == 2  # one row per item and annotator


# Run in each server process of the concurrency test: the export pauses between reading the ratings
# files and writing ratings.csv while the test holds it, and a save that finds the study locked says so.
PAUSE = """
import fcntl, os, sys, time
from contextlib import contextmanager
from pathlib import Path
import narrative_infill.platform.analysis.annotate.study as study
control, me = Path(os.environ["RATING_TEST_CONTROL"]), sys.argv[2]
real_atomic_file, real_flock = study.atomic_file, fcntl.flock

@contextmanager
def paused_atomic_file(target):
    if Path(target).name == "ratings.csv" and (control / f"hold-{me}").exists():
        (control / f"read-{me}").touch()
        while (control / f"hold-{me}").exists():
            time.sleep(0.01)
    with real_atomic_file(target) as partial:
        yield partial

def observed_flock(handle, operation):
    if operation == fcntl.LOCK_EX:
        try:
            return real_flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            (control / f"waiting-{me}").touch()
    return real_flock(handle, operation)

study.atomic_file, fcntl.flock = paused_atomic_file, observed_flock
"""


def wait_for(condition, what):
    deadline = time.monotonic() + 120  # a hang guard only: every wait is on a state, never on time
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


@pytest.mark.subprocess
def test_two_annotators_servers_saving_interleaved_lose_no_rating(tmp_path):
    folder, control = small_study(tmp_path / "study"), tmp_path / "control"
    control.mkdir()
    servers, ports = [], {}
    for annotator in ("alice", "bob"):
        server, ports[annotator] = serve_study(folder, annotator, control)
        servers.append(server)
    tokens = {annotator: token_of(port) for annotator, port in ports.items()}

    def save(annotator, item):
        return rate_request(ports[annotator], tokens[annotator], item=item)[0]

    try:
        with ThreadPoolExecutor(2) as pool:
            # Each round: the first annotator's export has read every file and is held before writing
            # ratings.csv; the second saves meanwhile (done, or waiting on the study's lock); then both finish.
            for first, second, item in (("alice", "bob", "item-0001"), ("bob", "alice", "item-0002")):
                (control / f"hold-{first}").touch()
                held = pool.submit(save, first, item)
                read, waiting = control / f"read-{first}", control / f"waiting-{second}"
                wait_for(read.exists, f"{first}'s export read the files")
                overtaking = pool.submit(save, second, item)
                wait_for(lambda done=overtaking.done, path=waiting: done() or path.exists(),
                         f"{second}'s save finished or waits for the lock")  # fmt: skip
                (control / f"hold-{first}").unlink()
                assert (held.result(), overtaking.result()) == (200, 200)
                for marker in control.iterdir():
                    marker.unlink()
                with open(folder / "ratings.csv", newline="") as handle:
                    exported = {(row["annotator"], row["sample_id"]) for row in csv.DictReader(handle)}
                saved = {(a, f"s{i}") for a in ("alice", "bob") for i in range(1, int(item[-1]) + 1)}
                assert exported == saved, f"after the round {first} then {second}: missing {saved - exported}"
    finally:
        for server in servers:
            stop(server)


# --- Attacks on those guarantees by a careless annotator (issue 28's review) ---


def csv_rows(folder):
    with open(folder / "ratings.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.subprocess
def test_a_server_killed_mid_save_exports_that_rating_when_it_restarts(tmp_path):
    """Killed after the append and before ratings.csv: the page shows the item rated after the
    restart, so nobody re-rates it, and its rating must reach the export without another save."""
    folder, control = small_study(tmp_path / "study"), tmp_path / "control"
    control.mkdir()
    server, port = serve_study(folder, control=control)
    (control / "hold-ann").touch()
    with ThreadPoolExecutor(1) as pool:
        saving = pool.submit(rate_request, port, token_of(port))
        wait_for((control / "read-ann").exists, "the export read the ratings")
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
        with pytest.raises(OSError):  # never answered
            saving.result()
    server, port = serve_study(folder)
    try:
        assert json.loads(send(port, "GET", "/api/state")[1])["rated"] == 1
        assert [row["sample_id"] for row in csv_rows(folder)] == ["s1"]
    finally:
        stop(server)


@pytest.mark.subprocess
def test_an_export_that_cannot_be_written_is_answered_and_the_rating_kept(rating_server):
    """Two failures, two answers: the rating not written at all ("Not saved", the file named), or
    kept while only the export failed ("saved": true, where it is kept, why the export failed),
    never "not saved" for a rating that is on disk."""
    folder, port = rating_server
    token = token_of(port)
    (folder / "ratings-ann.jsonl").mkdir()  # unwritable, even for root
    status, answer = rate_request(port, token)
    assert status == 500 and json.loads(answer)["saved"] is False, answer
    assert (
        json.loads(answer)["error"].startswith("cannot write the rating:") and b"ratings-ann.jsonl" in answer
    )
    (folder / "ratings-ann.jsonl").rmdir()
    (folder / "ratings.csv").mkdir()
    status, answer = rate_request(port, token)
    reply = json.loads(answer)
    assert status == 500 and reply["saved"] is True, answer
    assert (
        reply["error"].startswith("Saved in ratings-ann.jsonl, but ratings.csv")
        and "not saved" not in answer.decode().lower()
    )
    assert "Is a directory" in reply["error"] and "next save" in reply["error"], reply
    assert len((folder / "ratings-ann.jsonl").read_text().splitlines()) == 1


@pytest.mark.subprocess
def test_an_export_failing_on_another_annotators_file_says_the_rating_is_kept(rating_server):
    """Reading another annotator's file fails (here: not UTF-8) after this rating is on disk: the
    decoding error was answered as a bad request, which the page showed as "Not saved", and it did
    not name the file."""
    folder, port = rating_server
    (folder / "ratings-bob.jsonl").write_bytes(b"\xff\n")
    status, answer = rate_request(port, token_of(port))
    reply = json.loads(answer)
    assert status == 500 and reply["saved"] is True and "ratings-bob.jsonl" in reply["error"], answer
    assert len((folder / "ratings-ann.jsonl").read_text().splitlines()) == 1


@pytest.mark.browser
def test_the_page_says_a_rating_is_kept_when_only_the_export_failed(tmp_path):
    """The page showed "Not saved: saved in ratings-ann.jsonl, but ..." and stayed on the item (a
    second Enter then saved it again, marked revised). Now: the item counts as rated, the page moves
    on, and the status says where the rating is kept and why the export failed; a rating that could
    not be written still says "Not saved"."""

    folder = small_study(tmp_path / "study")
    (folder / "ratings.csv").mkdir()
    server, port = serve_study(folder)
    try:
        with browser_page(f"http://127.0.0.1:{port}/") as page:
            page.wait_for_selector("mark")
            page.keyboard.type("45342")
            page.keyboard.press("Enter")
            page.wait_for_function("document.getElementById('status').textContent.includes('ratings.csv')")
            status = page.inner_text("#status")
            assert (
                status.startswith("Saved in ratings-ann.jsonl, but ratings.csv") and "Not saved" not in status
            )
            assert "Is a directory" in status, status
            assert page.inner_text("#count") == "Item 2 of 3 · 1 rated"
            (folder / "ratings.csv").rmdir()
            (folder / "ratings-ann.jsonl").rename(folder / "kept.jsonl")
            (folder / "ratings-ann.jsonl").mkdir()
            page.keyboard.type("45342")
            page.keyboard.press("Enter")
            page.wait_for_function("document.getElementById('status').textContent.startsWith('Not saved')")
            status = page.inner_text("#status")
            assert status.startswith("Not saved: cannot write the rating:") and "ratings-ann.jsonl" in status
            assert page.inner_text("#count") == "Item 2 of 3 · 1 rated"
    finally:
        stop(server)
    assert len((folder / "kept.jsonl").read_text().splitlines()) == 1


def test_a_last_rating_without_its_newline_is_kept_by_the_next_save(tmp_path):
    """An editor that drops the file's final newline: that line is a whole rating, shown as rated,
    and must not be cut as if a crash had left it half-written."""
    from narrative_infill.platform.analysis.annotate.study import Ratings

    ratings = Ratings(tmp_path, "ann")
    ratings.add("item-0001", SCORES, "first")
    ratings.path.write_text(ratings.path.read_text().rstrip("\n"))
    assert list(ratings.load()) == ["item-0001"]
    ratings.add("item-0002", SCORES)
    assert list(ratings.load()) == ["item-0001", "item-0002"]
    assert ratings.path.read_text().count("\n") == 2


def test_a_folder_with_ratings_is_never_given_a_new_draw(tmp_path):
    """manifest.json deleted by hand: a new draw would reuse the item ids for other samples, and the
    ratings already given would be exported against stories nobody rated."""
    folder = small_study(tmp_path / "study")
    (folder / "ratings-ann.jsonl").write_text(json.dumps({"item": "item-0001", **SCORES}) + "\n")
    (folder / "manifest.json").unlink()
    with pytest.raises(StudyError, match="ratings-ann.jsonl.*manifest.json"):
        open_study(folder, [str(tmp_path / "logs")], 3, 0)
    assert not (folder / "manifest.json").exists()


@pytest.mark.subprocess
def test_a_note_that_is_not_text_is_refused(rating_server):
    folder, port = rating_server
    token = token_of(port)
    for bad in (0, False, [], {}):
        status, answer = rate_request(port, token, note=bad)
        assert status == 400 and b"note" in answer and nothing_saved(folder), bad
    assert rate_request(port, token, note=None)[0] == 200  # no note at all


@pytest.mark.subprocess
def test_a_rating_of_an_item_outside_the_study_is_named_not_dropped(rating_server):
    folder, port = rating_server
    (folder / "ratings-ann.jsonl").write_text(json.dumps({"item": "item-0099", **SCORES}) + "\n")
    status, answer = rate_request(port, token_of(port))
    assert status == 500 and b"item-0099" in answer and json.loads(answer)["saved"] is True  # this one is kept


@pytest.mark.browser
def test_enter_pressed_again_while_saving_saves_once_and_skips_no_item(tmp_path):
    """An impatient annotator: Enter twice, or Enter then the right arrow, before the first save is
    answered. The item is saved once (never marked revised) and the page lands on the next item."""

    folder, control = small_study(tmp_path / "study"), tmp_path / "control"
    control.mkdir()
    server, port = serve_study(folder, control=control)
    try:
        with browser_page() as page:
            page.add_init_script("""(() => {  // counts the saves the page sends
                const real = window.fetch; window.posts = 0;
                window.fetch = (path, options) => { if (options && options.method === "POST") window.posts++;
                                                    return real(path, options); };
            })()""")
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("mark")
            (control / "hold-ann").touch()
            page.keyboard.type("45342")
            page.keyboard.press("Enter")
            wait_for((control / "read-ann").exists, "the first save reached the export")
            page.keyboard.press("Enter")
            page.keyboard.press("ArrowRight")
            assert page.evaluate("window.posts") == 1
            (control / "hold-ann").unlink()
            page.wait_for_function("document.getElementById('status').textContent === 'saved'")
            assert page.inner_text("#count").startswith("Item 2 of 3")
    finally:
        (control / "hold-ann").unlink(missing_ok=True)
        stop(server)
    assert len((folder / "ratings-ann.jsonl").read_text().splitlines()) == 1


@pytest.mark.subprocess
def test_a_stale_annotator_lock_naming_a_live_process_does_not_lock_the_annotator_out(tmp_path):
    """Killed with -9, the server leaves its lock file; after a reboot (or long enough) its process id
    belongs to another program, which must not keep the annotator out. A running server still does."""
    folder = small_study(tmp_path / "study")
    (folder / ".lock-ann").write_text(str(os.getpid()))  # alive, and no rating server
    server, port = serve_study(folder)
    try:
        second = subprocess.run([sys.executable, "-c", SERVE, str(folder), "ann", str(free_port())],
                                capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert (
            second.returncode != 0
            and f"already rating in this study (server process {server.pid})" in second.stderr
        )
    finally:
        stop(server)
    assert not (folder / ".lock-ann").exists()
