"""The grid's record in its log folder (``grid.json``): which runs the grid holds and which Slurm
jobs ran them, so that ``narrative-infill grid status LOG_DIR`` needs neither the grid file nor
the scheduler, and works on a folder copied off the cluster.

Run folders are kept relative to the log folder (the copy's path is not the cluster's); a run of a
later plan replaces the run of the same folder, and each submission adds its jobs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...data.atomic import atomic_file
from ...data.jsonl import read_utf8
from .plan import GridError, Run

RECORD_NAME = "grid.json"
RECORD_FORMAT = 1
#: A record is a few lines per run; anything larger is not one.
MAX_RECORD_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class RecordedRun:
    folder: str  # relative to the log folder
    study: str
    model: str
    tasks: tuple[str, ...]
    samples: int


@dataclass(frozen=True)
class Job:
    job_id: str
    study: str
    tasks: dict[int, str]  # array index -> run folder
    submitted: str


def read_record(log_dir: Path) -> tuple[list[RecordedRun], list[Job]]:
    """The runs and jobs recorded in ``log_dir``; a missing or malformed record names the field."""
    path = log_dir / RECORD_NAME
    if not path.is_file():
        raise GridError(
            f"{path}: no grid record; it is written when `narrative-infill grid` runs or submits a grid "
            "into this folder (give the grid file too: grid status LOG_DIR --grid FILE)"
        )
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise GridError(f"{path}: {path.stat().st_size:,} bytes is not a grid record")
    try:
        record = json.loads(read_utf8(path, GridError))
        runs = [
            RecordedRun(folder, entry["study"], entry["model"], tuple(entry["tasks"]), int(entry["samples"]))
            for folder, entry in record["runs"].items()
        ]
        jobs = [
            Job(
                str(job["job_id"]),
                job["study"],
                {int(i): f for i, f in job["tasks"].items()},
                job["submitted"],
            )
            for job in record["jobs"]
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise GridError(f"{path}: not a grid record ({type(err).__name__}: {err})") from None
    return runs, jobs


def recorded_runs(runs: list[Run], log_dir: Path) -> list[RecordedRun]:
    return [
        RecordedRun(run.log_dir.relative_to(log_dir).as_posix(), run.study, run.model, run.tasks, run.samples)
        for run in runs
    ]


def write_record(log_dir: Path, runs: list[Run], jobs: tuple[Job, ...] = ()) -> None:
    """Adds ``runs`` (replacing those of the same folder) and ``jobs`` to the record."""
    old_runs, old_jobs = read_record(log_dir) if (log_dir / RECORD_NAME).is_file() else ([], [])
    merged = {run.folder: run for run in [*old_runs, *recorded_runs(runs, log_dir)]}
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "runs": {
            folder: {"study": r.study, "model": r.model, "tasks": list(r.tasks), "samples": r.samples}
            for folder, r in merged.items()
        },
        "jobs": [
            {"job_id": j.job_id, "study": j.study, "tasks": j.tasks, "submitted": j.submitted}
            for j in [*old_jobs, *jobs]
        ],
    }
    log_dir.mkdir(parents=True, exist_ok=True)
    with atomic_file(log_dir / RECORD_NAME) as temporary:
        temporary.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
