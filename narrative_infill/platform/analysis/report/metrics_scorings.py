"""Every metrics scoring of each sample, not only the newest: what ``--compare-paper`` and the
sensitivity table read.

A log rescored with ``inspect score --action append`` holds ``metrics``, ``metrics1``... each
with its own ``metrics_signature`` (backbones, lexical metrics, extraction rule). Scorings are
kept apart by signature and never averaged together; of two scorings with the same signature
the newest counts. A scoring is labelled by its extraction rule (``ours``, ``published``;
``unrecorded`` for logs scored before the rule was part of the signature), with a number added
when two signatures share a rule.
"""

from __future__ import annotations

import json

import pandas as pd

from ....scorers.metrics.pairs import ATAVG, METRIC_NAMES
from ....scorers.signature import MetricsSignature
from .load import _float

VALUES = (ATAVG, *METRIC_NAMES)


def _rule(signature: str | None) -> str:
    """A scoring's extraction rule, ``unrecorded`` for a log scored before the signature named it."""
    return MetricsSignature.parse(signature).extraction or "unrecorded"


def _order(key: str) -> int:
    return int(key.removeprefix("metrics") or 0)


def metrics_scorings(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (sample, scoring): model, setting, instance (the problem text), ``scoring``
    label, ``signature``, extraction ``status``, ``empty``, AtAvg and the five metrics."""
    if "metrics_scorings" not in frame.columns:
        return pd.DataFrame()
    rows: list[dict] = []
    for index, (text, model, setting, problem) in enumerate(
        zip(frame["metrics_scorings"], frame["model"], frame["setting"], frame["input"])
    ):
        scorings = json.loads(text) if isinstance(text, str) and text else {}
        latest: dict[str, dict] = {}
        for key in sorted(scorings, key=_order):  # newest last: it wins for its signature
            column = f"score_{key}"
            value = frame[column].iat[index] if column in frame.columns else None
            values = json.loads(value.replace("NaN", "null")) if isinstance(value, str) else value
            if not isinstance(values, dict):
                continue
            info = scorings[key]
            latest[info["signature"]] = {
                "sample": index,
                "model": model,
                "setting": setting,
                "instance": problem,
                "signature": info["signature"],
                "status": info["status"],
                "empty": info["empty"],
                **{name: _float(values.get(name)) for name in VALUES},
            }
        rows += latest.values()
    long = pd.DataFrame(rows)
    if long.empty:
        return long
    # A score without a signature (a log older than signatures) is a scoring too, "unrecorded":
    # left unlabelled, every table grouping by scoring dropped its samples without a word.
    signatures = sorted(long["signature"].fillna("").unique(), key=lambda s: (_rule(s), s))
    labels: dict[str, str] = {}
    seen: dict[str, int] = {}
    for signature in signatures:
        rule = _rule(signature)
        seen[rule] = seen.get(rule, 0) + 1
        labels[signature] = rule if seen[rule] == 1 else f"{rule}#{seen[rule]}"
    long["scoring"] = long["signature"].fillna("").map(labels)
    return long
