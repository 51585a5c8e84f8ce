"""Naive vs clustered error bars, and paired vs unpaired verdicts, on imported, scored generations.

Reads a folder of logs written by ``narrative-infill import ... --score metrics`` (one per model and
setting) and prints, for AtAvg:
1. per log, the naive stderr (every sample independent) beside the logged one (clustered by
   narrative), and the ratio's range over the logs;
2. per setting, for every pair of models, the paired test of ``analysis.stats`` on the instances both
   scored (paired on ``--pair-on`` metadata fields, clustered by narrative): how many pairs are tied
   (unadjusted p >= 0.05), and, for contrast, how many pairs' clustered intervals overlap;
3. per setting, the board's ranks (``ranking.rank`` on one entry per model, its instances named
   ``<narrative>-n<n>-i<k>`` so that the board clusters them by narrative as it does a benchmark id),
   on the instances every model scored (the board ranks together only entries of the same instances,
   as a ranked track's complete runs are).
Run it with an older checkout first on ``PYTHONPATH`` to see that code's board on the same logs.
Usage: python benchmarks/imported_error_bars.py LOG_DIR [--pair-on problem_id,template_id,temperature]
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict
from itertools import combinations

import numpy as np
from inspect_ai.log import list_eval_logs, read_eval_log

from narrative_infill.platform.analysis.stats import clustered_interval, paired_test
from narrative_infill.platform.analysis.submission.protocol import RANKED_TRACKS
from narrative_infill.platform.analysis.submission.ranking import INSTANCES, rank
from narrative_infill.data.narrative import NARRATIVE


def _runs(log_dir: str, pair_on: list[str]) -> dict[str, dict[str, dict]]:
    """setting -> model -> per-instance mean AtAvg, narratives, sample values, the logged stderr."""
    runs: dict[str, dict[str, dict]] = defaultdict(dict)
    for info in list_eval_logs(log_dir):
        log = read_eval_log(info.name)
        values: dict[str, list[float]] = defaultdict(list)
        narratives = {}
        for sample in log.samples or []:
            instance = "|".join(str(sample.metadata[f]) for f in pair_on)
            values[instance].append(float(sample.scores["metrics"].value["atavg"]))
            narratives[instance] = sample.metadata[NARRATIVE]
        [atavg] = [s for s in log.results.scores if s.name == "atavg"]
        runs[log.eval.task.split("/")[-1]][log.eval.model.removeprefix("replay/")] = {
            "values": {k: float(np.mean(v)) for k, v in values.items()},
            "narrative": narratives,
            "samples": [v for vs in values.values() for v in vs],
            "logged": atavg.metrics["stderr"].value,
        }
    return runs


def boards(runs: dict[str, dict[str, dict]]) -> None:
    """Each setting's board, ranked by the board's own code on AtAvg."""
    for setting, models in sorted(runs.items()):
        keys = sorted(set.intersection(*(set(run["values"]) for run in models.values())))
        index = {k: i for i, k in enumerate(keys)}
        rows = []
        for model, run in models.items():
            instances = {(setting, f"{run['narrative'][k]}-n1-i{index[k]}"): [run["values"][k]] for k in keys}
            mean = float(np.mean([run["values"][k] for k in keys]))
            rows.append(
                {
                    "model": model,
                    "baseline": False,
                    "track": RANKED_TRACKS[0],  # a ranked track: the board ranks only these
                    "group": setting,
                    "qavg": None,
                    "atavg": (mean, mean, mean),
                    INSTANCES: {"atavg": instances},
                }
            )
        rank(rows)
        ranked = sorted(rows, key=lambda r: r["position"])
        print(
            f"{setting} board ({len(rows)} models, {len(keys)} instances all scored): "
            + ", ".join(f"{r['model']} {r['rank']}" for r in ranked)
        )
        print(f"{setting} ranks in order: {[r['rank'] for r in ranked]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log_dir")
    parser.add_argument("--pair-on", default="problem_id,template_id,temperature")
    args = parser.parse_args()
    runs = _runs(args.log_dir, args.pair_on.split(","))
    ratios = []
    for setting, models in sorted(runs.items()):
        for model, run in sorted(models.items()):
            samples = run["samples"]
            naive = float(np.std(samples, ddof=1) / math.sqrt(len(samples)))
            ratios.append(run["logged"] / naive)
            print(f"{setting} {model}: n={len(samples)} naive {naive:.5f} clustered {run['logged']:.5f}")
    print(
        f"clustered / naive over {len(ratios)} logs: {min(ratios):.2f} .. {max(ratios):.2f}, "
        f"median {float(np.median(ratios)):.2f}"
    )
    pairs = tied = overlapping = 0
    for models in runs.values():
        for (_, a), (_, b) in combinations(sorted(models.items()), 2):
            shared = sorted(set(a["values"]) & set(b["values"]))
            test = paired_test(
                [a["values"][k] - b["values"][k] for k in shared], [a["narrative"][k] for k in shared]
            )
            ia = clustered_interval(list(a["values"].values()), list(a["narrative"].values()))
            ib = clustered_interval(list(b["values"].values()), list(b["narrative"].values()))
            pairs += 1
            tied += test is None or not test.significant()
            overlapping += ia.low <= ib.high and ib.low <= ia.high
    print(
        f"{pairs} model pairs within a setting: {tied} tied by the paired test (p >= 0.05), "
        f"{overlapping} with overlapping clustered intervals"
    )
    boards(runs)


if __name__ == "__main__":
    main()
