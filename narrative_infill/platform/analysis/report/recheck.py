"""The report's own check of each log it reads: every sample recomputed from what the model and the
graders wrote, as ``verify`` recomputes a submission's logs (``submission.recompute.recheck_runs``:
answers re-extracted, judge scores re-parsed, the automatic metrics re-scored where the log's
backbones load here). A log's scores are otherwise its writer's say-so: a log whose records,
summaries and header all claim AtAvg 0.45 where the answers score 0.10 would enter Table 3 as it is.

A run whose recheck fails keeps its numbers (the report shows what the logs say) but each of its
cells is marked ``RECHECK_MARK`` in report.md, and the failure is named in its notes and on the
terminal. The re-scoring costs what scoring the answers once more costs; the gold side's
embeddings come from the metrics' cache (``scorers.metrics.cache``) within the process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ....task_options import setting_name

#: Marks each value of a run whose scores do not recompute from its records.
RECHECK_MARK = "✗"
#: Failures of one run named in report.md before the rest are counted.
LISTED = 3


@dataclass
class Rechecked:
    #: (model row, setting) -> why its run's scores are not what its records give
    failed: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: one line a failed run, for report.md's notes and the terminal
    lines: list[str] = field(default_factory=list)
    #: the logs whose metrics could not be re-scored here, and why
    unscored: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """report.md's notes: each failed run, then the logs not re-scored here."""
        count = len(self.unscored)
        return self.lines + (
            [f"The metrics of {count} log(s) could not be re-scored here: {'; '.join(self.unscored)}"]
            if count
            else []
        )


def recheck_logs(frame: pd.DataFrame, locations: list[str]) -> Rechecked:
    """Each log in ``locations`` (of ``frame``, from ``load.load_samples``) recomputed as ``verify``
    recomputes a submission's logs; the (model row, setting) cells whose recheck fails."""
    from ..sample_records import checked_records
    from ..submission.build import SettingLogs
    from ..submission.recompute import recheck_runs
    from .load import read_log

    cells = frame.drop_duplicates("eval_id").set_index("eval_id")[["row", "setting"]]
    result = Rechecked()
    for location in locations:
        header = read_log(location)
        run = SettingLogs(
            setting_name(header.eval.metadata, header.eval.task), location, header, checked_records(location)
        )
        recheck = recheck_runs([run])
        if recheck.cannot_rescore:
            result.unscored.append(f"{location} ({recheck.cannot_rescore})")
        if not recheck.failures or header.eval.eval_id not in cells.index:
            continue
        row, setting = cells.loc[header.eval.eval_id]
        result.failed[(str(row), str(setting))] = recheck.failures
        more = f" ({len(recheck.failures) - LISTED} more)" if len(recheck.failures) > LISTED else ""
        result.lines.append(
            f"{RECHECK_MARK} {row} / {setting} ({location}): its scores are not what its records give "
            f"(recomputed as verify does): {'; '.join(recheck.failures[:LISTED])}{more}"
        )
    return result
