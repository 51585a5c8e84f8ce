"""Coverage: how many of a run's samples each cell averages, and why the others are missing.

Per cell (model row x setting) and per model row: the samples the run had (its dataset times its
epochs), those its log holds, the errored ones, those the metrics scored (empty extractions among
them, which the metrics score 0 by their rule and are counted here), those the judge scored and
those whose judgement failed (``grader_failed``: no number). Coverage is the share of the run's
samples a scorer scored (``coverage_pct``: every scorer present); a value whose scorer covers
under ``COVERAGE_MIN_PCT`` of its cell is marked ``†`` in ``report.md`` and in the figures.
"""

from __future__ import annotations

from collections.abc import Collection

import pandas as pd

from ....scorers.judge.rubric import known_dimensions
from ....scorers.metrics.pairs import METRIC_NAMES as METRICS

#: A cell averaging fewer than this share of its run's samples is marked.
COVERAGE_MIN_PCT = 95.0
MARK = "†"
#: The count of samples each scorer scored.
SCORED = {"metrics": "metrics_scored", "judge": "judge_scored"}
COVERAGE_TABLE = "coverage_by_cell"
COVERAGE_BY_MODEL = "coverage_by_model"
#: How report.md explains the mark.
MARK_NOTE = (
    f"{MARK}: the cell averages under {COVERAGE_MIN_PCT:g}% of its run's samples (see {COVERAGE_TABLE})."
)


def _counts(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per sample: 1/0 columns that sum to the coverage counts."""
    counts = pd.DataFrame({"in_log": 1, "errored": frame["errored"].astype(int)}, index=frame.index)
    if "atavg" in frame and frame["atavg"].notna().any():
        counts["metrics_scored"] = frame["atavg"].notna().astype(int)
        counts["empty_answers_scored_0"] = frame["empty_answer"].fillna(False).astype(bool).astype(int)
    if "qavg" in frame and frame["qavg"].notna().any():
        counts["judge_scored"] = frame["qavg"].notna().astype(int)
        failed = frame["grader_failed"].notna() if "grader_failed" in frame else False
        counts["grader_failed"] = (frame["qavg"].isna() & failed).astype(int)
    scored = [c for c in SCORED.values() if c in counts]
    counts["all_scored"] = counts[scored].min(axis=1) if scored else 0
    return counts


def _finish(table: pd.DataFrame) -> pd.DataFrame:
    runs = table["samples"].where(table["samples"] > 0)
    table.insert(1, "not_in_log", table["samples"] - table.pop("in_log"))
    for scorer, column in SCORED.items():
        if column in table:
            table[f"{scorer}_coverage_pct"] = 100 * table[column] / runs
    table["coverage_pct"] = 100 * table.pop("all_scored") / runs
    return table


def coverage_tables(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``coverage_by_cell`` and ``coverage_by_model`` of a frame from ``load_samples``
    (``model`` already the cell's row)."""
    counts = _counts(frame).join(frame[["model", "setting", "eval_id"]])
    cells = counts.groupby(["model", "setting"]).sum(numeric_only=True)
    runs = frame.drop_duplicates("eval_id").groupby(["model", "setting"])["run_samples"].sum()
    cells.insert(0, "samples", runs.reindex(cells.index).astype(int))
    by_model = cells.groupby(level="model").sum()
    return {COVERAGE_TABLE: _finish(cells), COVERAGE_BY_MODEL: _finish(by_model)}


def low_coverage(coverage: pd.DataFrame | None) -> dict[str, set[tuple[str, str]]]:
    """Per scorer, the (model row, setting) cells whose share of scored samples is under the threshold."""
    if coverage is None:
        return {}
    return {
        scorer: set(coverage.index[coverage[f"{scorer}_coverage_pct"].fillna(0) < COVERAGE_MIN_PCT])
        for scorer in SCORED
        if f"{scorer}_coverage_pct" in coverage
    }


def _scorer_of(column) -> str | None:
    """Which scorer's numbers a table column holds (its name, or any level of it)."""
    names = {str(part).lower() for part in (column if isinstance(column, tuple) else (column,))}
    if names & {*METRICS, "atavg"}:
        return "metrics"
    if names & {*known_dimensions(), "qavg", "high", "low"} or any(n.startswith("qavg_") for n in names):
        return "judge"
    return None


def marked(
    table: pd.DataFrame, low: dict[str, set[tuple[str, str]]], failed: Collection[tuple[str, str]] = ()
) -> pd.DataFrame:
    """``table`` (rounded) as text, with ``†`` on each value of a cell whose scorer covers under the
    threshold, and ``recheck.RECHECK_MARK`` on each value of a ``failed`` cell (its run's scores do
    not recompute): tables indexed by model with setting columns (Tables 3, 5), or indexed by
    (setting, model) (Tables 10-12, 14)."""
    from .recheck import RECHECK_MARK

    text = table.round(3).astype(object).where(table.notna(), "")
    if not any(low.values()) and not failed:
        return text
    names = list(table.index.names)
    for position, key in enumerate(table.index):
        keys = dict(zip(names, key if isinstance(key, tuple) else (key,)))
        if "model" not in keys:
            continue
        for column_position, column in enumerate(table.columns):
            scorer = _scorer_of(column)
            setting = keys.get("setting", column[-1] if isinstance(column, tuple) else None)
            marks = [MARK] if scorer and (keys["model"], setting) in low.get(scorer, ()) else []
            marks += [RECHECK_MARK] if scorer and (keys["model"], setting) in failed else []
            if marks:
                value = text.iat[position, column_position]
                text.iat[position, column_position] = f"{value if value != '' else 'none'} {' '.join(marks)}"
    return text
