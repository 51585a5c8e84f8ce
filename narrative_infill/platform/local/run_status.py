"""How each Inspect task of a command ended, for the package's commands that run ``inspect eval``.

``inspect eval`` exits 0 when a task ends in error (an engine that never started, a request the
server refused): only the log's status says so. A command of this package that runs Inspect in a
child (``serve -- COMMAND``, the grid) names a file in ``$NARRATIVE_INFILL_RUN_STATUS``; this hook
(registered through the package's Inspect entry point) appends one JSON line per task when the run ends
(task, model, status, the log's error, the log's location), and :func:`unfinished` reads them back
so that the command exits non-zero with the log's own error.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from inspect_ai.hooks import Hooks, RunEnd, hooks

from .process_group import Ended, run_forwarding_signals

STATUS_VARIABLE = "NARRATIVE_INFILL_RUN_STATUS"
ERROR_LINES = 12  # the end of a log's error (its message and where it was raised) is shown


@hooks(
    name="narrative_infill_run_status",
    description=f"records each task's log status in ${STATUS_VARIABLE} (set by narrative-infill commands)",
)
class RunStatus(Hooks):
    def enabled(self) -> bool:
        return bool(os.environ.get(STATUS_VARIABLE))

    async def on_run_end(self, data: RunEnd) -> None:
        # Run end, not task end: Inspect calls on_task_end only for a task that finished normally.
        records = [
            {
                "task_id": log.eval.task_id,  # an eval-set's retry of a task has the same id
                "task": log.eval.task,
                "model": log.eval.model,
                "status": log.status,
                "error": log.error.message if log.error else None,
                "location": log.location,
            }
            for log in data.logs
        ]
        if data.exception is not None:  # the run itself failed: no task logs to tell
            error = f"{type(data.exception).__name__}: {data.exception}"
            records.append(
                {
                    "task_id": data.run_id,
                    "task": "the run",
                    "model": "-",
                    "status": "error",
                    "error": error,
                    "location": "no log",
                }
            )
        with open(os.environ[STATUS_VARIABLE], "a", encoding="utf-8") as handle:
            handle.writelines(json.dumps(record) + "\n" for record in records)


def unfinished(path: Path) -> list[str]:
    """One line per task recorded in ``path`` whose last run did not succeed, with its log's error."""
    if not path.is_file():
        return []
    last = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        last[record["task_id"]] = record  # a retry that succeeded replaces the failure before it
    failed = []
    for record in last.values():
        if record["status"] != "success":
            error = "\n".join(str(record["error"] or "no error recorded").splitlines()[-ERROR_LINES:])
            failed.append(
                f"{record['task']} ({record['model']}) ended with status {record['status']}: {error}\n"
                f"  log: {record['location']}"
            )
    return failed


def run_recording_status(
    command: list[str], env: dict[str, str], stop_when: Callable[[], bool] = lambda: False
) -> tuple[Ended, list[str]]:
    """:func:`~.child.run_forwarding_signals`, plus the Inspect tasks it ran that did not succeed."""
    with tempfile.TemporaryDirectory(prefix="narrative-infill-status-") as scratch:
        path = Path(scratch) / "tasks.jsonl"
        ended = run_forwarding_signals(command, {**env, STATUS_VARIABLE: str(path)}, stop_when)
        return ended, unfinished(path)
