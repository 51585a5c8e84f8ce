"""Where copying stands in the report: the null baselines beside the models, and the copy share.

Baseline runs are ordinary logs of ``--model baseline/<rule>`` (``data.baselines``). Two tables:

* ``baselines_vs_models``: per setting, each run's AtAvg and QAvg (where judged), baselines and
  models alike, and for each model the context baseline's AtAvg on the same instances (same
  setting, same problem and gold) with a mark where the model's AtAvg is not above it. A model
  whose instances the context baseline does not all cover is marked so, never compared on a
  part of its instances.
* ``copy_share_by_setting``: per run and setting, the percentage of answers whose
  ``context_copy`` is above ``CONTEXT_COPY_THRESHOLD`` (``definitions.is_copied``).
"""

from __future__ import annotations

import pandas as pd

from ...definitions import CONTEXT_COPY_THRESHOLD, SETTINGS, is_copied
from .document import Absent, Table, has_columns

BASELINE_PREFIX = "baseline/"
CONTEXT = f"{BASELINE_PREFIX}context"
BASELINES_TABLE = "baselines_vs_models"
COPY_TABLE = "copy_share_by_setting"
NOT_ABOVE = "NOT ABOVE the context baseline"
#: The instance a sample answers: the same problem and gold in the same setting.
_INSTANCE = ["setting", "input", "target"]


def is_baseline(model: str) -> bool:
    """Whether a log's model is one of the null baselines (``baseline/<rule>``)."""
    return str(model).startswith(BASELINE_PREFIX)


def _context_mark(run: pd.DataFrame, context: pd.Series) -> tuple[float, str]:
    """(the context baseline's AtAvg on ``run``'s instances, the mark) for one model run."""
    values = run[_INSTANCE].apply(tuple, axis=1).map(context)
    if values.isna().any():
        missing = int(values.isna().sum())
        return float("nan"), f"no context baseline for {missing} of {len(values)} samples"
    baseline = float(values.mean())
    return baseline, NOT_ABOVE if run["atavg"].mean() <= baseline else "above"


def baselines_table(frame: pd.DataFrame) -> Table:
    """Each run's AtAvg and QAvg per setting, baselines first, each model marked against the
    context baseline on its own instances (module docstring)."""
    if not has_columns(frame, ("atavg",)):
        return Absent("no automatic-metric scores in the logs")
    runs = frame[frame["model"].map(is_baseline)]
    if runs.empty:
        return Absent("no baseline runs in the logs (run the tasks with --model baseline/context, ...)")
    scored = frame.dropna(subset=["atavg"])
    context = scored[scored["model"] == CONTEXT].groupby(_INSTANCE)["atavg"].mean()
    context.index = context.index.map(tuple)
    rows = []
    for (setting, row), run in scored.groupby(["setting", "row"], sort=False):
        baseline = bool(is_baseline(run["model"].iloc[0]))
        entry = {
            "setting": setting,
            "run": row,
            "baseline": baseline,
            "AtAvg": run["atavg"].mean(),
            "QAvg": run["qavg"].mean() if "qavg" in run else float("nan"),
            "samples": len(run),
        }
        if not baseline:
            entry["context AtAvg (same instances)"], entry["vs context"] = _context_mark(run, context)
        rows.append(entry)
    table = pd.DataFrame(rows)
    table["order"] = table["setting"].map(lambda s: SETTINGS.index(s) if s in SETTINGS else len(SETTINGS))
    table = table.sort_values(["order", "baseline", "AtAvg"], ascending=[True, False, False])
    return table.drop(columns="order").set_index(["setting", "run"])


def copy_share_table(frame: pd.DataFrame) -> Table:
    """Per run and setting, the % of answers whose ``context_copy`` is above the threshold."""
    if not has_columns(frame, ("context_copy",)):
        return Absent("no context_copy in the logs (scored before the metrics scorer recorded it)")
    scored = frame.dropna(subset=["context_copy"])
    table = (
        scored.assign(copied=is_copied(scored["context_copy"]).astype(float) * 100)
        .pivot_table(index="row", columns="setting", values="copied", aggfunc="mean")
        .rename_axis(index=f"% answers with context_copy > {CONTEXT_COPY_THRESHOLD:g}")
    )
    return table.reindex(columns=[s for s in SETTINGS if s in table.columns])


def baseline_tables(frame: pd.DataFrame) -> dict[str, Table]:
    """The two tables, by name, for ``Report.add``."""
    return {BASELINES_TABLE: baselines_table(frame), COPY_TABLE: copy_share_table(frame)}
