"""The error rates of the sampled verdicts (``submission.sampling``), measured by simulation.

Fluency: a full-track entry (nine settings of 9,142 answers) whose true share of not-fluent answers
is p, spread evenly over its settings or packed into as few as hold it; each trial draws the reads
``sampling.quotas`` gives each setting (a uniform draw without replacement: its count of not-fluent
answers is hypergeometric, drawn here by numpy for speed, and by the package's own ``sampling.drawn``
in ``--check`` trials to show the two agree), weighs the settings' shares as the board does and
flags the entry over ``COPIED_SHARE_LIMIT``. Printed: P(flag) at each p, with the trials run.
Metrics: the smallest share of edited answers that ``verify``'s draw of ``RESCORED`` meets with 99%
probability (exact, hypergeometric; and simulated), and the most a mean can move under it.
Usage: python benchmarks/sampled_verdicts.py [--trials 1000000] [--check 2000] [--seed 60]
"""

from __future__ import annotations

import argparse

import numpy as np

SETTING_SIZE, SETTINGS = 9142, 9


def true_counts(share: float, packed: bool) -> list[int]:
    """Not-fluent answers per setting for an entry whose true share is ``share``."""
    total = round(share * SETTING_SIZE * SETTINGS)
    if not packed:
        return [total // SETTINGS + (i < total % SETTINGS) for i in range(SETTINGS)]
    return [max(0, min(SETTING_SIZE, total - i * SETTING_SIZE)) for i in range(SETTINGS)]


def flag_rate(share: float, packed: bool, trials: int, rng: np.random.Generator) -> float:
    from narrative_infill.copy_guards import COPIED_SHARE_LIMIT
    from narrative_infill.platform.analysis.submission.sampling import FLUENCY_READS, quotas

    reads = quotas({str(i): SETTING_SIZE for i in range(SETTINGS)}, FLUENCY_READS)
    claimed = np.zeros(trials)
    for i, bad in enumerate(true_counts(share, packed)):
        k = reads[str(i)]
        hits = rng.hypergeometric(bad, SETTING_SIZE - bad, k, size=trials) if k < SETTING_SIZE else bad
        claimed += hits / k * SETTING_SIZE  # the board weighs each setting's share by its n
    return float(np.mean(claimed / (SETTING_SIZE * SETTINGS) > COPIED_SHARE_LIMIT))


def package_flag_rate(share: float, trials: int) -> float:
    """The same, each trial drawn by ``sampling.drawn`` from a fresh digest (slow: ``--check``)."""
    import hashlib

    from narrative_infill.copy_guards import COPIED_SHARE_LIMIT
    from narrative_infill.platform.analysis.submission.sampling import FLUENCY_READS, drawn, quotas

    reads = quotas({str(i): SETTING_SIZE for i in range(SETTINGS)}, FLUENCY_READS)
    counts, flagged = true_counts(share, False), 0
    for trial in range(trials):
        digest = hashlib.sha256(str(trial).encode()).hexdigest()
        weighted = sum(
            sum(p < bad for p in drawn(SETTING_SIZE, reads[str(i)], f"{digest}:{i}")) / reads[str(i)]
            for i, bad in enumerate(counts)
        )
        flagged += weighted / SETTINGS > COPIED_SHARE_LIMIT
    return flagged / trials


def metrics_power(trials: int, rng: np.random.Generator) -> None:
    from scipy.stats import hypergeom

    from narrative_infill.platform.analysis.submission.sampling import RESCORED

    population = SETTING_SIZE * SETTINGS
    edited = next(m for m in range(1, population) if hypergeom.pmf(0, population, m, RESCORED) <= 0.01)
    simulated = float(np.mean(rng.hypergeometric(edited, population - edited, RESCORED, size=trials) > 0))
    print(
        f"metrics: {RESCORED} of {population} answers re-scored: {edited} edited answers "
        f"({edited / population:.3%}) are met with probability "
        f"{1 - hypergeom.pmf(0, population, edited, RESCORED):.4f} "
        f"(simulated {simulated:.4f}, {trials} trials); "
        f"fewer move a mean of scores in [0, 1] by at most {edited / population:.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--check", type=int, default=2000, help="trials drawn by the package's own draw")
    parser.add_argument("--seed", type=int, default=60)
    args = parser.parse_args()
    from narrative_infill.copy_guards import COPIED_SHARE_LIMIT
    from narrative_infill.platform.analysis.submission.sampling import FLUENCY_READS

    rng = np.random.default_rng(args.seed)
    print(f"fluency: {FLUENCY_READS} reads of {SETTING_SIZE * SETTINGS} answers, {args.trials} trials each")
    for share in (0.15, 0.20, 0.22, 0.25, 0.28, 0.30, 0.35):
        rates = [flag_rate(share, packed, args.trials, rng) for packed in (False, True)]
        over = share > COPIED_SHARE_LIMIT  # the error is a pass over the limit, a flag under it
        named = [
            "< 1e-6 (none)" if r == 0 else f"{r:.2e}" for r in ([1 - r for r in rates] if over else rates)
        ]
        print(
            f"true share {share:.0%}: P({'pass' if over else 'flag'}) {named[0]} spread evenly, "
            f"{named[1]} packed into few settings"
        )
    if args.check:
        for share in (0.22, 0.28):
            print(
                f"check by the package's draw, true share {share:.0%}: P(flag) "
                f"{package_flag_rate(share, args.check):.3f} ({args.check} trials), "
                f"numpy {flag_rate(share, False, args.trials, rng):.3f}"
            )
    metrics_power(args.trials, rng)


if __name__ == "__main__":
    main()
