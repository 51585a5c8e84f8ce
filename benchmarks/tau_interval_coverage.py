"""How often the Kendall tau bounds of ``report --compare-paper`` cover the true tau (simulation).

Each draw: ``--models`` models whose true means are the paper's numbers (a made-up spread,
``--spread`` between neighbours) with two neighbour pairs swapped, so the true tau between the
true means and the paper's is below 1; ``--narratives`` stories of ``--per-narrative`` instances,
each instance's value a model's true mean plus a story effect shared by all models, a story effect
of the model's own (a model that misreads a story misfills all its blanks) and noise. The module's
own ``rank_agreement`` gives tau and its bounds; printed per gap and narrative count: the share of draws
whose bounds cover the true tau, their mean width, and the mean estimate against the true tau.
Usage: python benchmarks/tau_interval_coverage.py [--draws 200] [--narratives 10 30]
    [--spread 0.05 0.01 0.005]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.stats import kendalltau

from narrative_infill.platform.analysis.report.paper_compare import rank_agreement


def coverage(
    rng: np.random.Generator, draws: int, models: int, spread: float, narratives: int, per_narrative: int
) -> tuple[float, float, float, float]:
    """(share of draws covering the true tau, mean width, mean estimate, true tau)."""
    paper = np.arange(models) * spread
    true = paper.copy()
    true[[1, 2]], true[[5, 6]] = true[[2, 1]], true[[6, 5]]  # two neighbour swaps: tau below 1
    true_tau = kendalltau(true, paper).statistic
    clusters = list(np.repeat(np.arange(narratives), per_narrative))
    covered, widths, estimates = 0, [], []
    for _ in range(draws):
        shared = rng.normal(0.0, 0.1, (narratives, 1))
        own = rng.normal(0.0, 0.05, (narratives, models))
        matrix = true + np.repeat(shared + own, per_narrative, axis=0)
        matrix += rng.normal(0.0, 0.1, matrix.shape)
        found = rank_agreement(matrix, paper, clusters)
        covered += found["tau_low"] - 1e-12 <= true_tau <= found["tau_high"] + 1e-12
        widths.append(found["tau_high"] - found["tau_low"])
        estimates.append(found["kendall_tau"])
    return covered / draws, float(np.mean(widths)), float(np.mean(estimates)), float(true_tau)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--spread", type=float, nargs="+", default=[0.05, 0.01, 0.005])
    parser.add_argument("--narratives", type=int, nargs="+", default=[10, 30])
    parser.add_argument("--per-narrative", type=int, default=4)
    parser.add_argument("--seed", type=int, default=47)
    args = parser.parse_args()
    for spread in args.spread:
        for narratives in args.narratives:
            rng = np.random.default_rng(args.seed)
            share, width, estimate, true_tau = coverage(
                rng, args.draws, args.models, spread, narratives, args.per_narrative
            )
            print(
                f"{args.models} models (true tau {true_tau:.2f}, gap {spread}), {narratives} narratives x "
                f"{args.per_narrative}: tau_low..tau_high covers the true tau in {share:.1%} of "
                f"{args.draws} draws; "
                f"mean width {width:.2f}; mean estimate {estimate:.2f}"
            )


if __name__ == "__main__":
    main()
