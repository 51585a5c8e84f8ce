"""Logs -> one pandas frame: a row per sample with its model, setting, metadata and scores.

Reads through ``inspect_ai.analysis`` (``samples_df`` joined with ``evals_df``); dict-valued
scores are expanded into one float column per key.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from ...scorers.metrics.pairs import METRIC_NAMES as METRICS


def _score_columns(frame: pd.DataFrame, prefix: str) -> list[str]:
    return sorted((c for c in frame.columns if c == f"score_{prefix}" or c.startswith(f"score_{prefix}")), key=len)


def _expand(frame: pd.DataFrame, column: str, keys: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Dict-valued score column (JSON text in the dataframe) -> one float column per key."""
    def parse(value):
        if isinstance(value, str):
            try:
                return json.loads(value.replace("NaN", "null"))
            except json.JSONDecodeError:
                return {}
        return value if isinstance(value, dict) else {}

    parsed = frame[column].map(parse)
    names = keys or sorted({key for value in parsed for key in value})
    return pd.DataFrame({name: parsed.map(lambda v, n=name: _float(v.get(n))) for name in names}, index=frame.index)


def _float(value) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError):
        return math.nan
    return result


def _template(metadata) -> str | None:
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except json.JSONDecodeError:
            return None
    return metadata.get("template") if isinstance(metadata, dict) else None


def load_samples(paths: list[str]) -> pd.DataFrame:
    """One row per scored sample: model, setting, metadata, metrics, judge dimensions."""
    from inspect_ai.analysis import evals_df, samples_df

    samples = samples_df(paths, quiet=True, parallel=True)
    evals = evals_df(paths, quiet=True)
    # The setting is the task's template (task metadata), else the registered task name's last part.
    evals["setting"] = [
        _template(metadata) or str(name).split("/")[-1] for metadata, name in zip(evals["metadata"], evals["task_name"])
    ]
    frame = samples.merge(evals[["eval_id", "model", "task_name", "setting"]], on="eval_id", how="left")
    frame["model"] = frame["model"].astype(str).str.replace(r"^replay/", "", regex=True)
    metric_columns = _score_columns(frame, "metrics")
    if metric_columns:
        frame = frame.join(_expand(frame, metric_columns[0], (*METRICS, "atavg")))
    judge_columns = _score_columns(frame, "judge")
    if judge_columns:
        frame = frame.join(_expand(frame, judge_columns[0]))
    return frame
