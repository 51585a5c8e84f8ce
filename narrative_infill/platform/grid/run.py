"""Executes a grid plan: one ``inspect eval-set`` process at a time, resumable by running the
same grid again (eval-set skips finished tasks and retries unfinished ones)."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from ..local.run_status import run_recording_status
from .plan import Plan


def run_plan(plan: Plan, out: TextIO | None = None) -> int:
    """0 when every run finished; the failed runs are listed and the rest still run. A signal
    stops the grid after the current run has written its logs."""
    out = out or sys.stdout  # resolved per call: a default bound at import outlives a redirected stdout
    failed = []
    for index, run in enumerate(plan.runs, 1):
        run.log_dir.mkdir(parents=True, exist_ok=True)
        print(
            f"[{index}/{len(plan.runs)}] {run.study}: {run.model} ({', '.join(run.tasks)}) -> {run.log_dir}",
            file=out,
            flush=True,
        )
        command = [sys.executable, "-m", "inspect_ai", *run.command[1:]]  # this environment's Inspect
        ended, unfinished = run_recording_status(command, dict(os.environ))
        if ended.asked is not None:
            print(
                f"interrupted by signal {ended.asked}: {ended.account()}; "
                "run the same grid command again to resume",
                file=out,
                flush=True,
            )
            return 128 + ended.asked
        if ended.status != 0 or unfinished:
            failed.append(f"{run.study}: {run.model} (exit {ended.status}; logs in {run.log_dir})")
            failed.extend(f"  {line}" for line in unfinished)  # each log's own error
    for line in failed:
        print(f"unfinished: {line}", file=out)
    if failed:
        print("run the same grid command again to retry what is unfinished", file=out)
    return 1 if failed else 0
