"""Interruption and resume with real parts: the llama.cpp server with SmolLM2, Inspect's own
``eval``, ``eval-retry`` and ``eval-set`` commands, ``narrative-infill serve`` and ``report``.

The server dies after a fixed number of answers (a stand-in) or the command is signalled mid-run
(the real server), and the logs and the report must still count every sample exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import free_port
from inspect_ai.log import read_eval_log

from narrative_infill.platform.cli import main
from narrative_infill.platform.local.server import SERVER_COMMAND_VARIABLE, LocalModelServer, port_in_use

BIN = Path(sys.executable).parent
#: Two samples at a time, so that a run is still going when the test interrupts it.
EVAL_OPTIONS = ["--model", "llama-cpp-python/smollm2", "-T", "data=demo", "--max-retries", "1", "--timeout", "30",
                "--max-samples", "2", "--display", "plain"]  # fmt: skip
#: Against the stand-in: one sample at a time, so that each answer is one finished sample.
STANDIN_OPTIONS = ["--model", "llama-cpp-python/smollm2", "-T", "data=demo", "-T", "backbone=minilm",
                   "--max-retries", "1", "--timeout", "30", "--max-samples", "1", "--display", "plain"]  # fmt: skip
STANDIN = Path(__file__).parents[1].joinpath("standin_llama_server.py")
#: Completions the stand-in answers before it dies.
ANSWERS = 5


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.25)


def logs(log_dir: Path) -> list[Path]:
    return sorted(log_dir.glob("*.eval"))


def started_samples(log_dir: Path) -> int:
    """Samples the running eval has written so far (its realtime log), 0 before the first."""
    import zipfile

    try:
        with zipfile.ZipFile(logs(log_dir)[-1]) as archive:
            return sum(1 for name in archive.namelist() if name.startswith("samples/"))
    except (IndexError, zipfile.BadZipFile, OSError):
        return 0


@pytest.mark.subprocess
def test_a_server_dead_after_n_answers_ends_the_run_and_eval_retry_completes_it_once(tmp_path, monkeypatch):
    """No timing: a stand-in server answers ANSWERS completions and dies on the next, one sample
    at a time, so the run ends in an error with exactly ANSWERS samples done, whatever the load."""
    monkeypatch.setenv(SERVER_COMMAND_VARIABLE, f"{sys.executable} {STANDIN}")
    monkeypatch.setenv("STANDIN_ANSWERS", str(ANSWERS))
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    log_dir, port = tmp_path / "logs", free_port()
    with LocalModelServer(model, port=port) as server:
        env = {**os.environ, **server.environment(), "INSPECT_LOG_DIR": str(log_dir)}
        command = [str(BIN / "inspect"), "eval", "narrative_infill/l2", *STANDIN_OPTIONS]
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, run.stderr[-2000:]  # inspect eval exits 0; the log records the error
    [failed] = logs(log_dir)
    interrupted = read_eval_log(str(failed))  # readable
    done = [s for s in interrupted.samples if not s.error]
    assert interrupted.status == "error" and len(done) == ANSWERS
    monkeypatch.setenv("STANDIN_ANSWERS", "all")
    with LocalModelServer(model, port=port) as again:  # a new server, with a new key
        retry = subprocess.run([str(BIN / "inspect"), "eval-retry", str(failed), "--max-retries", "1", "--timeout", "60",
                                "--display", "plain"], env={**env, **again.environment()}, capture_output=True, text=True,
                               timeout=900)  # fmt: skip
    assert retry.returncode == 0, retry.stderr[-2000:]
    completed = [read_eval_log(str(path)) for path in logs(log_dir) if path != failed]
    assert [log.status for log in completed] == ["success"]
    ids = [(s.id, s.epoch) for s in completed[0].samples]
    assert len(ids) == len(set(ids)) == 24 and all("metrics" in s.scores for s in completed[0].samples)
    assert main(["report", str(log_dir), "-o", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert "24 samples from 1 logs" in report and "1 log(s) set aside" in report
    assert not port_in_use(port)


def _serve(port: int, *command: str, env: dict, ignore_sigint: bool = False) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "narrative-infill"), "serve", "--port", str(port), "--", str(BIN / "inspect"), *command],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None,
    )  # fmt: skip


@pytest.mark.local_server
@pytest.mark.parametrize(
    "ignore_sigint", [False, True], ids=["foreground", "started-by-a-shell-in-the-background"]
)
def test_sigterm_to_serve_leaves_a_readable_log_and_no_server(tmp_path, ignore_sigint):
    """A shell's background job starts with SIGINT ignored; Inspect must still get its SIGINT."""
    log_dir, port = tmp_path / "logs", free_port()
    serving = _serve(port, "eval", "narrative_infill/l2", *EVAL_OPTIONS, "--log-dir", str(log_dir), "--log-buffer", "1",
                     env=dict(os.environ), ignore_sigint=ignore_sigint)  # fmt: skip
    wait_for(lambda: started_samples(log_dir) >= 2, 180, "a few samples to finish")
    serving.send_signal(signal.SIGTERM)
    assert serving.wait(timeout=120) != 0
    [path] = logs(log_dir)
    log = read_eval_log(str(path))
    assert log.status == "cancelled"
    finished = [s for s in log.samples if not s.error and s.scores]
    assert len(finished) >= 2 and all("atavg" in s.scores["metrics"].value for s in finished)
    assert not port_in_use(port)
    assert (
        subprocess.run(["pgrep", "-f", f"local.llama_server.*--port {port}"], capture_output=True).returncode
        == 1
    )  # no server left


@pytest.mark.local_server
def test_an_interrupted_eval_set_rerun_does_only_what_is_missing(tmp_path):
    log_dir, port = tmp_path / "logs", free_port()
    command = ["eval-set", "narrative_infill/l1", "narrative_infill/l2", *EVAL_OPTIONS, "-T", "domain=sind",
               "--log-dir", str(log_dir), "--max-tasks", "1", "--log-buffer", "1"]  # fmt: skip

    def finished() -> list[Path]:
        return [
            path for path in logs(log_dir) if read_eval_log(str(path), header_only=True).status == "success"
        ]

    serving = _serve(port, *command, env=dict(os.environ))
    wait_for(lambda: len(logs(log_dir)) >= 1 and bool(finished()), 300, "the first task to finish")
    serving.send_signal(signal.SIGTERM)
    serving.wait(timeout=120)
    [done] = finished()
    stamp = done.stat().st_mtime_ns
    assert len(finished()) == 1  # the other task was interrupted
    rerun = _serve(port, *command, env=dict(os.environ))
    assert rerun.wait(timeout=600) == 0, rerun.stderr.read()[-2000:]
    completed = finished()
    assert len(completed) == 2 and done in completed and done.stat().st_mtime_ns == stamp  # not run again
    assert main(["report", str(log_dir), "-o", str(tmp_path / "report")]) == 0
    assert "12 samples from 2 logs" in (tmp_path / "report" / "report.md").read_text()
    assert not port_in_use(port)
