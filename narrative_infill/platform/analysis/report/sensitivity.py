"""How much extraction decides a score: per scoring, model and setting, the share of empty and
of no-answer extractions, AtAvg as scored and AtAvg over the non-empty answers only.

An empty answer scores 0 on every metric, so a model that often fails to answer ranks low
whatever its answers are worth; the two AtAvg columns side by side show when a rank comes
from not answering rather than from answering badly. The ``Overall`` row of each setting is
the mean over models, as in the paper's tables.
"""

from __future__ import annotations

import pandas as pd

from ....paper_protocol import SETTINGS
from .document import Absent, Table
from .metrics_scorings import metrics_scorings

TABLE = "sensitivity_extraction"


def sensitivity_table(frame: pd.DataFrame) -> Table:
    """The table, or why it cannot be built."""
    long = metrics_scorings(frame)
    if long.empty:
        return Absent("no automatic-metric scores in the logs")
    long = long.assign(no_answer=long["status"] == "no_answer")
    grouped = long.groupby(["scoring", "setting", "model"])
    table = pd.DataFrame(
        {
            "samples": grouped.size(),
            "empty_pct": grouped["empty"].mean() * 100,
            "no_answer_pct": grouped["no_answer"].mean() * 100,
            "atavg": grouped["atavg"].mean(),
            "atavg_nonempty": long[~long["empty"]].groupby(["scoring", "setting", "model"])["atavg"].mean(),
        }
    )
    overall = table.groupby(level=["scoring", "setting"]).mean()
    overall["samples"] = table["samples"].groupby(level=["scoring", "setting"]).sum()
    overall.index = pd.MultiIndex.from_tuples(
        [(*key, "Overall") for key in overall.index], names=table.index.names
    )
    table = pd.concat([table, overall])
    return table.sort_index(key=_order)


def _order(level: pd.Index) -> pd.Index:
    """Settings in the paper's order, each setting's models by name with ``Overall`` last."""
    if level.name == "setting":
        return level.map({setting: index for index, setting in enumerate(SETTINGS)}).fillna(len(SETTINGS))
    if level.name == "model":
        return level.map(lambda model: f"~{model}" if model == "Overall" else model)  # "~" sorts last
    return level
