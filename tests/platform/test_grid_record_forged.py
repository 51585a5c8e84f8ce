"""``grid status`` against a forged grid record (grid.json) or log header: a field that would show a
wrong state, or reach outside the log folder, is refused with the file and field named."""

from __future__ import annotations

import json
import re

import pytest

from narrative_infill.platform.grid import status
from narrative_infill.platform.grid.plan import GridError
from narrative_infill.platform.grid.record import RecordedRun, read_record


def _record(tmp_path, run: dict | None = None, job: dict | None = None):
    entry = {"study": "main", "model": "Rule", "tasks": ["l2"], "samples": 24, **(run or {})}
    folder = entry.pop("folder", "main/Rule")
    jobs = (
        [{"job_id": "7", "study": "main", "tasks": {"0": folder}, "submitted": "x", **job}]
        if job is not None
        else []
    )
    (tmp_path / "grid.json").write_text(json.dumps({"format": 1, "runs": {folder: entry}, "jobs": jobs}))


@pytest.mark.parametrize(
    ("run", "job", "field"),
    [
        ({"tasks": "l2"}, None, "runs.main/Rule.tasks"),  # a string read as the tasks 'l' and '2'
        ({"tasks": ["l2", 3]}, None, "runs.main/Rule.tasks"),
        ({"samples": -24}, None, "runs.main/Rule.samples"),
        ({"samples": True}, None, "runs.main/Rule.samples"),
        ({"folder": "/etc"}, None, "runs./etc"),  # outside the log folder
        ({"folder": "main/../../elsewhere"}, None, "runs.main/../../elsewhere"),
        ({"study": 5}, None, "runs.main/Rule.study"),
        (None, {"tasks": {"0": 5}}, "jobs[0].tasks"),
        (None, {"tasks": {"-1": "main/Rule"}}, "jobs[0].tasks"),
        (None, {"job_id": "7 --wckey=x"}, "jobs[0].job_id"),
    ],
)
def test_a_forged_grid_record_is_refused_naming_the_field(tmp_path, run, job, field):
    _record(tmp_path, run, job)
    with pytest.raises(GridError, match=f"grid.json: {re.escape(field)}: "):
        read_record(tmp_path)


def test_a_sound_grid_record_still_reads(tmp_path):
    _record(tmp_path, job={})
    runs, jobs = read_record(tmp_path)
    assert runs == [RecordedRun("main/Rule", "main", "Rule", ("l2",), 24)] and jobs[0].tasks == {
        0: "main/Rule"
    }


@pytest.mark.parametrize(
    ("total", "done"),
    [(-5, 0), (24, 1_000_000_000), (24, -1)],
)
def test_a_log_whose_counts_cannot_be_is_refused(monkeypatch, tmp_path, total, done):
    """A header claiming more samples done than the run has (or a negative count) is not shown as
    a finished run."""

    class Header:
        status = "success"
        error = None

        class eval:  # noqa: N801  (the header's own field names)
            task = "narrative_infill/l2"
            created = "2026-01-01"

            class dataset:  # noqa: N801
                samples = total

            class config:  # noqa: N801
                epochs = 1

        class results:  # noqa: N801
            completed_samples = done

    class Info:
        name = str(tmp_path / "run.eval")

    monkeypatch.setattr("inspect_ai.log.list_eval_logs", lambda folder, recursive: [Info()])
    monkeypatch.setattr(status, "_read_header", lambda location: Header())
    with pytest.raises(GridError, match="run.eval: .*samples"):
        status._task_progress(tmp_path)


def test_a_record_nested_too_deep_for_the_parser_is_named(tmp_path):
    (tmp_path / "grid.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(GridError, match="grid.json: not a grid record \\(RecursionError"):
        read_record(tmp_path)
