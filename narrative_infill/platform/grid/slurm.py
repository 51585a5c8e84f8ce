"""The grid on Slurm: one sbatch array script per study (and per GPU request within it), one
array task per run, each running the run's own resumable ``inspect eval-set`` command; and the
jobs' states, read back from ``sacct`` or, where accounting is off, ``scontrol``.

The scheduler is used as it is, through its command line: ``sbatch --parsable`` submits,
``--requeue`` lets Slurm restart a pre-empted task, and submitting the same grid again resumes
(runs whose logs are all finished are left out of the array; eval-set skips what is done).
"""

from __future__ import annotations

import math
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .plan import GridError, Run
from .record import Job, now, recorded_runs, write_record

#: ``-M`` engine arguments whose product is the GPUs one vLLM server spans.
GPU_ARGS = ("tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size")
SCHEDULER_TIMEOUT_S = 60


@dataclass(frozen=True)
class SlurmOptions:
    partition: str | None = None
    account: str | None = None
    time: str | None = None


@dataclass(frozen=True)
class ArrayScript:
    study: str
    gpus: int
    runs: list[Run]  # array task i runs runs[i]
    text: str

    @property
    def name(self) -> str:
        return self.study + (f"-gpu{self.gpus}" if self.gpus else "")


def gpus(run: Run) -> int:
    """GPUs a run's vLLM server takes (tensor x data x pipeline parallel); 0 for other providers."""
    model = run.command[run.command.index("--model") + 1]
    if not model.startswith("vllm/"):
        return 0
    args = dict(value.split("=", 1) for flag, value in zip(run.command, run.command[1:]) if flag == "-M")
    sizes = {name: args.get(name, "1") for name in GPU_ARGS}
    for name, size in sizes.items():
        if not size.isdigit() or int(size) < 1:  # gpu:-2 or no GPU at all for a vLLM server
            raise GridError(f"{run.study}: {run.model}: {name}={size} is not a count of GPUs")
    return math.prod(int(size) for size in sizes.values())


def array_scripts(runs: list[Run], log_dir: Path, options: SlurmOptions) -> list[ArrayScript]:
    """The sbatch scripts of a plan's runs, grouped by study and GPU request, in plan order."""
    groups: dict[tuple[str, int], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.study, gpus(run)), []).append(run)
    return [
        ArrayScript(study, count, members, _script(study, count, members, log_dir, options))
        for (study, count), members in groups.items()
    ]


def _script(study: str, count: int, runs: list[Run], log_dir: Path, options: SlurmOptions) -> str:
    name = study + (f"-gpu{count}" if count else "")
    header = {
        "job-name": f"narrative-infill-{name}",
        "array": f"0-{len(runs) - 1}",
        "output": str(log_dir.resolve() / "slurm" / f"{name}-%A_%a.out"),
        "chdir": str(Path.cwd()),
        "partition": options.partition,
        "account": options.account,
        "time": options.time,
        "gres": f"gpu:{count}" if count else None,
    }
    lines = [
        "#!/bin/bash",
        f"# narrative-infill grid, study {study}: one array task per run. Submitting the same grid again",
        "# resumes: inspect eval-set skips finished tasks and retries the rest.",
        *(_directive(key, value) for key, value in header.items() if value),
        "#SBATCH --requeue",
        "set -euo pipefail",
        'case "$SLURM_ARRAY_TASK_ID" in',
    ]
    python = shlex.quote(sys.executable)  # this environment's Inspect, on the shared file system
    for index, run in enumerate(runs):
        # The name as a literal: a newline in it would end the comment and start a command.
        lines.append(f"  {index})  # {run.model!r}: {', '.join(run.tasks)}")
        lines.append(f"    exec {python} -m inspect_ai {shlex.join(run.command[1:])} ;;")
    lines += ["esac", 'echo "no run for array task $SLURM_ARRAY_TASK_ID" >&2', "exit 2", ""]
    return "\n".join(lines)


def _directive(key: str, value: str) -> str:
    """One ``#SBATCH`` line. sbatch reads a quoted value, but a line break cannot be quoted there: it
    would end the directive and make the rest a command of the script."""
    if not value.isprintable():
        raise GridError(f"sbatch --{key}: {value!r} has a control character, which a job script cannot carry")
    return f"#SBATCH --{key}={shlex.quote(value)}"


def submit(
    scripts: list[ArrayScript], log_dir: Path, finished: set[str], out: TextIO | None = None
) -> list[Job]:
    """Submits each script's unfinished runs (folders relative to ``log_dir`` in ``finished`` are
    left out) and records the jobs in the log folder's grid record."""
    out = out or sys.stdout  # resolved per call: a default bound at import outlives a redirected stdout
    jobs = []
    for script in scripts:
        folders = [r.folder for r in recorded_runs(script.runs, log_dir)]
        pending = [index for index, folder in enumerate(folders) if folder not in finished]
        if not pending:
            print(f"{script.name}: every run is finished; nothing submitted", file=out)
            continue
        (log_dir / "slurm").mkdir(parents=True, exist_ok=True)
        for run in script.runs:
            run.log_dir.mkdir(parents=True, exist_ok=True)
        path = log_dir / "slurm" / f"{script.name}.sbatch"
        path.write_text(script.text, encoding="utf-8")
        indices = ",".join(map(str, pending))
        submitted = _scheduler(["sbatch", "--parsable", f"--array={indices}", str(path)])
        job_id = submitted.split(";")[0].strip()
        jobs.append(Job(job_id, script.study, {i: folders[i] for i in pending}, now()))
        print(f"{script.name}: job {job_id}, array tasks {indices} of {len(folders)} ({path})", file=out)
        write_record(log_dir, script.runs, (jobs[-1],))
    return jobs


def _scheduler(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SCHEDULER_TIMEOUT_S)
    except FileNotFoundError:
        raise GridError(f"{command[0]} not found: is this a Slurm login node?") from None
    except subprocess.TimeoutExpired:
        raise GridError(f"{shlex.join(command)}: no answer in {SCHEDULER_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise GridError(f"{shlex.join(command)} failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def expand_indices(text: str) -> list[int]:
    """Slurm's array index lists (``3``, ``0-4``, ``1,3-5``, ``[0-7%2]``) as numbers: written by
    hand, as no library reads Slurm's notation."""
    indices: list[int] = []
    for part in text.strip("[]").split("%")[0].split(","):
        first, _, last = part.partition("-")
        if not first.isdigit() or not (last or first).isdigit():
            raise GridError(f"the scheduler's array task list {text!r} is not an index list")
        indices += range(int(first), int(last or first) + 1)
    return indices


def job_states(job_ids: list[str]) -> tuple[dict[tuple[str, int], str], str]:
    """Each array task's state, keyed by (job id, index), and where it was read: ``sacct`` where
    accounting is on, else ``scontrol`` (which forgets a job some minutes after it ends)."""
    if not job_ids:
        return {}, "no jobs"
    states: dict[tuple[str, int], str] = {}
    try:
        listing = _scheduler(["sacct", "-n", "-P", "-X", "-o", "JobID,State", "-j", ",".join(job_ids)])
    except GridError:
        listing = None
    if listing is not None:
        for line in listing.splitlines():
            job, _, state = line.partition("|")
            array_id, _, indices = job.partition("_")
            for index in expand_indices(indices) if indices else []:
                states[(array_id, index)] = state.split()[0] if state else "UNKNOWN"
        return states, "sacct"
    for job_id in job_ids:
        try:
            shown = _scheduler(["scontrol", "-o", "show", "job", job_id])
        except GridError:  # forgotten (MinJobAge passed) or no scheduler here
            continue
        for line in shown.splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            if fields.get("ArrayJobId") == job_id and "ArrayTaskId" in fields:
                for index in expand_indices(fields["ArrayTaskId"]):
                    states[(job_id, index)] = fields.get("JobState", "UNKNOWN")
    return states, "scontrol"
