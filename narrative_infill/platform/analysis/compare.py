"""``narrative-infill compare A B``: is run A's score really different from run B's?

Each side is one run (a log, or a folder holding one run's logs: ``report``'s loading picks the
run's latest successful log). Only the instances both sides scored are compared, and their count is
printed. Per quantity (AtAvg, QAvg, each metric and judge dimension): each side's mean over the
shared instances (an instance's epochs averaged first), the mean difference A - B with its
clustered t interval and two-sided p-value (one inference, clustered by source narrative, joined
where one instance's samples name several: the interval excludes 0 exactly when p < 0.05), and the
smallest difference these instances detect at 80% power (formulas in ``analysis.stats``). Two runs
whose numbers differ in meaning are refused, naming the field: metric signatures, judges (where
a judge's quantity is compared), dataset revision, task version; so are two runs sharing fewer than
two narratives, naming the ``--pair-on`` fields that split them. Two settings of one model (or two
models in one setting) are comparable. What weakens the comparison without voiding it is said:
fewer than ``FEW_NARRATIVES`` narratives, a baseline side, unequal epochs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...errors import NarrativeInfillError
from ...number_rules import none_if_nan
from ...paper_protocol import DIMENSIONS
from ...scorers.metrics.pairs import ATAVG, METRIC_NAMES
from ...task_options import comparability as version_comparability
from .report.baselines import is_baseline
from .report.load import load_samples, read_log
from .report.run_labels import sample_narratives
from .stats import CONFIDENCE, FEW_NARRATIVES, POWER, PairedTest, p_text, paired_test

#: What compare reports, the headline keys first.
QUANTITIES = (ATAVG, "qavg", *METRIC_NAMES, *DIMENSIONS)
#: The judge's quantities: comparable only between runs judged alike.
JUDGED = ("qavg", *DIMENSIONS)
#: ``--pair-on`` fields that name the problem itself: runs sharing none of their values scored
#: different instances, and are never told to pair without them.
INSTANCE_FIELDS = ("problem_id", "dataset", "ref_id", "n", "unit_idx")


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


def comparability(a: Side, b: Side, quantities: tuple[str, ...] = QUANTITIES) -> None:
    """Refuse runs that differ in what makes ``quantities`` comparable (judges: the judge's)."""
    judged = [q for q in quantities if q in JUDGED]
    fields = {
        "metric signatures": (_values(a.frame, "metrics_signature"), _values(b.frame, "metrics_signature")),
        **(
            {"judges": (_values(a.frame, "judge_models"), _values(b.frame, "judge_models"))} if judged else {}
        ),
        "dataset revision": (_dataset(a.header), _dataset(b.header)),
        # 3 (before the N-X form) and 3-A score alike
        "task version": tuple(version_comparability(s.header.eval.task_version) for s in (a, b)),
    }
    for field, (left, right) in fields.items():
        if left != right:
            raise NotComparableError(
                f"A and B differ in their {field} (A: {_shown(left)}; B: {_shown(right)}): their "
                "numbers do not measure the same thing; compare runs scored alike"
                + (
                    f" ({', '.join(judged)} are the judge's; --metrics atavg leaves them out)"
                    * (field == "judges")
                )
            )


def _shown(value: Any) -> str:
    return ", ".join(sorted(value)) or "none" if isinstance(value, set) else str(value)


def _few(values: set[str], most: int = 5) -> str:
    """A side's values of a field, or their count when there are many."""
    return _shown(values) if len(values) <= most else f"{len(values)} values"


def shared_clusters(a: Side, b: Side, shared: list[str]) -> pd.Series:
    """Each shared instance's cluster: its narrative (``data.narrative``), with narratives joined
    wherever one instance's samples, on either side, name more than one (``--pair-on`` fields that
    pool several stories, or two logs naming a story differently), so correlated samples share a
    cluster and both orders of A and B give the same clusters."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    links = pd.concat(
        pd.DataFrame({"instance": side.frame["instance"], "narrative": sample_narratives(side.frame)})
        for side in (a, b)
    )
    links = links[links["instance"].isin(shared)]
    instances, instance_index = pd.factorize(links["instance"])
    narratives, _ = pd.factorize(links["narrative"])
    nodes = len(instance_index) + int(narratives.max(initial=-1)) + 1
    edges = coo_matrix(
        (np.ones(len(links)), (instances, narratives + len(instance_index))), shape=(nodes, nodes)
    )
    _, component = connected_components(edges, directed=False)
    return pd.Series(component[: len(instance_index)], index=instance_index).reindex(shared)


def shared_or_refused(a: Side, b: Side, pair_on: tuple[str, ...]) -> pd.Series:
    """Each instance both sides scored -> its cluster (``shared_clusters``); an error when they
    share fewer than two clusters (no degree of freedom to test on), naming the ``pair_on`` fields
    whose values the sides never share."""
    shared = sorted(set(a.frame["instance"]) & set(b.frame["instance"]))
    _same_golds(a, b, shared, pair_on)
    clusters = shared_clusters(a, b, shared)
    narratives = clusters.nunique()
    if narratives >= 2:
        return clusters
    reason = _split_by(a, b, pair_on) or f"paired on {', '.join(pair_on) or 'sample id'}"
    raise NotComparableError(
        f"A and B share {len(shared)} instances of {narratives} narratives, too few to compare "
        f"(at least 2 narratives): {reason}"
    )


def _same_golds(a: Side, b: Side, shared: list[str], pair_on: tuple[str, ...]) -> None:
    """Refuse instances paired across different golds: ids made of a file name and row (imported
    rows without an id) name other instances in another file of that name."""
    golds = [_golds_by_instance(side.frame) for side in (a, b)]
    apart = [instance for instance in shared if golds[0].get(instance) != golds[1].get(instance)]
    if apart:
        raise NotComparableError(
            f"A and B pair {len(apart)} of {len(shared)} instances on different golds (e.g. "
            f"{apart[0]!r}), paired on {', '.join(pair_on) or 'sample id'}: these runs name their "
            "instances differently; pair on fields that identify one instance (--pair-on "
            "dataset,ref_id,n,unit_idx, or problem_id,template_id for imported generations)"
        )


def _golds_by_instance(frame: pd.DataFrame) -> dict[str, set[str]]:
    """Each instance's golds, grouped in Python: pandas 2 cannot hold a set in an Arrow-backed
    string column, which ``groupby(...).agg(set)`` tries to do."""
    golds: dict[str, set[str]] = {}
    for instance, target in zip(frame["instance"], frame["target"]):
        golds.setdefault(instance, set()).add(target)
    return golds


def _split_by(a: Side, b: Side, pair_on: tuple[str, ...]) -> str:
    """The ``pair_on`` fields no value of which both sides have, with each side's values ("" when
    every field has a shared value)."""
    apart = {f: (_values(a.frame, f"metadata_{f}"), _values(b.frame, f"metadata_{f}")) for f in pair_on}
    apart = {f: sides for f, sides in apart.items() if not sides[0] & sides[1]}
    if not apart:
        return ""
    shown = "; ".join(f"{f}: A {_few(left)}, B {_few(right)}" for f, (left, right) in apart.items())
    naming = [f for f in apart if f in INSTANCE_FIELDS]
    if naming:  # leaving these out would pair answers to different problems
        return (
            f"the sides share no value of {', '.join(apart)} ({shown}): the runs scored different "
            f"instances ({', '.join(naming)} names the problem); compare runs of the same problems"
        )
    return (
        f"the sides share no value of {', '.join(apart)} ({shown}); leave "
        f"{'it' if len(apart) == 1 else 'them'} out of --pair-on if the runs differ there on purpose"
    )


def caveats(a: Side, b: Side, narratives: int) -> list[str]:
    """What weakens the comparison without voiding it, said beside the table."""
    said = []
    if narratives < FEW_NARRATIVES:
        said.append(
            f"only {narratives} shared narratives (fewer than {FEW_NARRATIVES}): the interval and p "
            "hold their level only roughly, and the test finds only large differences (see MDE)"
        )
    for side in (a, b):
        if is_baseline(side.header.eval.model):
            said.append(f"{side.name} is a null baseline ({side.header.eval.model}), not a model")
    epochs = [int(side.header.eval.config.epochs or 1) for side in (a, b)]
    if epochs[0] != epochs[1]:
        said.append(
            f"A ran {epochs[0]} epoch(s), B {epochs[1]}: each instance's epochs are averaged, so the "
            "side with more epochs has the less noisy per-instance values"
        )
    return said


def _quantity(a: Side, b: Side, column: str, clusters: pd.Series) -> dict[str, Any] | None:
    """One row of the comparison, None when the instances both scored span fewer than two clusters."""
    left = a.frame.dropna(subset=[column]).groupby("instance")[column].mean()
    right = b.frame.dropna(subset=[column]).groupby("instance")[column].mean()
    shared = left.index.intersection(right.index)
    differences = (left[shared] - right[shared]).to_numpy()
    test: PairedTest | None = paired_test(differences, list(clusters.reindex(shared)))
    if test is None:
        return None
    means = {"a": float(left[shared].mean()), "b": float(right[shared].mean())}
    return {"quantity": column, **means, **test.as_dict()}


def compare_runs(
    a_paths: list[str],
    b_paths: list[str],
    pair_on: tuple[str, ...] = (),
    quantities: tuple[str, ...] = QUANTITIES,
) -> dict[str, Any]:
    """The paired comparison of run A with run B (see the module's docstring), as a JSON-ready dict.
    Samples pair by id, or by the metadata fields ``pair_on`` (imported generations whose ids are
    per response: ``problem_id``, ``template_id``, ``temperature``), of ``quantities`` only."""
    a, b = load_side("A", a_paths, pair_on), load_side("B", b_paths, pair_on)
    comparability(a, b, quantities)
    clusters = shared_or_refused(a, b, pair_on)
    narratives = int(clusters.nunique())
    both = [column for column in quantities if column in a.frame and column in b.frame]
    tested = {column: _quantity(a, b, column, clusters) for column in both}
    rows = [row for row in tested.values() if row]
    untested = [column for column, row in tested.items() if row is None]
    said = caveats(a, b, narratives)
    if untested:
        said.append(
            f"not compared: {', '.join(untested)} (scored on both sides in instances of fewer than "
            "two narratives: no test)"
        )
    return {
        "a": {"label": a.label, "log": a.header.location, "instances": int(a.frame["instance"].nunique())},
        "b": {"label": b.label, "log": b.header.location, "instances": int(b.frame["instance"].nunique())},
        "paired_on": list(pair_on) or ["sample id"],
        "shared_instances": len(clusters),
        "shared_narratives": narratives,
        "confidence": CONFIDENCE,
        "power": POWER,
        "caveats": said,
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
        f"- difference A - B with its {result['confidence']:.0%} t interval and two-sided p, one "
        "inference: the clustered paired t test over narratives (narratives - 1 degrees of freedom); "
        f"MDE: smallest difference detectable at {result['power']:.0%} power",
        *(f"- **caution**: {said}" for said in result["caveats"]),
        "",
        f"| quantity | A | B | A - B | {result['confidence']:.0%} t interval | p | MDE | instances "
        "| narratives |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['quantity']} | {_number(row['a'])} | {_number(row['b'])} | {_number(row['difference'])} "
            f"| [{_number(row['low'])}, {_number(row['high'])}] | {p_text(row['p_value'])} "
            f"| {_number(row['mde'])} | {row['n']} | {row['clusters']} |"
        )
    return "\n".join(lines) + "\n"
