"""The leaderboard's intervals and order, from ``analysis.stats`` (clustered by source narrative).

An entry's headline interval is the mean over its samples with the clustered t interval, each
sample in the narrative its id names (``data.narrative``; an id of another form is a narrative of
its own). Two entries of one group are ordered by a paired test on the instances both scored
(each instance's mean over its epochs, the difference per instance, clustered by narrative): an
entry's rank is 1 + the entries significantly above it (p < 1 - CONFIDENCE), and it is "tied
with #k" for every entry (by position in the group's order) it does not differ from. Paired
tests see differences that two overlapping unpaired intervals hide. The tests are not
corrected for multiplicity: with many entries, some "ranked above" at 5% can be chance.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from ...data.narrative import narrative_of_id, own_cluster
from ..stats import CONFIDENCE, SEED, clustered_interval, paired_test
from .protocol import RANKED_TRACKS

#: The row field holding an entry's per-instance values until the board is ranked (not written).
INSTANCES = "_instances"


def narrative(sample_id: Any) -> str:
    """The narrative a submission's sample id names, else the sample's own cluster."""
    return narrative_of_id(sample_id) or own_cluster(sample_id)


def instance_values(samples: dict[str, list[list]], column: int) -> dict[tuple[str, str], list[float]]:
    """(setting, sample id) -> the values of ``column`` of its epochs (missing ones left out)."""
    values: dict[tuple[str, str], list[float]] = {}
    for setting, rows in samples.items():
        for row in rows:
            if row[column] is not None:
                values.setdefault((setting, str(row[0])), []).append(float(row[column]))
    return values


def interval(values: dict[tuple[str, str], list[float]]) -> tuple[float, float, float] | None:
    """(mean, low, high): the mean over every sample, with its interval clustered by narrative."""
    pooled = [(value, narrative(key[1])) for key, epochs in values.items() for value in epochs]
    found = clustered_interval([v for v, _ in pooled], [c for _, c in pooled])
    return (found.mean, found.low, found.high) if found else None


def compare_entries(a: dict[tuple[str, str], list[float]], b: dict[tuple[str, str], list[float]]):
    """The paired test of A - B on the instances both scored (None when they share none)."""
    shared = sorted(set(a) & set(b))
    differences = [sum(a[k]) / len(a[k]) - sum(b[k]) / len(b[k]) for k in shared]
    return paired_test(differences, [narrative(k[1]) for k in shared], seed=SEED)


def _order(members: list[dict[str, Any]], key: str) -> None:
    """Rank and ties within one group, by paired tests on each pair's shared instances."""
    members.sort(key=lambda row: -(row[key][0] if row[key] else float("-inf")))
    above = {id(row): 0 for row in members}
    for row in members:
        row["tied_with"] = []
    for (i, first), (j, second) in combinations(enumerate(members, start=1), 2):
        test = compare_entries(first[INSTANCES][key], second[INSTANCES][key])
        if test is not None and test.significant(1 - CONFIDENCE):
            above[id(second if test.difference > 0 else first)] += 1
        else:
            first["tied_with"].append(j)
            second["tied_with"].append(i)
    for position, row in enumerate(members, start=1):
        row["position"], row["rank"] = position, 1 + above[id(row)]


def rank(rows: list[dict[str, Any]]) -> None:
    """Within each group of comparable entries (ranked tracks only): QAvg when every entry has it,
    else AtAvg; rank, position and ties from paired tests (see the module's docstring)."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        if not row["baseline"] and row["track"] in RANKED_TRACKS and not row.get("unranked"):
            groups.setdefault(row["group"], []).append(row)
    labels = {group: index for index, group in enumerate(sorted(groups), start=1)}
    for group, members in groups.items():
        key = "qavg" if all(m["qavg"] for m in members) else "atavg"
        for row in members:
            row["ranked_on"] = key
            row["group_label"] = f"G{labels[group]}" if len(groups) > 1 else ""
        _order(members, key)


def rank_label(row: dict[str, Any]) -> str:
    """The rank cell: ``2 G1 (tied with #1, #3)``."""
    if "rank" not in row:
        return ""
    group = f" {row['group_label']}" if row.get("group_label") else ""
    tied = f" (tied with {', '.join(f'#{p}' for p in row['tied_with'])})" if row.get("tied_with") else ""
    return f"{row['rank']}{group}{tied}"
