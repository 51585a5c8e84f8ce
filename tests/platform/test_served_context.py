"""The output cap against a vLLM server's served context (``solvers/served_context.py``), through
Inspect's own vllm provider, against a stand-in server that reports a context of our choosing
(``standin_openai_server.py``); the real engine's runs are in ``test_vllm_engine.py``. And a run
that ends in error is a failing exit of the package's command, though ``inspect eval`` exits 0."""

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import free_port
from inspect_ai import eval
from inspect_ai.model import get_model

from narrative_infill.platform.local.server import SERVER_COMMAND_VARIABLE
from narrative_infill.solvers.served_context import METADATA_KEY

STANDIN = Path(__file__).parents[1].joinpath("standin_openai_server.py")
TEMPLATE_TOKENS = 12  # the stand-in's count for the chat template around the messages


@pytest.fixture
def standin_vllm(tmp_path):
    """Start a stand-in vLLM server serving ``max_model_len`` tokens; yields a starter that
    returns (model, file of the max_tokens each chat request carried)."""
    processes = []

    def start(max_model_len: int):
        port, key, requests = free_port(), secrets.token_urlsafe(16), tmp_path / "requests.jsonl"
        command = [sys.executable, str(STANDIN), "--port", str(port), f"--api-key={key}"]
        # A name of its own: Inspect's vllm provider keeps one server per model name for the process.
        name = f"smollm2-{port}"
        command += [
            "--max-model-len",
            str(max_model_len),
            "--requests",
            str(requests),
            "--served-model-name",
            name,
        ]
        processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL))
        url = f"http://127.0.0.1:{port}/v1"
        probe = urllib.request.Request(f"{url}/models", headers={"Authorization": f"Bearer {key}"})
        deadline = time.monotonic() + 120  # a loaded machine starts even this slowly
        while True:
            try:
                urllib.request.urlopen(probe, timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline and processes[-1].poll() is None, "stand-in did not start"
                time.sleep(0.2)
        return get_model(f"vllm/{name}", base_url=url, api_key=key, memoize=False), requests

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


def run(task: str, model, tmp_path, **options):
    [log] = eval(
        f"narrative_infill/{task}",
        model=model,
        task_args={"data": "demo"},
        limit=2,
        score=False,
        max_retries=0,
        log_dir=str(tmp_path / "logs"),
        display="none",
        **options,
    )
    return log


def sent_caps(requests: Path) -> list[int]:
    return sorted(json.loads(line)["max_tokens"] for line in requests.read_text().splitlines())


def test_a_cap_that_fits_the_served_context_is_sent_unchanged(standin_vllm, tmp_path):
    model, requests = standin_vllm(4096)
    log = run("l2", model, tmp_path)
    assert log.status == "success", log.error
    assert [METADATA_KEY in sample.metadata for sample in log.samples] == [False, False]
    assert sent_caps(requests) == sorted(sample.metadata["max_tokens"] for sample in log.samples)
    assert all(sample.metadata["max_tokens_rule"] == "per_sample" for sample in log.samples)


def test_a_reasoning_cap_beyond_the_served_context_is_lowered_with_the_reason(standin_vllm, tmp_path):
    """cot's default 4096 beside its prompt cannot fit a 4096-token server: capped, and it says so."""
    model, requests = standin_vllm(4096)
    log = run("cot", model, tmp_path)
    assert log.status == "success", log.error
    for sample in log.samples:
        limit = sample.metadata[METADATA_KEY]
        prompt = TEMPLATE_TOKENS + len(sample.messages[0].text.split())
        assert limit["requested"] == 4096 and limit["prompt_tokens"] == prompt
        assert sample.metadata["max_tokens"] == limit["capped_to"] == 4096 - prompt
        assert "served context of 4096 tokens" in limit["reason"]
        assert "reasoning task" in limit["reason"]
    assert sent_caps(requests) == sorted(sample.metadata["max_tokens"] for sample in log.samples)


def test_a_users_cap_is_lowered_too(standin_vllm, tmp_path):
    model, requests = standin_vllm(300)
    log = run("l2", model, tmp_path, max_tokens=1000)
    assert log.status == "success", log.error
    for sample in log.samples:
        assert sample.metadata["max_tokens_rule"] == "user"
        assert sample.metadata[METADATA_KEY]["requested"] == 1000
        assert "reasoning" not in sample.metadata[METADATA_KEY]["reason"]
        assert sample.metadata["max_tokens"] < 300
    assert sent_caps(requests) == sorted(sample.metadata["max_tokens"] for sample in log.samples)


def test_a_prompt_that_fills_the_served_context_is_not_sent(standin_vllm, tmp_path):
    model, requests = standin_vllm(TEMPLATE_TOKENS)
    log = run("l2", model, tmp_path)
    assert log.status == "error"
    assert "no room left for an answer; the request was not sent" in log.error.message
    assert not requests.exists()  # nothing reached the server's chat endpoint


@pytest.mark.heavy  # serve starts the packaged local model (the [local] extra)
def test_serve_exits_non_zero_with_the_logs_error_where_inspect_exits_0(tmp_path):
    """`inspect eval` exits 0 when its task ends in error; `serve -- inspect eval ...` must not."""
    refusing = f"{sys.executable} {STANDIN} --chat-status 400"
    inspect_eval = [
        sys.executable,
        "-m",
        "inspect_ai",
        "eval",
        "narrative_infill/l2",
        "--model",
        "llama-cpp-python/smollm2",
        "-T",
        "data=demo",
        "--limit",
        "1",
        "--max-retries",
        "0",
        "--log-dir",
        str(tmp_path / "logs"),
    ]
    serve = [sys.executable, "-m", "narrative_infill.platform.cli", "serve", "--port", str(free_port()), "--"]
    env = {**os.environ, SERVER_COMMAND_VARIABLE: refusing}
    result = subprocess.run([*serve, *inspect_eval], capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the command exited 0, but its Inspect run did not finish" in result.stderr
    assert "narrative_infill/l2 (llama-cpp-python/smollm2) ended with status error" in result.stderr
    assert "this server refuses every chat request" in result.stderr  # the log's own error
