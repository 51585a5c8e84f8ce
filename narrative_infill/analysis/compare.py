"""``narrative-infill compare A B``: is run A's score really different from run B's?

Each side is one run (a log, or a folder holding one run's logs: ``report``'s loading picks the
run's latest successful log). Only the instances both sides scored are compared, and their count
is printed. Per quantity (AtAvg, QAvg, each metric and judge dimension): each side's mean over
the shared instances (an instance's epochs averaged first), the mean difference A - B with a
paired bootstrap interval that resamples source narratives, a two-sided sign-flip p-value at the
narrative level, and the smallest difference these instances detect at 80% power (formulas in
``analysis.stats``). Two runs whose numbers do not measure the same thing are refused, naming the
field: metric signatures, judges, dataset revision, task version. Two settings of one model (or
two models in one setting) are comparable; that is what the command is for.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..definitions import DIMENSIONS, NarrativeInfillError, none_if_nan
from ..scorers.metrics.pairs import ATAVG, METRIC_NAMES
from .report.cells import sample_narratives
from .report.load import load_samples, read_log
from .stats import CONFIDENCE, POWER, RESAMPLES, SEED, PairedTest, paired_test

#: What compare reports, the headline keys first.
QUANTITIES = (ATAVG, "qavg", *METRIC_NAMES, *DIMENSIONS)


class NotComparableError(NarrativeInfillError, ValueError):
    """Two runs whose scores do not measure the same thing, or a side that is not one run."""


@dataclass
class Side:
    """One side of a comparison: its run's label, samples and log header."""

    name: str
    label: str
    frame: pd.DataFrame
    header: Any


def load_side(name: str, paths: list[str], pair_on: tuple[str, ...] = ()) -> Side:
    """The one run in ``paths`` (its scored, non-errored samples, each with the ``instance`` it is
    paired on), or an error naming the side."""
    loaded = load_samples(paths)
    frame = loaded.frame[~loaded.frame["errored"]].copy()
    frame["instance"] = _instances(name, frame, pair_on)
    runs = sorted(set(loaded.frame["log"]))
    if len(runs) != 1:
        raise NotComparableError(
            f"{name} ({', '.join(paths)}) holds {len(runs)} runs; give one run per side: {', '.join(runs)}"
        )
    first = loaded.frame.iloc[0]
    return Side(name, f"{first['row']} / {first['setting']}", frame, read_log(runs[0]))


def _instances(name: str, frame: pd.DataFrame, pair_on: tuple[str, ...]) -> pd.Series:
    """What pairs a sample with the other side's: its id, or the metadata fields ``pair_on``."""
    if not pair_on:
        return frame["id"].astype(str)
    missing = [f for f in pair_on if f"metadata_{f}" not in frame or frame[f"metadata_{f}"].isna().any()]
    if missing:
        raise NotComparableError(
            f"{name}: samples without the metadata field(s) {', '.join(missing)} to pair on"
        )
    return frame[[f"metadata_{f}" for f in pair_on]].astype(str).agg("|".join, axis=1)


def _values(frame: pd.DataFrame, column: str) -> set:
    return set(frame[column].dropna().astype(str)) if column in frame else set()


def _dataset(header: Any) -> str | None:
    identity = dict((header.eval.metadata or {}).get("dataset_identity") or {})
    identity.pop("instances", None)  # a filtered subset is still the same data
    return json.dumps(identity, sort_keys=True) if identity else None


def comparability(a: Side, b: Side) -> None:
    """Refuse two runs that differ in what makes their numbers comparable, naming the field."""
    fields = {
        "metric signatures": (_values(a.frame, "metrics_signature"), _values(b.frame, "metrics_signature")),
        "judges": (_values(a.frame, "judge_models"), _values(b.frame, "judge_models")),
        "dataset revision": (_dataset(a.header), _dataset(b.header)),
        "task version": (a.header.eval.task_version, b.header.eval.task_version),
    }
    for field, (left, right) in fields.items():
        if left != right:
            raise NotComparableError(
                f"A and B differ in their {field} (A: {_shown(left)}; B: {_shown(right)}): their "
                "numbers do not measure the same thing; compare runs scored alike"
            )


def _shown(value: Any) -> str:
    return ", ".join(sorted(value)) or "none" if isinstance(value, set) else str(value)


def _narratives(frame: pd.DataFrame) -> pd.Series:
    """Each instance's narrative (``data.narrative``)."""
    return sample_narratives(frame).groupby(frame["instance"]).first()


def _quantity(a: Side, b: Side, column: str, seed: int, resamples: int) -> dict[str, Any] | None:
    """One row of the comparison, None when a side has no such score."""
    if column not in a.frame or column not in b.frame:
        return None
    left = a.frame.dropna(subset=[column]).groupby("instance")[column].mean()
    right = b.frame.dropna(subset=[column]).groupby("instance")[column].mean()
    shared = left.index.intersection(right.index)
    clusters = _narratives(a.frame).reindex(shared)
    test: PairedTest | None = paired_test(
        (left[shared] - right[shared]).to_numpy(), list(clusters), seed=seed, resamples=resamples
    )
    if test is None:
        return None
    means = {"a": float(left[shared].mean()), "b": float(right[shared].mean())}
    return {"quantity": column, **means, **test.as_dict()}


def compare_runs(
    a_paths: list[str],
    b_paths: list[str],
    seed: int = SEED,
    resamples: int = RESAMPLES,
    pair_on: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The paired comparison of run A with run B (see the module's docstring), as a JSON-ready dict.
    Samples pair by id, or by the metadata fields ``pair_on`` (imported generations whose ids are
    per response: ``problem_id``, ``template_id``, ``temperature``)."""
    a, b = load_side("A", a_paths, pair_on), load_side("B", b_paths, pair_on)
    comparability(a, b)
    rows = [row for column in QUANTITIES if (row := _quantity(a, b, column, seed, resamples))]
    shared = set(a.frame["instance"]) & set(b.frame["instance"])
    return {
        "a": {"label": a.label, "log": a.header.location, "instances": int(a.frame["instance"].nunique())},
        "b": {"label": b.label, "log": b.header.location, "instances": int(b.frame["instance"].nunique())},
        "paired_on": list(pair_on) or ["sample id"],
        "shared_instances": len(shared),
        "shared_narratives": int(_narratives(a.frame).reindex(sorted(shared)).nunique()),
        "confidence": CONFIDENCE,
        "power": POWER,
        "seed": seed,
        "resamples": resamples,
        "rows": [{k: none_if_nan(v) if isinstance(v, float) else v for k, v in row.items()} for row in rows],
    }


def _number(value: float | None, digits: int = 4) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    """The comparison as a Markdown page: who, how many shared instances, one row per quantity."""
    a, b = result["a"], result["b"]
    lines = [
        "# A vs B, paired on the instances both scored",
        "",
        f"- A: {a['label']} ({a['instances']} instances; {a['log']})",
        f"- B: {b['label']} ({b['instances']} instances; {b['log']})",
        f"- shared: {result['shared_instances']} instances of {result['shared_narratives']} narratives "
        f"(paired on {', '.join(result['paired_on'])})",
        f"- difference A - B; {result['confidence']:.0%} interval: paired bootstrap over narratives; p: "
        f"two-sided sign flips of whole narratives; MDE: smallest difference detectable at "
        f"{result['power']:.0%} power (seed {result['seed']}, {result['resamples']} resamples)",
        "",
        "| quantity | A | B | A - B | 95% interval | p | MDE | instances | narratives |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['quantity']} | {_number(row['a'])} | {_number(row['b'])} | {_number(row['difference'])} "
            f"| [{_number(row['low'])}, {_number(row['high'])}] | {_number(row['p_value'], 3)} "
            f"| {_number(row['mde'])} | {row['n']} | {row['clusters']} |"
        )
    return "\n".join(lines) + "\n"
