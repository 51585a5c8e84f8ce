"""Table 2: agreement between human annotators and with the judge, from a ratings CSV."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ....data.jsonl import read_csv_frame
from ....errors import NarrativeInfillError
from ..annotate.study import RATED
from .document import Absent, Table

#: How Table 2 meets epochs, said in report.md when the logs have more than one.
EPOCH_JOIN_NOTE = (
    "Table 2 joins each rating with the judgement of the same (sample, epoch); ratings without an "
    "epoch column are of epoch 1, the answer `annotate` shows."
)


class HumanRatingsError(NarrativeInfillError, ValueError):
    """A human-ratings CSV that cannot be used, naming the file, row and column."""


def read_human_ratings(path: str) -> pd.DataFrame:
    """Human ratings, one row per (sample, annotator), each dimension an integer 1-5.

    Checked here because a pivot would silently average repeated rows and a cast would
    silently truncate 3.5 to 3.
    """
    human = read_csv_frame(
        path, HumanRatingsError, dtype={"sample_id": str, "annotator": str, "model": str, "setting": str}
    )
    missing = [c for c in ("sample_id", "annotator", *RATED) if c not in human.columns]
    if missing:
        raise HumanRatingsError(f"{path}: missing column(s) {', '.join(missing)}")
    for index, row in human.iterrows():
        number = index + 1  # data rows counted from 1, after the header
        for column in ("sample_id", "annotator"):
            if pd.isna(row[column]) or not str(row[column]).strip():
                raise HumanRatingsError(f"{path}, row {number}: column {column!r} is empty")
        for dimension in RATED:
            value = pd.to_numeric(row[dimension], errors="coerce")
            if pd.isna(value) or value != int(value) or not 1 <= value <= 5:
                raise HumanRatingsError(
                    f"{path}, row {number}: {dimension!r} must be an integer from 1 to 5, got "
                    f"{row[dimension]!r}"
                )
    if "epoch" in human.columns:
        for index, value in human["epoch"].items():
            number = pd.to_numeric(value, errors="coerce")
            if pd.isna(number) or number != int(number) or number < 1:
                raise HumanRatingsError(
                    f"{path}, row {index + 1}: 'epoch' must be an integer from 1, got {value!r}"
                )
        human["epoch"] = pd.to_numeric(human["epoch"]).astype(int)
    keys = [c for c in ("model", "setting", "sample_id", "epoch", "annotator") if c in human.columns]
    repeated = human.duplicated(keys, keep="first")
    if repeated.any():
        number = int(repeated.idxmax()) + 1
        raise HumanRatingsError(
            f"{path}, row {number}: a second rating of the same sample by the same annotator"
        )
    human[list(RATED)] = human[list(RATED)].apply(pd.to_numeric).astype(int)
    return human


def human_agreement(frame: pd.DataFrame, human_csv: str, has_judge: bool) -> Table:
    """Table 2: Cohen's kappa between the first two annotators, Spearman of each with the judge."""
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score

    human = read_human_ratings(human_csv)
    annotators = sorted(human["annotator"].unique())
    keys = [c for c in ("model", "setting") if c in human.columns] + ["sample_id", "epoch"]
    # Joined per (sample, epoch): a rating is of one answer (EPOCH_JOIN_NOTE).
    if "epoch" not in human.columns:
        human = human.assign(epoch=1)
    judged = frame.drop(columns=["sample_id"], errors="ignore").rename(columns={"id": "sample_id"})
    judged["sample_id"] = judged["sample_id"].astype(str)
    if has_judge and judged.duplicated(keys).any():
        repeated = judged[judged.duplicated(keys, keep=False)].iloc[0]
        return Absent(
            f"sample {repeated['sample_id']} (epoch {repeated['epoch']}) is in more than one run of "
            "these logs: "
            + (
                "give the ratings 'model' and 'setting' columns"
                if len(keys) < 4
                else "report each run's logs on their own with the ratings of that run"
            )
        )
    judged = judged.set_index(keys)
    wide = human.pivot_table(index=keys, columns="annotator", values=list(RATED))
    rows = []
    for d in RATED:
        row: dict[str, Any] = {"dimension": d}
        if len(annotators) >= 2:
            pair = wide[d][annotators[:2]].dropna()
            row["cohen_kappa"] = cohen_kappa_score(pair[annotators[0]], pair[annotators[1]])
        if has_judge:
            for annotator in annotators:
                joined = pd.concat([wide[d][annotator], judged[d]], axis=1, join="inner").dropna()
                row[f"spearman_{annotator}"] = (
                    spearmanr(joined.iloc[:, 0], joined.iloc[:, 1]).statistic if len(joined) > 2 else math.nan
                )
        rows.append(row)
    return pd.DataFrame(rows).set_index("dimension")
