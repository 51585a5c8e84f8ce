"""The leaderboard's intervals and order, from ``analysis.stats`` (clustered by source narrative).

An entry's headline interval is the mean over its samples with the clustered t interval, each
sample in the narrative its id names (``data.narrative``; an id of another form is a narrative of
its own, with a warning). Within a group, every pair of entries is compared by the clustered
paired t test on the instances both scored (each instance's mean over its epochs, the difference
per instance), and the group's p-values are Holm-adjusted together. An entry's cell shows its
position by mean, the count of entries significantly above it after the adjustment (``rank`` is 1 +
that count), and the entries (by position) it is not told apart from, with the largest of those
pairs' minimum detectable differences at the family's Bonferroni level (Holm's strictest step, so
at least what Holm needs): a tie says how large a difference could hide, not that the two are equal.

Why Holm over analytic t p-values rather than a bootstrap of the whole ranking: the board's
claim is a set of pairwise orders, and Holm keeps the chance that *any* of them is spurious at
1 - CONFIDENCE whatever the pairs' dependence, with no resampling noise, in 190 t tests for 20
entries; the clustered t test holds its level from 10 narratives up (tests/platform/test_stats.py), and
its p-values, unlike sign flips', can be small enough to survive the adjustment. Paired tests
still see differences that two overlapping unpaired intervals hide.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from itertools import combinations
from typing import Any

from ....data.narrative import is_own_cluster, narrative_of_id, own_cluster
from ....number_rules import METRIC_RANGE, clip, none_if_nan
from ..stats import CONFIDENCE, clustered_interval, holm, minimum_detectable, paired_test
from .protocol import RANKED_TRACKS

logger = logging.getLogger(__name__)

#: The row field holding an entry's per-instance values until the board is ranked (not written).
INSTANCES = "_instances"
#: What the board's intervals are, as the board page and leaderboard.md state it.
INTERVAL_NOTE = (
    f"AtAvg and QAvg: the mean with its {CONFIDENCE:.0%} t interval (narratives - 1 degrees of "
    "freedom; none from one narrative), clustered by source narrative (all instances and epochs of "
    "a story together), clipped to the score's range (AtAvg 0-1, QAvg 1-5: a bound at 0, 1, 1 or 5 "
    "was cut there); the narratives column gives their number"
)
#: The ranking rule as the board page and leaderboard.md state it.
RANK_RULE = (
    "A row ranks above another only when the clustered paired t test on the instances both scored "
    "(on QAvg when every entry of the group is judged, else AtAvg) finds them different, with the "
    "p-values of all pairs in a group Holm-adjusted together "
    f"(adjusted p < {1 - CONFIDENCE:.2f}): the chance that any order shown on a group is spurious "
    f"is at most {1 - CONFIDENCE:.0%}. The rank cell: the position by mean, how many entries are "
    "significantly above it, and the entries it is not distinguishable from with the minimum detectable "
    "difference (80% power at the group's strictest Holm level): a difference that large or larger would "
    "have been found, a smaller one may hide in a tie"
)


def narrative(sample_id: Any) -> str:
    """The narrative a submission's sample id names, else the sample's own cluster."""
    return narrative_of_id(sample_id) or own_cluster(sample_id)


def narratives(sample_ids: Iterable[Any], what: str) -> list[str]:
    """The narrative of each sample id, with a warning naming ``what`` when some name none (each
    is then a cluster of its own, and the error bars from them may be too small)."""
    keys = [narrative(sample_id) for sample_id in sample_ids]
    alone = sum(map(is_own_cluster, keys))
    if alone:
        logger.warning(
            f"{what}: {alone} of {len(keys)} sample ids name no source narrative "
            "(<domain>-<ref_id>-n<n>-i<unit>): each is its own cluster, so its error bars may be too small"
        )
    return keys


def instance_values(samples: dict[str, list[list]], column: int) -> dict[tuple[str, str], list[float]]:
    """(setting, sample id) -> the values of ``column`` of its epochs (missing ones left out)."""
    values: dict[tuple[str, str], list[float]] = {}
    for setting, rows in samples.items():
        for row in rows:
            if row[column] is not None:
                values.setdefault((setting, str(row[0])), []).append(float(row[column]))
    return values


def interval(
    values: dict[tuple[str, str], list[float]],
    what: str = "an entry",
    bounds: tuple[float, float] = METRIC_RANGE,
) -> tuple[float, float | None, float | None] | None:
    """(mean, low, high): the mean over every sample, with its interval clustered by narrative and
    clipped to the score's ``bounds`` (no bounds from one narrative)."""
    pooled = [(value, key[1]) for key, epochs in values.items() for value in epochs]
    found = clustered_interval([v for v, _ in pooled], narratives([i for _, i in pooled], what))
    if found is None:
        return None
    low, high, _ = clip(found.low, found.high, bounds)
    return found.mean, none_if_nan(low), none_if_nan(high)


def compare_entries(a: dict[tuple[str, str], list[float]], b: dict[tuple[str, str], list[float]]):
    """The paired test of A - B on the instances both scored (None when they share fewer than
    two narratives)."""
    shared = sorted(set(a) & set(b))
    differences = [sum(a[k]) / len(a[k]) - sum(b[k]) / len(b[k]) for k in shared]
    return paired_test(differences, [narrative(k[1]) for k in shared])


def _order(members: list[dict[str, Any]], key: str) -> None:
    """Rank and ties within one group: every pair's paired test, Holm-adjusted over the group."""
    members.sort(key=lambda row: -(row[key][0] if row[key] else float("-inf")))
    above = {id(row): 0 for row in members}
    for row in members:
        row["tied_with"] = []
    pairs = list(combinations(enumerate(members, start=1), 2))
    tests = [
        compare_entries(first[INSTANCES][key], second[INSTANCES][key]) for (_, first), (_, second) in pairs
    ]
    adjusted = holm([1.0 if test is None else test.p_value for test in tests])
    strictest = 1 - (1 - CONFIDENCE) / max(len(pairs), 1)  # Holm's first step: Bonferroni
    hidden: dict[int, float | None] = {}  # None: a tie with no test (fewer than two narratives)
    for ((i, first), (j, second)), test, p_value in zip(pairs, tests, adjusted):
        if test is not None and p_value < 1 - CONFIDENCE:
            above[id(second if test.difference > 0 else first)] += 1
            continue
        first["tied_with"].append(j)
        second["tied_with"].append(i)
        mde = None if test is None else minimum_detectable(test.stderr, test.clusters, confidence=strictest)
        for row in (first, second):
            known = hidden.get(id(row), 0.0)
            hidden[id(row)] = None if known is None or mde is None else max(known, mde)
    for position, row in enumerate(members, start=1):
        row["position"], row["rank"] = position, 1 + above[id(row)]
        if row["tied_with"]:
            row["tie_mde"] = hidden[id(row)]
        row["rank_label"] = rank_label(row)


def _instances_digest(row: dict[str, Any]) -> str:
    """A digest of the (setting, sample id) an entry scored: entries are ranked together only on the
    same instances, since one that pairs with nothing (its ids renamed) would be "tied" with every
    entry, and rank 1, without ever being compared."""
    keys = sorted({key for values in row[INSTANCES].values() for key in values})
    return hashlib.sha256(json.dumps(keys).encode("utf-8")).hexdigest()


def rank(rows: list[dict[str, Any]]) -> None:
    """Within each group of comparable entries (ranked tracks only, the same instances): QAvg when
    every entry has it, else AtAvg; rank, position and ties from paired tests (see the module's
    docstring)."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        if not row["baseline"] and row["track"] in RANKED_TRACKS and not row.get("unranked"):
            groups.setdefault(row["group"] + _instances_digest(row), []).append(row)
    labels = {group: index for index, group in enumerate(sorted(groups), start=1)}
    for group, members in groups.items():
        key = "qavg" if all(m["qavg"] for m in members) else "atavg"
        for row in members:
            row["ranked_on"] = key
            row["group_label"] = f"G{labels[group]}" if len(groups) > 1 else ""
        _order(members, key)


def rank_label(row: dict[str, Any]) -> str:
    """The rank cell, ``3 G1 (1 significantly above; not distinguishable from #2: MDE 0.214)``:
    the position by mean leads, so the cells read in the board's order (see the module's docstring)."""
    if "rank" not in row:
        return ""
    group = f" {row['group_label']}" if row.get("group_label") else ""
    said = f"{row['rank'] - 1} significantly above"
    if row.get("tied_with"):
        mde = "no test" if row["tie_mde"] is None else f"MDE {row['tie_mde']:.3f}"
        said += f"; not distinguishable from {', '.join(f'#{p}' for p in row['tied_with'])}: {mde}"
    return f"{row['position']}{group} ({said})"
