"""The grid's Slurm route without a cluster: the sbatch array scripts, the job states read back
(sacct, or scontrol where accounting is off), ``grid status``'s states, the grid record, and the
dry run's cost. The real cluster runs in the ``slurm`` tier (test_grid_slurm_cluster.py)."""

from __future__ import annotations

import json

import pytest

from narrative_infill.platform.cli import main
from narrative_infill.platform.grid import cost, slurm, status
from narrative_infill.platform.grid.plan import GridError, load_grid, plan
from narrative_infill.platform.grid.record import RecordedRun, read_record, write_record
from narrative_infill.platform.grid.slurm import SlurmOptions, array_scripts, expand_indices

DEMO_GRID = """
name: demo
data: demo
tasks: [l2, cot]
judge: {grader: openai/gpt-4.1-mini}
provider: vllm
models:
  - {name: Small, id: org/small}
  - {name: Api, id: gpt-4.1-mini, provider: openai}
  - {name: Rule, id: neighbour, provider: baseline}
"""


@pytest.fixture
def demo_grid(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(DEMO_GRID)
    return path


def test_the_paper_grid_is_one_array_per_study_and_gpu_request_each_task_the_local_command(tmp_path):
    runs = plan(load_grid("paper"), tmp_path / "logs").runs
    scripts = array_scripts(runs, tmp_path / "logs", SlurmOptions("gpu", "lab", "24:00:00"))
    assert [(s.name, len(s.runs)) for s in scripts] == [
        ("main-gpu1", 18), ("main-gpu2", 2), ("seeds-gpu1", 30), ("judges-gpu1", 4)
    ]  # fmt: skip
    big = scripts[1]
    assert {r.model for r in big.runs} == {"Llama-3.3-70B", "DeepSeek-Llama-70B"}
    for line in ("#SBATCH --gres=gpu:2", "#SBATCH --array=0-1", "#SBATCH --partition=gpu",
                 "#SBATCH --account=lab", "#SBATCH --time=24:00:00", "#SBATCH --requeue"):  # fmt: skip
        assert line in big.text.splitlines()
    for index, run in enumerate(big.runs):  # the same resumable eval-set command the local grid runs
        assert f"  {index})" in big.text and " ".join(run.command[1:]) in big.text
    assert f"#SBATCH --output={(tmp_path / 'logs').resolve()}/slurm/main-gpu2-%A_%a.out" in big.text


def test_runs_without_a_vllm_server_ask_for_no_gpu(demo_grid, tmp_path):
    scripts = array_scripts(plan(load_grid(str(demo_grid)), tmp_path).runs, tmp_path, SlurmOptions())
    assert [(s.name, [r.model for r in s.runs]) for s in scripts] == [
        ("main-gpu1", ["Small"]), ("main", ["Api", "Rule"])
    ]  # fmt: skip
    assert "--gres" not in scripts[1].text and "--partition" not in scripts[1].text


@pytest.mark.parametrize(
    ("text", "indices"),
    [("3", [3]), ("0-4", [0, 1, 2, 3, 4]), ("1,3-5", [1, 3, 4, 5]), ("[0-3%2]", [0, 1, 2, 3])],
)
def test_slurm_array_index_lists_are_expanded(text, indices):
    assert expand_indices(text) == indices


def test_an_array_index_list_the_scheduler_garbled_is_named():
    with pytest.raises(GridError, match="array task list '1-x' is not an index list"):
        expand_indices("1-x")


def test_job_states_come_from_scontrol_where_accounting_is_off(monkeypatch):
    def scheduler(command):
        if command[0] == "sacct":
            raise GridError("sacct failed: Slurm accounting storage is disabled")
        return (
            "JobId=8 ArrayJobId=7 ArrayTaskId=0 JobName=x JobState=COMPLETED Reason=None\n"
            "JobId=7 ArrayJobId=7 ArrayTaskId=1-2 JobName=x JobState=PENDING Reason=Resources\n"
        )

    monkeypatch.setattr(slurm, "_scheduler", scheduler)
    states, source = slurm.job_states(["7"])
    assert source == "scontrol" and states == {
        ("7", 0): "COMPLETED",
        ("7", 1): "PENDING",
        ("7", 2): "PENDING",
    }


def test_job_states_come_from_sacct_where_accounting_is_on(monkeypatch):
    monkeypatch.setattr(
        slurm, "_scheduler", lambda command: "7_0|COMPLETED\n7_1|CANCELLED by 0\n7_[2-3]|PENDING\n"
    )
    states, source = slurm.job_states(["7"])
    assert source == "sacct"
    assert states == {("7", 0): "COMPLETED", ("7", 1): "CANCELLED", ("7", 2): "PENDING", ("7", 3): "PENDING"}


RUN = RecordedRun("main/Small", "main", "Small", ("l2", "cot"), 48)


def progress(**tasks):
    return {
        task: status._TaskProgress(state, done, 24, error) for task, (state, done, error) in tasks.items()
    }


@pytest.mark.parametrize(
    ("logs", "job", "state", "error"),
    [
        ({}, None, "not started", None),
        ({}, ("9_0", "PENDING"), "not started", None),
        ({"l2": ("success", 24, None), "cot": ("success", 24, None)}, ("9_0", "COMPLETED"), "finished", None),
        ({"l2": ("success", 24, None), "cot": ("started", 5, None)}, ("9_0", "RUNNING"), "running", None),
        ({"l2": ("started", 5, None)}, None, "running", None),  # a copied folder: the logs alone
        ({"l2": ("started", 5, None)}, ("9_0", "CANCELLED"), "failed", "Slurm job CANCELLED"),
        ({"l2": ("error", 3, "RuntimeError: boom")}, None, "failed", "l2: RuntimeError: boom"),
        ({"l2": ("cancelled", 3, None)}, None, "failed", "l2: cancelled"),  # a signal: no error message
        ({}, ("9_0", "FAILED"), "failed", "no log was written"),
    ],
)
def test_a_run_state_is_read_from_its_logs_and_its_job(monkeypatch, tmp_path, logs, job, state, error):
    monkeypatch.setattr(status, "_task_progress", lambda folder: progress(**logs))
    result = status.run_status(tmp_path, RUN, job)
    assert result.state == state and result.total == 48
    assert (error is None and result.error is None) or error in result.error
    assert result.done == sum(done for _, done, _ in logs.values())


def test_the_grid_record_keeps_runs_by_folder_and_every_job(tmp_path, demo_grid):
    runs = plan(load_grid(str(demo_grid)), tmp_path).runs
    write_record(tmp_path, runs[:1])
    job = slurm.Job("12", "main", {0: "main/Small"}, "2026-01-01T00:00:00+00:00")
    write_record(tmp_path, runs, (job,))
    recorded, jobs = read_record(tmp_path)
    assert [r.folder for r in recorded] == ["main/Small", "main/Api", "main/Rule"] and jobs == [job]
    assert main(["grid", "status", str(tmp_path)]) == 0  # nothing started yet, no scheduler asked for 12


def test_grid_status_without_a_record_or_with_a_broken_one_says_which_file(tmp_path, capsys):
    assert main(["grid", "status", str(tmp_path)]) == 1
    assert "grid.json: no grid record" in capsys.readouterr().err
    (tmp_path / "grid.json").write_text(json.dumps({"runs": {"main/A": {"study": "main"}}, "jobs": []}))
    assert main(["grid", "status", str(tmp_path)]) == 1
    assert "grid.json: runs.main/A.tasks: expected list, found None" in capsys.readouterr().err


def test_the_dry_run_prints_tokens_and_with_a_cost_file_dollars(demo_grid, tmp_path, monkeypatch, capsys):
    words = cost.Counter(lambda text: round(len(text.split()) * cost.WORDS_TO_TOKENS), "words x 1.3", True)
    monkeypatch.setattr(cost, "token_counter", lambda: words)
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "openai/gpt-4.1-mini: {input: 0.4, output: 1.6, input_cache_write: 0, input_cache_read: 0.1}\n"
    )
    options = ["--log-dir", str(tmp_path), "--dry-run", "--samples-per-hour", "100"]
    assert main(["grid", str(demo_grid), *options, "--model-cost-config", str(prices)]) == 0
    out = capsys.readouterr().out
    api = [r for r in plan(load_grid(str(demo_grid)), tmp_path).runs if r.model == "Api"][0]
    figures, stand_in = cost.run_figures(api)
    assert not stand_in and figures.judgements == 48
    model_dollars = (figures.prompt * 0.4 + figures.output_cap * 1.6) / 1e6
    judge_dollars = (figures.judge_in * 0.4 + figures.judge_out * 1.6) / 1e6
    assert f"main: Api: {figures.prompt:,} prompt tokens" in out
    assert f"${model_dollars:,.2f} model + ${judge_dollars:,.2f} judge, 0.0 GPU-hours" in out
    assert "main: Small:" in out and "0.5 GPU-hours" in out  # 48 samples at 100 an hour on one GPU
    assert "tokens counted with words x 1.3 (an estimate)" in out


def test_a_broken_cost_file_is_named(demo_grid, tmp_path, capsys):
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/gpt-4.1-mini: {input: cheap}\n")
    assert main(["grid", str(demo_grid), "--dry-run", "--model-cost-config", str(prices)]) == 1
    err = capsys.readouterr().err
    assert (
        f"{prices}: openai/gpt-4.1-mini: missing output, input_cache_write, input_cache_read; input: " in err
    )


def test_submitting_where_there_is_no_slurm_says_so(demo_grid, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["grid", str(demo_grid), "--log-dir", str(tmp_path / "logs"), "--scheduler", "slurm"]) == 1
    assert "sbatch not found: is this a Slurm login node?" in capsys.readouterr().err


@pytest.mark.parametrize("size", [-2, 0])
def test_a_parallel_size_below_one_is_refused_not_asked_of_slurm(tmp_path, size):
    """gpu:-2 in the sbatch request and negative GPU-hours in the cost (or, at 0, a vLLM server with
    no GPU asked for) came from a size below one."""
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(
        DEMO_GRID.replace(
            "{name: Small, id: org/small}",
            f"{{name: Small, id: org/small, model_args: {{tensor_parallel_size: {size}}}}}",
        )
    )
    runs = plan(load_grid(str(grid_file)), tmp_path).runs
    with pytest.raises(GridError, match=f"main: Small: tensor_parallel_size={size} is not a count of GPUs"):
        slurm.gpus(runs[0])
