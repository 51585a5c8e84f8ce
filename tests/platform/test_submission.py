"""Leaderboard submissions (``platform/analysis/submission/``): submit -> verify -> leaderboard on demo
logs of scripted models, every tampering caught and named, and the page in a real browser."""

from __future__ import annotations

import json
import shutil
import time
import zipfile

import pytest
from helpers import browser_page, mock_output, umask
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.platform.analysis.submission.build import content_hash
from narrative_infill.platform.cli import main
from narrative_infill.tasks import infill_task
from narrative_infill.tasks.infill import TASK_VERSION

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

def test_submit_writes_a_canonical_self_hashed_file(submissions):
    document = json.loads((submissions / "alpha.json").read_text())
    assert document["sha256"] == content_hash(document) and document["track"] == "demo"
    assert set(document["settings"]) == {"l1", "l2"} and document["settings"]["l2"]["n"] == 24
    assert (
        document["settings"]["l2"]["qavg"]["mean"] == pytest.approx(3.8)
        and document["settings"]["l2"]["high"] == 0.0
    )
    provenance = document["provenance"]
    assert provenance["dataset"]["source"] == "demo" and provenance["task_versions"] == [str(TASK_VERSION)]
    assert len(provenance["logs"]) == 2 and all(len(entry["sha256"]) == 64 for entry in provenance["logs"])
    assert (
        provenance["judges"] == ["grader=mockllm/grader"] and "MiniLM" in provenance["metrics_signatures"][0]
    )


def test_verify_recomputes_every_claim_from_the_logs(submissions, logs, capsys):
    assert main(["verify", str(submissions / "alpha.json"), "--logs", str(logs / "alpha")]) == 0
    out = capsys.readouterr().out
    assert "every aggregate recomputed" in out and "48 answered samples' five metrics and AtAvg re-scored here" in out
    assert (
        "answers re-extracted from the raw outputs" in out
        and "problems and golds compared with the data" in out
    )
    assert "verified: every claim and every sample recomputed" in out
    record = json.loads((submissions / "alpha.json.verification.json").read_text())
    assert record["verified"] is True and not record["failures"] and not record["unchecked"]


def _tampered(submissions, tmp_path, edit, rehash=True):
    document = json.loads((submissions / "alpha.json").read_text())
    edit(document)
    if rehash:
        document["sha256"] = content_hash(document)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("edit", "rehash", "message"),
    [
        (
            lambda d: d["settings"]["l2"]["atavg"].update(mean=0.9),
            False,
            "the content does not match its hash",
        ),
        (
            lambda d: d["settings"]["l2"]["atavg"].update(mean=0.9),
            True,
            "settings.l2.atavg.mean: claimed 0.9, its own samples give",
        ),
        (
            lambda d: (
                [row.__setitem__(2, 0.9) for row in d["samples"]["l2"]]
                and d["settings"]["l2"]["atavg"].update(mean=0.9)
            ),
            True,
            "settings.l2.atavg.mean: claimed 0.9, the data gives",
        ),
        (
            lambda d: d["model"].update(id="mockllm/someone-else"),
            True,
            "model: the logs are of ['mockllm/alpha']",
        ),
        (
            lambda d: d["provenance"].update(samples_digest="0" * 64),
            True,
            "samples_digest: the logs' answers and scores differ",
        ),
        (lambda d: d.update(track="olympics"), True, "track must be one of full, 10pct, demo, custom"),
    ],
    ids=[
        "edited-claim",
        "edited-and-rehashed",
        "edited-claim-and-samples",
        "other-model",
        "digest",
        "unknown-track",
    ],
)
def test_verify_names_each_tampering(submissions, logs, tmp_path, capsys, edit, rehash, message):
    path = _tampered(submissions, tmp_path, edit, rehash)
    assert main(["verify", str(path), "--logs", str(logs / "alpha")]) == 1
    assert message in capsys.readouterr().out


def test_verify_names_a_missing_or_changed_log(submissions, logs, tmp_path, capsys):
    copy = tmp_path / "logs"
    shutil.copytree(logs / "alpha", copy)
    first, second = sorted(copy.glob("*.eval"))
    first.unlink()
    with zipfile.ZipFile(second, "a") as archive:  # a log edited after submission
        archive.writestr("extra.txt", "edited")
    assert main(["verify", str(submissions / "alpha.json"), "--logs", str(copy)]) == 1
    out = capsys.readouterr().out
    assert (
        f"log {first.name} (setting" in out
        and "is missing from" in out
        and f"log {second.name} has changed since submission" in out
    )


@pytest.mark.parametrize(
    "content", ['{"schema_version": 1, "kind": "narr', "[1, 2, 3]"], ids=["truncated", "not-an-object"]
)
def test_a_broken_file_is_a_clear_error(tmp_path, capsys, content):
    path = tmp_path / "broken.json"
    path.write_text(content)
    assert main(["verify", str(path)]) == 1
    assert "broken.json" in capsys.readouterr().err


def test_bad_submit_input_writes_nothing(logs, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["submit", str(logs), "-o", str(out), "--track", "demo"]) == 1
    assert "logs of 2 models" in capsys.readouterr().err
    assert main(["submit", str(logs / "alpha"), "-o", str(out), "--track", "olympics"]) == 1
    assert "unknown track 'olympics'" in capsys.readouterr().err
    assert main(["submit", str(logs / "alpha"), "-o", str(out), "--track", "full"]) == 1
    assert "not the published hub dataset" in capsys.readouterr().err
    limited = tmp_path / "limited"
    model = get_model(
        "mockllm/alpha", custom_outputs=lambda m, t, c, g: mock_output("<ANSWER>x.</ANSWER>"), memoize=False
    )
    eval(
        infill_task("l2", data="demo", backbone="minilm"),
        model=model,
        limit=3,
        log_dir=str(limited),
        display="none",
    )
    assert main(["submit", str(limited), "-o", str(out), "--track", "demo"]) == 1
    assert "run with --limit/--sample-id" in capsys.readouterr().err
    assert not out.exists()


def test_leaderboard_refuses_a_tampered_file_and_boards_the_rest(submissions, tmp_path, capsys):
    folder = tmp_path / "subs"
    shutil.copytree(submissions, folder)
    document = json.loads((folder / "beta.json").read_text())
    document["settings"]["l1"]["atavg"]["mean"] = 0.99
    (folder / "beta.json").write_text(json.dumps(document))
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site")]) == 1
    assert "beta.json: the content does not match its hash" in capsys.readouterr().err
    board = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert [r["file"] for r in board["refused"]] == ["beta.json"]
    assert [r["file"] for r in board["rows"] if not r["baseline"]] == ["alpha.json"]


def test_leaderboard_never_replaces_its_submissions_and_takes_the_umask(submissions, tmp_path, capsys):
    folder = shutil.copytree(submissions, tmp_path / "subs")
    before = sorted(p.name for p in folder.iterdir())
    for out in (folder, folder / "site", tmp_path):
        assert main(["leaderboard", str(folder), "-o", str(out)]) == 1
        assert "choose an output folder apart from the inputs" in capsys.readouterr().err
        assert sorted(p.name for p in folder.iterdir()) == before
    with umask(0o022):
        assert main(["leaderboard", str(folder), "-o", str(tmp_path / "site")]) == 0
    assert (tmp_path / "site").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "site" / "index.html").stat().st_mode & 0o777 == 0o644


@pytest.fixture(scope="module")
def site(submissions, logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    assert main(["leaderboard", str(submissions), "--logs", str(logs), "-o", str(out)]) == 0
    return out


def test_leaderboard_files_rank_with_intervals_and_show_baselines(site):
    data = json.loads((site / "leaderboard.json").read_text())
    rows = {r["model"]: r for r in data["rows"]}
    assert rows["mockllm/alpha"]["badge"] == rows["mockllm/beta"]["badge"] == "verified"  # checked here
    assert rows["baseline/empty"]["atavg"][0] == 0.0
    assert 0 <= rows["baseline/neighbour"]["atavg"][0] < 1
    low, high = rows["mockllm/beta"]["atavg"][1:]
    assert low <= rows["mockllm/beta"]["atavg"][0] <= high
    # Both QAvg are 3.8 on every instance: the paired test finds no difference, so both rank first,
    # each tied with the other.
    assert rows["mockllm/alpha"]["ranked_on"] == "qavg"
    assert rows["mockllm/beta"]["rank"] == rows["mockllm/alpha"]["rank"] == 1
    assert rows["mockllm/alpha"]["tied_with"] and rows["mockllm/beta"]["tied_with"]
    markdown = (site / "leaderboard.md").read_text()
    assert "## Track: demo" in markdown and "| verified |" in markdown
    html = (site / "index.html").read_text()
    assert "<script src" not in html and "http" not in html.split("<body>")[1]  # self-contained, no network


@pytest.mark.browser
def test_the_page_sorts_and_filters_in_a_real_browser(site):

    data = json.loads((site / "leaderboard.json").read_text())
    l2 = {r["model"]: r["settings"]["l2"]["atavg"] for r in data["rows"] if r["settings"].get("l2")}
    started = time.monotonic()
    with browser_page((site / "index.html").as_uri()) as page:
        models = lambda: page.eval_on_selector_all(
            "table[data-track=demo] tbody tr", "rows => rows.map(r => r.dataset.model)"
        )  # noqa: E731
        before = models()
        page.click("table[data-track=demo] th:text-is('AtAvg l2')")
        descending = models()
        # rows in descending AtAvg l2 (null rules may tie: their order among equals is the page's)
        values = [l2[model] for model in descending]
        assert values == sorted(values, reverse=True) and set(descending) == set(l2) and descending != before
        page.click("table[data-track=demo] th:text-is('AtAvg l2')")
        assert [l2[model] for model in models()] == list(reversed(values))
        page.select_option("#judge-filter", "grader=mockllm/grader")
        assert set(models()) == {r["model"] for r in data["rows"]}  # baselines stay for reference
    print(f"browser test: {time.monotonic() - started:.1f} s")


@pytest.mark.browser
def test_bundle_logs_links_each_entry_to_a_viewer_that_loads_its_logs(submissions, logs, tmp_path):
    import functools
    import http.server
    import threading

    site = tmp_path / "site"
    assert main(["leaderboard", str(submissions), "-o", str(site), "--bundle-logs", str(logs)]) == 0
    rows = {r["model"]: r for r in json.loads((site / "leaderboard.json").read_text())["rows"]}
    assert rows["mockllm/alpha"]["logs_bundle"] == "logs/alpha/index.html"
    assert "logs_bundle" not in rows["baseline/empty"]
    bundled = sorted(p.name for p in (site / "logs" / "alpha" / "logs").glob("*.eval"))
    assert bundled == sorted(p.name for p in (logs / "alpha").rglob("*.eval"))
    # The viewer fetches its logs, which a browser refuses from file:// pages: serve the site, as a host would.
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with browser_page(f"http://127.0.0.1:{server.server_address[1]}/index.html") as page:
            page.click("table[data-track=demo] tr[data-model='mockllm/alpha'] a.logs-link")
            page.wait_for_url("**/logs/alpha/**")
            page.wait_for_selector("text=mockllm/alpha", timeout=60_000)  # the viewer read the log
    finally:
        server.shutdown()


def test_bundle_logs_refuses_an_entry_whose_log_is_missing_and_writes_nothing(
    submissions, logs, tmp_path, capsys
):
    partial = tmp_path / "logs"
    shutil.copytree(logs / "alpha", partial / "alpha")
    assert (
        main(["leaderboard", str(submissions), "-o", str(tmp_path / "site"), "--bundle-logs", str(partial)])
        == 1
    )
    assert "beta.json: log " in capsys.readouterr().err and not (tmp_path / "site").exists()


def test_bundle_logs_refuses_a_log_edited_after_submitting(submissions, logs, tmp_path, capsys):
    from inspect_ai.log import read_eval_log, write_eval_log

    edited = tmp_path / "logs"
    shutil.copytree(logs, edited)
    target = sorted((edited / "alpha").rglob("*.eval"))[0]
    log = read_eval_log(str(target))
    log.samples[0].scores["metrics"].value["rouge1"] = 1.0  # a better score than the one submitted
    write_eval_log(log, str(target))
    site = tmp_path / "site"
    assert main(["leaderboard", str(submissions), "-o", str(site), "--bundle-logs", str(edited)]) == 1
    error = capsys.readouterr().err
    assert f"alpha.json: log {target.name}" in error and "SHA-256" in error and not site.exists()
    # The untouched original kept beside it is the one the entry's viewer gets.
    shutil.copy2(sorted((logs / "alpha").rglob(target.name))[0], edited / "original.eval")
    (edited / "backup").mkdir()
    shutil.move(edited / "original.eval", edited / "backup" / target.name)
    assert main(["leaderboard", str(submissions), "-o", str(site), "--bundle-logs", str(edited)]) == 0
    [bundled] = (site / "logs" / "alpha" / "logs").glob(target.name)
    assert bundled.read_bytes() == sorted((logs / "alpha").rglob(target.name))[0].read_bytes()


def test_submit_never_writes_over_a_log_it_reads(logs, tmp_path, capsys):
    log = tmp_path / "alpha.eval"
    shutil.copy(sorted((logs / "alpha").glob("*.eval"))[0], log)
    before = log.read_bytes()
    assert main(["submit", str(log), "-o", str(log), "--track", "demo"]) == 1
    assert f"output {log} is the input {log}" in capsys.readouterr().err
    assert log.read_bytes() == before
