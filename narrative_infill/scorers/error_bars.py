"""The error bars and breakdowns the scorers log for each score key, read by ``inspect view``.

Error bars are clustered by source narrative (``data.narrative``): Inspect's ``stderr`` and
``ci`` with ``cluster=NARRATIVE``, since the instances cut from one story are not independent
draws (the plain ``stderr`` would treat them so and come out too small). A sample without the
field (a log written before it existed, a foreign dataset) gets the narrative its
``(dataset, ref_id)`` or sample id names, else is a cluster of its own, with a warning.

The headline keys (AtAvg, QAvg) also carry a 95% interval (Inspect's ``ci``: the t interval with
narratives - 1 degrees of freedom; its level and cluster key are the metric's logged parameters;
clipped to the score's range, ``ci_clipped`` 1 where it was),
the number of narratives behind it (``narratives``), and the paper's breakdowns (Tables 7 and
8): the mean per domain, blank position, span length (``n=2``) and narrative length, named as
``report`` names them. A sample lacking a breakdown's field counts under ``<breakdown>: unknown``; a
breakdown no sample has a field for is left out of the log.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Value, ci, grouped, mean, metric, stderr

from ..data.narrative import LENGTH_BUCKETS, NARRATIVE, is_own_cluster, length_bucket, narrative_of
from ..data.records import POSITIONS
from ..inspect_compat import logged_as
from ..number_rules import CONFIDENCE, clip, is_missing

logger = logging.getLogger(__name__)

#: Breakdown -> the group a sample's metadata puts it in, as the log names it (None: unknown).
BREAKDOWNS: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "domain": lambda m: _text(m.get("domain")),
    "position": lambda m: _text(m.get("position")),
    "n": lambda m: None if _text(m.get("n")) is None else f"n={m['n']}",
    "length": lambda m: length_bucket(m.get("narrative_sentences")),
}

#: Groups shown in the paper's order (the rest alphabetically after them).
_ORDER = {
    label: (0, f"{index:02d}")
    for index, label in enumerate(
        [*POSITIONS, *(f"n={n}" for n in (1, 2, 3)), *(b for b, _ in LENGTH_BUCKETS)]
    )
}


def _text(value: Any) -> str | None:
    return None if is_missing(value) or not str(value).strip() else str(value)


@cache
def _warn_own_clusters(alone: int, total: int) -> None:
    logger.warning(
        f"{alone} of {total} scored samples name no source narrative (no '{NARRATIVE}', dataset and "
        "ref_id, or benchmark sample id): each is its own cluster, so their error bars may be too small"
    )


def with_narratives(scores: list[SampleScore]) -> list[SampleScore]:
    """``scores`` whose metadata all name a narrative (copies where one had to be derived)."""
    completed, alone = [], 0
    for score in scores:
        metadata = score.sample_metadata or {}
        if metadata.get(NARRATIVE) is not None:
            completed.append(score)
            continue
        key = narrative_of(metadata, score.sample_id)
        alone += is_own_cluster(key)
        completed.append(score.model_copy(update={"sample_metadata": {**metadata, NARRATIVE: key}}))
    if alone:
        _warn_own_clusters(alone, len(scores))
    return completed


def _on_narratives(inner: Metric) -> Metric:
    """``inner`` computed on the samples with their narratives completed (``with_narratives``)."""

    def compute(scores: list[SampleScore]) -> Value:  # typed: Inspect passes SampleScores by the hint
        return inner(with_narratives(scores))  # type: ignore[arg-type]

    return logged_as(inner, compute)


def narrative_stderr() -> Metric:
    """Inspect's ``stderr`` clustered by source narrative."""
    return _on_narratives(stderr(cluster=NARRATIVE))


def narrative_ci(bounds: tuple[float, float]) -> Metric:
    """Inspect's ``ci`` (t interval, clusters - 1 degrees of freedom) clustered by source narrative,
    clipped to the score's ``bounds`` (AtAvg near 0 over few stories reached below 0), with
    ``clipped`` 1 where it was; all nan over no values (Inspect's ``ci`` gives 0 and 0, which
    the terminal table showed beside the nan mean of a run without a judge as an interval)."""
    inner = ci(level=CONFIDENCE, cluster=NARRATIVE)

    def compute(scores: list[SampleScore]) -> Value:
        if not scores:
            return {"lower": math.nan, "upper": math.nan, "clipped": math.nan}
        found = inner(with_narratives(scores))  # type: ignore[arg-type]
        assert isinstance(found, Mapping)  # ci() returns its lower and upper bounds
        lower, upper, cut = clip(found["lower"], found["upper"], bounds)  # type: ignore[arg-type]
        return {"lower": lower, "upper": upper, "clipped": int(cut)}

    return logged_as(inner, compute)


@metric
def narratives() -> Metric:
    """How many source narratives the key's error bars rest on: the G of the interval's G - 1
    degrees of freedom, shown beside it so that a reader can tell a 10-story interval from a
    1,000-story one."""

    def compute(scores: list[SampleScore]) -> Value:
        return len({(s.sample_metadata or {})[NARRATIVE] for s in with_narratives(scores)})

    return compute


def _grouped_mean(scores: list[SampleScore], name: str) -> dict[str, Any]:
    """The mean per group of breakdown ``name``: Inspect's ``grouped(mean())``; {} when no sample
    has the breakdown's field."""
    group_of, field = BREAKDOWNS[name], f"breakdown_{name}"
    groups = [group_of(score.sample_metadata or {}) for score in scores]
    if all(group is None for group in groups):
        return {}
    labelled = [
        score.model_copy(
            update={"sample_metadata": {**(score.sample_metadata or {}), field: g or f"{name}: unknown"}}
        )
        for score, g in zip(scores, groups)
    ]
    means = grouped(mean(), field, all=False)(labelled)  # type: ignore[arg-type]
    assert isinstance(means, Mapping)  # grouped() returns a group -> value mapping
    return dict(sorted(means.items(), key=lambda item: _ORDER.get(item[0], (1, item[0]))))


@metric
def breakdowns() -> Metric:
    """The paper's breakdowns of a headline key (Tables 7 and 8): its mean per domain, blank
    position, span length and narrative length, in one metric (Inspect keeps one metric of a
    name per score key, so four ``grouped`` metrics would be cut to the first)."""

    def compute(scores: list[SampleScore]) -> Value:
        merged: dict[str, Any] = {}
        for name in BREAKDOWNS:
            merged |= _grouped_mean(scores, name)
        return merged

    return compute


def key_metrics() -> list[Metric]:
    """Every score key: its mean and clustered standard error."""
    return [mean(), narrative_stderr()]


def headline_metrics(bounds: tuple[float, float]) -> list[Metric]:
    """AtAvg and QAvg: mean, clustered standard error and interval (within the score's ``bounds``),
    the narratives behind them, and the paper's breakdowns."""
    return [*key_metrics(), narrative_ci(bounds), narratives(), breakdowns()]
