"""``narrative-infill grid status LOG_DIR``: every run of a grid, from its logs (headers, and the
sample summaries of logs still open) and, where a Slurm job ran it, the job's state.

Works while the grid runs (a log Inspect is writing reads as ``started``) and on a folder copied
off the cluster, where no scheduler answers and the states come from the logs alone.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ..terminal import printable
from .plan import GridError
from .record import Job, RecordedRun

FINISHED, RUNNING, FAILED, NOT_STARTED = "finished", "running", "failed", "not started"
#: Slurm states of a job that no longer runs, its logs left as they were.
ENDED_JOB_STATES = frozenset(
    {"CANCELLED", "FAILED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}
)
ACTIVE_JOB_STATES = frozenset({"PENDING", "RUNNING", "REQUEUED", "CONFIGURING", "COMPLETING", "RESIZING"})


@dataclass(frozen=True)
class RunStatus:
    run: RecordedRun
    state: str
    done: int
    total: int
    job: str | None  # "JOBID_INDEX STATE"
    error: str | None


@dataclass(frozen=True)
class _TaskProgress:
    status: str  # the task's latest log's status; "success" when any of its logs succeeded
    done: int
    total: int
    error: str | None


def _read_header(location: str):
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(location, header_only=True)
    except (ValueError, KeyError, OSError) as err:  # not a zip, not a log (pydantic)
        raise GridError(
            f"{location}: not a readable Inspect log ({str(err).partition(chr(10))[0]})"
        ) from None


def _task_progress(folder: Path) -> dict[str, _TaskProgress]:
    """Per task name, its logs in ``folder`` read as headers, and its open log's samples counted."""
    from inspect_ai.log import list_eval_logs, read_eval_log_sample_summaries

    logs = defaultdict(list)
    for info in list_eval_logs(str(folder), recursive=False) if folder.is_dir() else []:
        header = _read_header(info.name)
        logs[header.eval.task.split("/")[-1]].append((header.eval.created, info.name, header))
    progress = {}
    for task, entries in logs.items():
        entries.sort(key=lambda entry: entry[0])
        successful = [entry for entry in entries if entry[2].status == "success"]
        _, location, header = successful[-1] if successful else entries[-1]
        total = (header.eval.dataset.samples or 0) * (header.eval.config.epochs or 1)
        if header.status == "success" and header.results:
            done = header.results.completed_samples
        else:
            done = sum(1 for summary in read_eval_log_sample_summaries(location) if not summary.error)
        if not 0 <= done <= total:  # a forged or broken header: no state can be read from it
            raise GridError(f"{location}: {done:,} samples done of {total:,} (eval.dataset.samples x epochs)")
        # the last line by "\n" only: splitlines() also breaks at "\r", whose text would stand alone
        error = header.error.message.strip().split("\n")[-1] if header.error else None
        progress[task] = _TaskProgress(header.status, done, total, error)
    return progress


def run_status(log_dir: Path, run: RecordedRun, job: tuple[str, str] | None) -> RunStatus:
    """One run's state from its logs, the job's state deciding whether an open log is still written."""
    progress = _task_progress(log_dir / run.folder)
    per_task = run.samples // max(len(run.tasks), 1)
    done = sum(p.done for p in progress.values())
    total = sum(progress[t].total if t in progress else per_task for t in run.tasks)
    job_state = job[1] if job else None
    label = f"{job[0]} {job[1]}" if job else None
    errors = [
        f"{task}: {p.error or p.status}" for task, p in progress.items() if p.status in ("error", "cancelled")
    ]
    if progress and all(
        progress.get(t, _TaskProgress("", 0, 0, None)).status == "success" for t in run.tasks
    ):
        return RunStatus(run, FINISHED, done, total, label, None)
    if errors and job_state not in ACTIVE_JOB_STATES:
        return RunStatus(run, FAILED, done, total, label, "; ".join(errors))
    if job_state in ENDED_JOB_STATES or job_state == "COMPLETED":
        left = "its logs were left unfinished" if progress else "no log was written (see slurm/*.out)"
        return RunStatus(run, FAILED, done, total, label, f"Slurm job {job_state}; {left}")
    if not progress and job_state not in ("RUNNING", "COMPLETING"):
        return RunStatus(run, NOT_STARTED, 0, total, label, None)
    return RunStatus(run, RUNNING, done, total, label, None)


def grid_status(log_dir: Path, runs: list[RecordedRun], jobs: list[Job]) -> tuple[list[RunStatus], str]:
    """Every recorded run's status, and where the job states came from."""
    from .slurm import job_states

    latest: dict[str, tuple[str, int]] = {}
    for job in jobs:  # in submission order: a resubmission's job replaces the earlier one
        for index, folder in job.tasks.items():
            latest[folder] = (job.job_id, index)
    states, source = job_states(sorted({job_id for job_id, _ in latest.values()}))
    statuses = []
    for run in runs:
        label: tuple[str, str] | None = None
        if run.folder in latest:
            job_id, index = latest[run.folder]
            label = (f"{job_id}_{index}", states.get((job_id, index), "UNKNOWN"))
        statuses.append(run_status(log_dir, run, label))
    return statuses, source


def describe_status(statuses: list[RunStatus], source: str) -> str:
    """A table of the runs, each failure's error beneath it, and the totals; the text that comes
    from files (folder names, errors) with its control characters escaped (:mod:`..terminal`)."""
    folders = [printable(s.run.folder) for s in statuses]  # grid.json's and the logs' text, escaped
    width = max([len(folder) for folder in folders] + [3])
    lines = [f"{'run':<{width}}  {'state':<11}  {'samples':>15}  slurm job"]
    for folder, status in zip(folders, statuses):
        samples = f"{status.done:,}/{status.total:,}"
        lines.append(f"{folder:<{width}}  {status.state:<11}  {samples:>15}  {printable(status.job or '-')}")
        if status.error:
            lines.append(f"{'':<{width}}  error: {printable(status.error)}")
    counts = {
        state: sum(s.state == state for s in statuses) for state in (FINISHED, RUNNING, FAILED, NOT_STARTED)
    }
    lines.append("")
    lines.append(
        ", ".join(f"{n} {state}" for state, n in counts.items())
        + f"; {sum(s.done for s in statuses):,} of {sum(s.total for s in statuses):,} samples done"
    )
    if any(s.job for s in statuses):
        unknown = sum(1 for s in statuses if s.job and s.job.endswith("UNKNOWN"))
        lines.append(
            f"job states from {source}"
            + (
                f"; {unknown} job(s) not known to the scheduler here (states from the logs)"
                if unknown
                else ""
            )
        )
    return "\n".join(lines)
