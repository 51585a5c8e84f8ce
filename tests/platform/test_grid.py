"""The run grid (``platform/grid/``): the paper's grid as commands, bad grid files, and a scripted
two-model grid run through ``narrative-infill grid``, interrupted and resumed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from narrative_infill.platform.cli import main
from narrative_infill.platform.grid.plan import (
    VLLM_PROVIDER_ARGS,
    VLLM_SERVE_ARGS,
    GridError,
    instance_counts,
    load_grid,
    plan,
)
from narrative_infill.paper_protocol import JUDGE_MODEL, PUBLISHED_INSTANCES

from helpers import SHARED


@pytest.fixture(scope="module")
def paper_plan(tmp_path_factory):
    return plan(load_grid("paper"), tmp_path_factory.mktemp("grid"))


@pytest.mark.shared
def test_the_paper_grid_is_180_generation_runs_plus_the_robustness_studies(paper_plan, capsys):
    main_runs = [r for r in paper_plan.runs if r.study == "main"]
    assert len(main_runs) == 20 and sum(len(r.tasks) for r in main_runs) == 180
    assert len([r for r in paper_plan.runs if r.study == "seeds"]) == 30  # 6 model/setting pairs x 5 seeds
    assert len([r for r in paper_plan.runs if r.study == "judges"]) == 4
    authors_models = {
        json.loads(line)["model"] for line in (SHARED / "data" / "extraction" / "responses.jsonl").open()
    }
    assert {r.command[r.command.index("--model") + 1] for r in main_runs} == {
        f"vllm/{m}" for m in authors_models
    }
    assert main(["grid", "paper", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "main: 20 command(s), 180 generation runs, 1,645,560 samples, 1,645,560 grader calls" in out
    assert (
        "seeds: 30 command(s), 30 generation runs" in out and "judges: 4 command(s), 4 generation runs" in out
    )


def test_the_paper_grid_takes_the_judge_and_the_size_from_the_paper_protocol(monkeypatch):
    """The grid file restates the judge (a test holds it to paper_protocol) and leaves the size to it."""
    grid = load_grid("paper")
    assert grid["judge"] == {"grader": JUDGE_MODEL}
    assert grid["studies"]["judges"]["judges"]["grader"] == JUDGE_MODEL
    assert "published_instances" not in grid

    def unreachable(*args, **kwargs):
        raise OSError("the hub is out of reach")

    monkeypatch.setattr("narrative_infill.data.dataset.load_benchmark", unreachable)
    counts, exact = instance_counts(grid)
    assert counts["full"] == PUBLISHED_INSTANCES and not exact


def test_generated_commands_use_only_real_inspect_and_vllm_arguments(paper_plan):
    from inspect_ai._cli.eval import eval_set_command

    for run in paper_plan.runs:
        context = eval_set_command.make_context(
            "eval-set", list(run.command[2:])
        )  # click rejects unknown options
        assert context.params["log_dir"] == str(run.log_dir)
        for flag, value in zip(run.command, run.command[1:]):
            if flag == "-M":
                key = value.split("=", 1)[0]
                assert key in VLLM_PROVIDER_ARGS | VLLM_SERVE_ARGS, key
    seventy = [r for r in paper_plan.runs if "70B" in r.model and r.study == "main"]
    assert len(seventy) == 2 and all("tensor_parallel_size=2" in r.command for r in seventy)
    judges = [r for r in paper_plan.runs if r.study == "judges"]
    assert all(
        "grader2=google/gemini-3.5-flash-lite" in r.command and "judge_roles=[grader,grader2]" in r.command
        for r in judges
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("tasks: [l2, l9]", "tasks: unknown task 'l9'"),
        (
            "studies: {seeds: {subset: 10pct, seeds: [1], pairs: [[Nobody, l2]]}}",
            "studies.seeds.pairs: ['Nobody', 'l2'] is not",
        ),
        ("models: [{name: A, id: x/a}, {name: A, id: x/b}]", "models[1]: name 'A' repeats"),
    ],
)
def test_a_bad_grid_file_is_named_with_its_entry(tmp_path, change, message):
    base = {"provider": "vllm", "tasks": "tasks: [l2]", "models": "models: [{name: A, id: x/a}]"}
    key = change.split(":", 1)[0]
    lines = [f"provider: {base['provider']}", base["tasks"], base["models"]]
    lines = [change if line.startswith(key + ":") else line for line in lines] + (
        [change] if key == "studies" else []
    )
    path = tmp_path / "grid.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(GridError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_grid(str(path))


SCRIPTED_PROVIDER = textwrap.dedent('''
    """A scripted model provider for the grid test, registered at interpreter start-up."""
    import asyncio
    import os

    from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi

    VALID = '{"Fluency": 4, "Context_Faithfulness": 3, "Bidirectional_Coherence": 4, "Narrative_Consistency": 5, "Informativeness": 3}'

    @modelapi(name="scripted")
    class Scripted(ModelAPI):
        def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **model_args):
            super().__init__(model_name, base_url, api_key, [], config)

        async def generate(self, input, tools, tool_choice, config):
            gate = os.environ.get("SCRIPTED_GATE")  # Beta answers only once the test opens the gate
            while gate and self.model_name == "beta" and not os.path.exists(gate):
                await asyncio.sleep(0.05)
            judging = "CANDIDATE INFILL" in input[-1].text
            content = VALID if judging else f"<ANSWER>The {self.model_name} family went home together.</ANSWER>"
            output = ModelOutput.from_content(model=self.model_name, content=content)
            output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
            return output
''')

SCRIPTED_GRID = """
name: scripted
data: demo
task_args: {backbone: minilm}
tasks: [l0, l2, cot]  # a level, the default level and a paradigm: the resume is per task, not per kind
judge: {grader: scripted/judge}
provider: scripted
models:
  - {name: Alpha, id: alpha}
  - {name: Beta, id: beta}
"""


@pytest.mark.subprocess
@pytest.mark.heavy
def test_a_scripted_two_model_grid_survives_an_interruption_and_resumes(tmp_path, capsys):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SCRIPTED_PROVIDER)
    grid_file = tmp_path / "scripted.yaml"
    grid_file.write_text(SCRIPTED_GRID)
    log_dir = tmp_path / "logs"
    gate = tmp_path / "gate"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "SCRIPTED_GATE": str(gate)}
    command = [
        sys.executable,
        "-m",
        "narrative_infill.platform.cli",
        "grid",
        str(grid_file),
        "--log-dir",
        str(log_dir),
    ]

    def successful(model: str) -> list[Path]:
        folder = log_dir / "main" / model
        return [
            p
            for p in sorted(folder.glob("*.eval"))
            if read_eval_log(str(p), header_only=True).status == "success"
        ]

    started = time.monotonic()
    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 600
    # No timing: Beta's model waits at the gate, so the interruption lands with Alpha done and no Beta
    # task finished, however loaded the machine is.
    while not list((log_dir / "main" / "Beta").glob("*.eval")):  # Alpha done, Beta under way
        assert first.poll() is None and time.monotonic() < deadline, (
            first.stdout.read() if first.poll() is not None else "timed out"
        )
        time.sleep(0.2)
    first.send_signal(signal.SIGTERM)
    output = first.communicate(timeout=180)[0]
    assert first.returncode != 0 and "run the same grid command again to resume" in output
    alpha = {p: p.stat().st_mtime_ns for p in successful("Alpha")}
    assert len(alpha) == 3 and not successful("Beta")
    main(["grid", "status", str(log_dir)])  # the local grid's record: states from the logs alone
    interrupted = capsys.readouterr().out
    assert re.search(r"main/Alpha +finished +72/72 +-", interrupted)
    # Beta's logs: closed as cancelled by the signal (failed), or left open (running: no scheduler to ask).
    assert re.search(r"main/Beta +(running|failed) ", interrupted) and "1 finished" in interrupted
    gate.touch()
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert {p: p.stat().st_mtime_ns for p in successful("Alpha")} == alpha  # finished work is not run again
    assert main(["grid", "status", str(log_dir)]) == 0
    assert (
        "2 finished, 0 running, 0 failed, 0 not started; 144 of 144 samples done" in capsys.readouterr().out
    )
    assert len(successful("Beta")) == 3
    assert main(["report", str(log_dir / "main"), "-o", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert "144 samples from 6 logs" in report  # 2 models x 3 tasks x 24 demo instances, each once
    assert (
        main(["submit", str(log_dir / "main" / "Beta"), "-o", str(tmp_path / "beta.json"), "--track", "demo"])
        == 0
    )
    assert set(json.loads((tmp_path / "beta.json").read_text())["settings"]) == set(
        load_grid(str(grid_file))["tasks"]
    )
    print(f"scripted grid with interruption: {time.monotonic() - started:.0f} s")
