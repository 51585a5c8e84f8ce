"""The grid on a real one-node Slurm cluster (the ``slurm`` tier): Debian's slurm-wlm and munge on
127.0.0.1, started by the session's fixture (``slurm_cluster.py``; ``scripts/setup-slurm.sh``
installs them). A two-model grid (a baseline, and a stand-in OpenAI-compatible server that holds
every request after the fifth) goes through ``grid --scheduler slurm``: the stand-in's array task
is cancelled with ``scancel`` mid-run, deterministically after five answers, then resubmitted; it
resumes and ends with every sample exactly once, ``grid status`` shows each state on the way, and
``report`` over the shared folder equals the report of the same grid run locally.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import require
from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries
from slurm_cluster import Cluster, missing

from narrative_infill.platform.cli import main

pytestmark = [pytest.mark.slurm, pytest.mark.heavy]

STANDIN = Path(__file__).parents[1].joinpath("standin_openai_server.py")
ANSWERED_BEFORE_HOLD = 5
DEMO_SAMPLES = 24  # instances of the demo set, per task
GRID = """
name: slurm-tier
data: demo
task_args: {backbone: minilm}
tasks: [l1, l2]
provider: openai-api
models:
  - {name: Neighbour, id: neighbour, provider: baseline}
  - {name: Standin, id: standin/smollm2}
"""
WAIT_S = 300


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """A cluster of this session's own (own folder, ports and munge socket: a second session's, or
    a system cluster, is left alone); stopped, daemon by daemon, at the end."""
    reason = missing()
    require(reason is None, f"no Slurm cluster here: {reason}")
    cluster = Cluster(tmp_path_factory.mktemp("slurm")).start()
    yield cluster
    cluster.stop()


def wait_for(condition, what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def cli(capsys, *args: str, check: bool = True) -> str:
    """A command in this process (the jobs inherit the environment sbatch is run in)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 0 or not check, out[-3000:] + err[-3000:]
    return out


def samples_written(folder: Path) -> list:
    """Every sample summary in the folder's logs, over all its logs (a resumed run must not repeat one)."""
    return [s for info in list_eval_logs(str(folder)) for s in read_eval_log_sample_summaries(info.name)]


def successful_samples(folder: Path) -> list:
    """The samples of the folder's finished logs."""
    return [
        summary
        for info in list_eval_logs(str(folder))
        if read_eval_log(info.name, header_only=True).status == "success"
        for summary in read_eval_log_sample_summaries(info.name)
    ]


def status_line(output: str, run: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(run))


def job_state(job: str) -> str:
    shown = subprocess.run(["scontrol", "-o", "show", "job", job], capture_output=True, text=True, timeout=60)
    found = re.search(r"JobState=(\w+)", shown.stdout)
    return found.group(1) if found else ""


def start_standin(*options: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(STANDIN), "--port", str(port), *options], stdout=subprocess.PIPE, text=True
    )
    assert "listening" in server.stdout.readline()
    return server, f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def standins(tmp_path, slurm, monkeypatch):
    """Two stand-in model servers: the cluster's holds every request after the fifth until the test
    releases it; the local run's answers at once. The cluster's is in this process's environment,
    which sbatch hands to the jobs, with the cluster's config."""
    release = tmp_path / "release"
    held, held_url = start_standin("--hold-after", str(ANSWERED_BEFORE_HOLD), "--release", str(release))
    free, free_url = start_standin()
    for key, value in {**slurm.env, "STANDIN_BASE_URL": held_url, "STANDIN_API_KEY": "test"}.items():
        monkeypatch.setenv(key, value)
    yield free_url, release
    for server in (held, free):
        server.terminate()
        server.wait(timeout=30)


def test_a_grid_on_slurm_resumes_a_cancelled_array_task_and_reports_as_the_local_run(
    tmp_path, standins, capsys, monkeypatch
):
    free_url, release = standins
    started = time.monotonic()
    grid, logs, local = tmp_path / "grid.yaml", tmp_path / "shared" / "logs", tmp_path / "local"
    grid.write_text(GRID)
    # The same grid run locally, meanwhile, against a stand-in that answers at once.
    local_run = subprocess.Popen(
        [sys.executable, "-m", "narrative_infill.platform.cli", "grid", str(grid), "--log-dir", str(local)],
        env={**os.environ, "STANDIN_BASE_URL": free_url},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    submit = ["grid", str(grid), "--log-dir", str(logs), "--scheduler", "slurm", "--", "--log-buffer", "1"]
    before = cli(capsys, "grid", "status", str(logs), "--grid", str(grid))
    assert "not started" in status_line(before, "main/Standin") and "0 finished" in before

    first = cli(capsys, *submit)
    [job] = re.findall(r"main: job (\d+), array tasks 0,1 of 2", first)
    standin_folder, neighbour_folder = logs / "main" / "Standin", logs / "main" / "Neighbour"
    # Deterministic mid-run: the stand-in answers five requests and holds the rest.
    wait_for(lambda: len(successful_samples(neighbour_folder)) == 2 * DEMO_SAMPLES, "the baseline's run")
    wait_for(lambda: len(samples_written(standin_folder)) == ANSWERED_BEFORE_HOLD, "five answers")
    running = cli(capsys, "grid", "status", str(logs))
    assert f"{2 * DEMO_SAMPLES}/{2 * DEMO_SAMPLES}" in status_line(running, "main/Neighbour")
    assert re.search(
        rf"running +{ANSWERED_BEFORE_HOLD}/48 +{job}_1 RUNNING", status_line(running, "main/Standin")
    )
    before_uuids = {s.uuid for s in samples_written(standin_folder)}

    subprocess.run(["scancel", f"{job}_1"], check=True, timeout=60)
    wait_for(lambda: job_state(f"{job}_1") == "CANCELLED", "the cancelled array task")
    cancelled = cli(capsys, "grid", "status", str(logs), check=False)
    assert re.search(
        rf"failed +{ANSWERED_BEFORE_HOLD}/48 +{job}_1 CANCELLED", status_line(cancelled, "main/Standin")
    )
    assert "Slurm job CANCELLED" in cancelled and "1 finished, 0 running, 1 failed" in cancelled

    release.touch()
    second = cli(capsys, *submit)
    [resumed] = re.findall(r"main: job (\d+), array tasks 1 of 2", second)  # the finished run is left out
    wait_for(lambda: job_state(f"{resumed}_1") == "COMPLETED", "the resubmitted task")
    done = cli(capsys, "grid", "status", str(logs))
    assert "2 finished, 0 running, 0 failed, 0 not started; 96 of 96 samples done" in done
    finished_logs = [
        info.name
        for info in list_eval_logs(str(standin_folder))
        if read_eval_log(info.name, header_only=True).status == "success"
    ]
    assert len(finished_logs) == 2  # one per task
    final = [s for location in finished_logs for s in read_eval_log_sample_summaries(location)]
    for location in finished_logs:  # every sample exactly once
        ids = [s.id for s in read_eval_log_sample_summaries(location)]
        assert len(ids) == len(set(ids)) == DEMO_SAMPLES
    assert before_uuids <= {s.uuid for s in final}, "the five answered samples were generated again"
    print(f"resumed run: {ANSWERED_BEFORE_HOLD} samples before the cancel, {len(final)} after")

    copied = tmp_path / "copied"
    shutil.copytree(logs, copied)
    monkeypatch.delenv("SLURM_CONF")
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))  # no Slurm commands here
    offline = cli(capsys, "grid", "status", str(copied))
    assert "2 finished" in offline and "not known to the scheduler here" in offline

    assert local_run.wait(timeout=WAIT_S) == 0, local_run.stdout.read()[-3000:]
    reports = {}
    for name, folder in (("slurm", logs), ("local", local)):
        cli(capsys, "report", str(folder / "main"), "-o", str(tmp_path / f"report-{name}"))
        reports[name] = (tmp_path / f"report-{name}" / "report.md").read_text().replace(str(folder), "LOGS")
    # The same results; the shared folder also holds the cancelled task's logs, which report sets aside.
    set_aside = (
        "- 2 log(s) set aside: a later successful log of the same run replaces them (eval-retry, re-runs).\n"
    )
    assert set_aside in reports["slurm"] and set_aside not in reports["local"]
    assert reports["slurm"].replace(set_aside, "") == reports["local"]
    print(f"slurm tier: {time.monotonic() - started:.0f} s")
