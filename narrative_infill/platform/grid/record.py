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
from pathlib import Path, PurePosixPath
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
    except (ValueError, RecursionError) as err:  # RecursionError: nesting too deep for the parser
        raise GridError(f"{path}: not a grid record ({type(err).__name__}: {err})") from None
    if not isinstance(record, dict) or not isinstance(record.get("runs"), dict):
        raise GridError(f"{path}: runs: not a grid record (expected a mapping of run folders)")
    if not isinstance(record.get("jobs"), list):
        raise GridError(f"{path}: jobs: not a grid record (expected a list)")
    runs = [_recorded_run(path, folder, entry) for folder, entry in record["runs"].items()]
    jobs = [_job(path, f"jobs[{index}]", job) for index, job in enumerate(record["jobs"])]
    return runs, jobs


def _field(path: Path, where: str, entry: Any, key: str, kind: type) -> Any:
    """``entry[key]``, of type ``kind``; else the file and field named."""
    value = entry.get(key) if isinstance(entry, dict) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise GridError(f"{path}: {where}.{key}: expected {kind.__name__}, found {value!r:.80}")
    return value


def _relative_folder(path: Path, where: str, folder: Any) -> str:
    """A run folder inside the log folder: a forged one must not make status read another's logs."""
    if not isinstance(folder, str) or not folder:
        raise GridError(f"{path}: {where}: expected a run folder, found {folder!r:.80}")
    parts = PurePosixPath(folder)
    if parts.is_absolute() or ".." in parts.parts or "\\" in folder:
        raise GridError(f"{path}: {where}: {folder!r:.80} is not a folder inside the log folder")
    return folder


def _recorded_run(path: Path, folder: Any, entry: Any) -> RecordedRun:
    where = f"runs.{folder}"
    _relative_folder(path, where, folder)
    tasks = _field(path, where, entry, "tasks", list)
    samples = _field(path, where, entry, "samples", int)
    if not all(isinstance(task, str) for task in tasks):
        raise GridError(f"{path}: {where}.tasks: {tasks!r:.80} is not a list of task names")
    if samples < 0:
        raise GridError(f"{path}: {where}.samples: {samples} is not a count")
    return RecordedRun(
        folder,
        _field(path, where, entry, "study", str),
        _field(path, where, entry, "model", str),
        tuple(tasks),
        samples,
    )


def _job(path: Path, where: str, job: Any) -> Job:
    job_id = _field(path, where, job, "job_id", str)
    if not job_id.isdigit():
        raise GridError(f"{path}: {where}.job_id: {job_id!r:.80} is not a Slurm job id")
    tasks = {}
    for index, folder in _field(path, where, job, "tasks", dict).items():
        if not index.isdigit():
            raise GridError(f"{path}: {where}.tasks: {index!r:.80} is not an array index")
        tasks[int(index)] = _relative_folder(path, f"{where}.tasks", folder)
    return Job(
        job_id, _field(path, where, job, "study", str), tasks, _field(path, where, job, "submitted", str)
    )


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
