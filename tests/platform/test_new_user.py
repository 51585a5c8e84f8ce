"""What a new user hits first (issue 61, items 1-3, 5 and 6): a run that ended early, corrupt
logs beside good ones, two runs judged differently, the report of a run without a judge, and
intervals of scores that cannot leave their range. Each runs the commands as a user types them,
on real Inspect logs of scripted models scored with MiniLM."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import VALID_VERDICT, mock_output
from inspect_ai import eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model
from submission_runs import DEMO_ROWS, first_half_of_the_gold, small_demo_run

from narrative_infill.platform.cli import main
from narrative_infill.tasks import infill_task

pytestmark = pytest.mark.heavy  # the logs are scored with a real embedding backbone

BIN = Path(sys.executable).parent


def answered(text: str):
    return lambda messages: f"<ANSWER>{text}</ANSWER>"


def judged_demo_run(log_dir: Path, respond, name: str = "judged") -> None:
    """``small_demo_run``'s eval, judged by a scripted grader."""
    task = infill_task("l2", data="demo", domain="sind", backbone="minilm", judge=True)
    model = get_model(
        f"mockllm/{name}", custom_outputs=lambda m, t, c, g: mock_output(respond(m)), memoize=False
    )
    grader = get_model(
        "mockllm/grader", custom_outputs=lambda m, t, c, g: mock_output(VALID_VERDICT), memoize=False
    )
    [log] = eval(task, model=model, model_roles={"grader": grader}, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Run "judged" (a grader ran) and run "plain" (no judge), each alone in its folder."""
    root = tmp_path_factory.mktemp("new_user")
    judged_demo_run(root / "judged", lambda m: f"<ANSWER>{first_half_of_the_gold(m)}</ANSWER>")
    small_demo_run(root / "plain", answered("They walked home together."), name="plain")
    return {"judged": root / "judged", "plain": root / "plain"}


def corrupted_copy(source: Path, target: Path) -> list[Path]:
    """``source``'s logs in ``target`` with two truncated .eval files beside them."""
    shutil.copytree(source, target)
    bad = [
        target / "2026-01-01T00-00-00+00-00_l2_bad1.eval",
        target / "2026-01-01T00-00-01+00-00_l2_bad2.eval",
    ]
    good = next(source.glob("*.eval")).read_bytes()
    bad[0].write_bytes(good[: len(good) // 2])  # cut mid-file: no central directory
    bad[1].write_bytes(b"not a zip at all")
    return bad


def printed_retry(capsys, log_dir: Path, out: Path) -> list[str]:
    """The command ``submit`` prints to finish the unfinished run in ``log_dir``, as words."""
    assert main(["submit", str(log_dir), "-o", str(out), "--track", "demo"]) == 1
    message = capsys.readouterr().err
    assert "finish it with: " in message, message
    return shlex.split(message.partition("finish it with: ")[2].splitlines()[0])


def run_as_printed(words: list[str], cwd: Path) -> None:
    """``words`` run from ``cwd`` as a user of this environment runs them (its bin on the PATH)."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [*words, "--display", "none"], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]


def flaky(messages) -> str:
    if "museum" in messages[-1].text:
        raise RuntimeError("server went away")
    return "<ANSWER>They all went fishing at dawn.</ANSWER>"


def test_a_hosted_model_s_retry_is_inspect_s_own_command_with_the_run_s_folder(tmp_path, capsys):
    """Item 1, a hosted model (here mockllm, whose retry would need a network to count tokens):
    ``inspect eval-retry`` with ``--log-dir``, so the retried log lands where ``report`` looks."""
    log_dir = tmp_path / "logs"
    failed = small_demo_run(log_dir, flaky, max_samples=1)
    assert failed.status == "error"
    words = printed_retry(capsys, log_dir, tmp_path / "s.json")
    assert words == ["inspect", "eval-retry", str(failed.location), "--log-dir", str(log_dir)]


@pytest.mark.subprocess
def test_a_served_run_is_finished_by_the_serve_command_printed(standin, tmp_path, monkeypatch, capsys):
    """Item 1, the README's route: a local model behind ``serve`` (the stand-in llama.cpp server,
    dead after five answers). ``inspect eval-retry LOG`` alone finds no server; what is printed is
    ``serve``'s command, and it finishes the run in the run's folder. The one word added is a free
    ``--port``: the default one may be another server's on a shared machine."""
    from helpers import free_port

    from narrative_infill.platform.local.server import LocalModelServer

    log_dir = tmp_path / "logs"
    monkeypatch.setenv("STANDIN_ANSWERS", "5")
    with LocalModelServer(standin, port=free_port()) as server:
        for name, value in server.environment().items():
            monkeypatch.setenv(name, value)
        [failed] = eval("narrative_infill/l2", task_args={"data": "demo", "backbone": "minilm"},
                        model="llama-cpp-python/smollm2", log_dir=str(log_dir), max_retries=1, timeout=30,
                        max_samples=1, display="none")  # fmt: skip
    assert failed.status == "error"
    words = printed_retry(capsys, log_dir, tmp_path / "s.json")
    assert words[:5] == ["narrative-infill", "serve", "--", "inspect", "eval-retry"]
    assert words[5:] == [str(failed.location), "--log-dir", str(log_dir)]
    monkeypatch.setenv("STANDIN_ANSWERS", "all")
    run_as_printed([*words[:2], "--port", str(free_port()), *words[2:]], cwd=tmp_path)
    statuses = sorted(read_eval_log(str(p), header_only=True).status for p in log_dir.glob("*.eval"))
    assert statuses == ["error", "success"]


@pytest.mark.parametrize("command", ["report", "submit", "compare"])
def test_every_unreadable_log_is_named_at_once_and_set_aside_only_when_asked(runs, tmp_path, capsys, command):
    """Item 2: without the option the command refuses naming both bad files; with it, each is named
    as skipped and the command runs on the rest."""
    folder = tmp_path / "logs"
    bad = corrupted_copy(runs["plain"], folder)
    args = {
        "report": ["report", str(folder), "-o", str(tmp_path / "out")],
        "submit": ["submit", str(folder), "-o", str(tmp_path / "s.json"), "--track", "custom"],
        "compare": ["compare", str(folder), str(runs["plain"])],
    }[command]
    assert main(args) == 1
    refused = capsys.readouterr().err
    assert all(f"{path.name}: not a readable Inspect log" in refused for path in bad), refused
    assert "--skip-unreadable" in refused
    assert main([*args, "--skip-unreadable"]) == 0
    err = capsys.readouterr().err
    skipped = [line for line in err.splitlines() if line.startswith("skipped (unreadable): ")]
    assert len(skipped) == 2 and all(any(path.name in line for line in skipped) for path in bad), err


def test_compare_of_non_judge_metrics_across_different_judges(runs, capsys):
    """Item 3: AtAvg of a judged run against a run without a judge; a judge dimension is refused."""
    a, b = str(runs["judged"]), str(runs["plain"])
    assert main(["compare", a, b]) == 1
    assert "differ in their judges" in capsys.readouterr().err
    assert main(["compare", a, b, "--metrics", "atavg,rouge1"]) == 0
    printed = capsys.readouterr().out
    assert "| atavg |" in printed and "| rouge1 |" in printed and "| qavg |" not in printed
    assert main(["compare", a, b, "--metrics", "atavg,fluency"]) == 1
    err = capsys.readouterr().err
    assert "fluency" in err and "differ in their judges (A: grader=mockllm/grader; B: none)" in err
    assert main(["compare", a, b, "--metrics", "atavgg"]) == 1
    assert "atavgg" in capsys.readouterr().err


def test_the_report_of_a_run_without_a_judge_reads_as_text_and_leaves_the_figure_out(runs, tmp_path):
    """Item 5: headers are words, not Python tuples; the judge's figure is left out with its reason."""
    out = tmp_path / "report"
    assert main(["report", str(runs["plain"]), "-o", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "('" not in text and "AtAvg l2" in text
    assert not (out / "figure2_high_by_model.png").exists()
    assert "- **figure2_high_by_model**: no judge scores in the logs" in text


def test_a_judged_report_draws_its_figure_with_the_whole_title(runs, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(runs["judged"]), "-o", str(out)]) == 0
    from PIL import Image

    image = Image.open(out / "figure2_high_by_model.png").convert("L")
    width, height = image.size
    edges = [image.getpixel((x, y)) for y in range(height // 8) for x in (0, width - 1)]
    assert min(edges) > 200  # the title's letters never touch the left or right edge


def test_intervals_are_clipped_to_the_score_range_and_labelled(tmp_path, capsys):
    """Item 6: AtAvg near 0 over few narratives: its t interval would start below 0."""
    sind = [row for row in DEMO_ROWS if row["dataset"] == "sind"]
    hit = {row["problem"]: row["gold_answer"] for row in sind[:1]}

    def mostly_empty(messages):
        prompt = messages[-1].text
        gold = next((g for p, g in hit.items() if p in prompt), None)
        return f"<ANSWER>{gold or 'x'}</ANSWER>"

    log = small_demo_run(tmp_path / "logs", mostly_empty)
    [atavg] = [score.metrics for score in log.results.scores if score.name == "atavg"]
    assert atavg["mean"].value - 2 * atavg["stderr"].value < 0  # the t interval would leave [0, 1]
    assert atavg["ci_lower"].value == 0.0 and atavg["ci_upper"].value <= 1.0
    assert atavg["ci_clipped"].value == 1
