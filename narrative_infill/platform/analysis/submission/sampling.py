"""Which answers a sampled verdict reads, and what the reading says about the whole entry.

Two verdicts decide on a share or a mean, and read a sample large enough for their stated error
rates (docs/leaderboard.md, measured by benchmarks/sampled_verdicts.py); every cheaper check still
covers every answer. An entry no larger than the sample is read whole (the demo track, tests).

* The fluency check (``rates.not_fluent``, over ``COPIED_SHARE_LIMIT`` the entry is not ranked)
  reads ``FLUENCY_READS`` answers of the entry, each setting its share, drawn from the entry's
  samples digest (every answer and score, ``build.samples_digest``): ``verify`` draws the same
  answers, so the claim is recomputed exactly; changing any answer draws others.
* ``verify`` (and ``submit``'s recheck) re-score the metrics of ``RESCORED`` answered samples drawn
  from the submission's own SHA-256, which covers every answer, score and claim: the draw is fixed
  only once the file is, and a later edit of the file or its logs draws anew (or fails the hashes).
A submitter may search for a favourable draw by re-making the file; the sizes are chosen so the
stated rates still hold against a million such drafts (docs/leaderboard.md).
"""

from __future__ import annotations

import math
import random
from typing import Any

#: Answers of an entry the fluency check reads, each setting its share (rounded up).
FLUENCY_READS = 800
#: Answered samples of an entry whose metrics ``verify`` re-scores by default.
RESCORED = 2000
#: The interval's coverage printed beside a sampled share.
COVERAGE = 0.95


def drawn(population: int, quota: int, seed: str) -> list[int]:
    """The positions a verdict reads: all of them when ``quota`` covers the population, else
    ``quota`` of them drawn from ``seed`` (``random.Random`` of a string: the same everywhere)."""
    if quota >= population:
        return list(range(population))
    return sorted(random.Random(seed).sample(range(population), quota))


def sampled_not_fluent(answers: list[str], reads: int | None, seed: str) -> tuple[float | None, int]:
    """(the share of ``reads`` of ``answers`` drawn from ``seed`` (all: None) that the fluency check
    (``analysis.fluency``) reads as not fluent, how many it read); (None, 0) where it cannot run
    here (its model is an extra), which leaves a ranked entry unranked."""
    from ..fluency import fluency_or_none, is_not_fluent

    read = fluency_or_none()
    chosen = drawn(len(answers), len(answers) if reads is None else reads, seed)
    if read is None or not chosen:
        return None, 0
    return sum(bool(is_not_fluent(read(answers[i]))) for i in chosen) / len(chosen), len(chosen)


def quotas(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Each part's share of ``total`` reads, proportional to its size and rounded up (a stratified
    draw: the entry's share is the size-weighted mean of the parts', as the board weighs them)."""
    whole = sum(sizes.values())
    return {name: min(size, math.ceil(total * size / whole)) for name, size in sizes.items()} if whole else {}


def share_interval(hits: int, read: int, population: int) -> tuple[float, float]:
    """The ``COVERAGE`` interval of a share seen as ``hits`` of ``read`` answers of ``population``:
    exact when every answer was read, else Clopper-Pearson (conservative for a draw without
    replacement)."""
    from scipy.stats import binomtest

    if read >= population:
        return hits / read, hits / read
    interval = binomtest(hits, read).proportion_ci(COVERAGE)
    return float(interval.low), float(interval.high)


def caught_share(reads: int, population: int, power: float = 0.99) -> float:
    """The smallest share of edited answers a draw of ``reads`` of ``population`` meets with
    probability ``power`` (1 - P(no edited answer drawn), drawn with replacement: conservative)."""
    if reads >= population:
        return 1 / population if population else 0.0
    return 1 - (1 - power) ** (1 / reads)


def fluency_line(claims: dict[str, dict]) -> tuple[str, bool] | None:
    """What the fluency check read of the entry (``claims`` by setting): how many answers, drawn or
    all, the share not fluent (weighted by setting as the board weighs it) and its interval, and
    whether it was a draw; None where the check did not run."""
    parts = [(c["rates"].get("not_fluent"), c.get("fluency_read", c["n"]), c["n"]) for c in claims.values()]
    if not parts or any(share is None for share, _, _ in parts):
        return None
    read, population = sum(r for _, r, _ in parts), sum(n for *_, n in parts)
    share = sum(s * n for s, _, n in parts) / population if population else 0.0
    low, high = share_interval(round(sum(s * r for s, r, _ in parts)), read, population) if read else (0, 0)
    how = "sampled, drawn from the samples digest" if read < population else "every answer"
    line = (
        f"fluency check read {read} of {population} answers ({how}): {share:.1%} not fluent, "
        f"{COVERAGE:.0%} interval [{low:.1%}, {high:.1%}]"
    )
    return line, read < population


def fluency_as_claimed(claimed: dict, actual: dict, where: str, result: Any) -> dict:
    """``actual`` (the claims recomputed here) with the not-fluent share taken as claimed where only
    one of the two machines could run the fluency check (it is an extra), said in ``result``: an
    honest claim is not false because a machine lacks the packaged model. Unchecked here, the entry
    is not verified; claimed unknown, the board does not rank it (``analysis.floor``)."""
    from ..fluency import fluency_or_none

    stated, recomputed = claimed["rates"].get("not_fluent"), actual["rates"]["not_fluent"]
    if recomputed is None and stated is not None and fluency_or_none() is None:
        result.unchecked.append(
            f"{where}.rates.not_fluent: the fluency check cannot run here (pip install "
            f"'narrative-infill[local]'), the claimed {stated!r} is not recomputed"
        )
    elif stated is None and recomputed is not None:
        result.warnings.append(
            f"{where}.rates.not_fluent: claimed unknown (submitted where the fluency check could not "
            f"run), {recomputed:.1%} here: the entry is not ranked until submitted where it runs"
        )
    else:
        return actual
    read = {"fluency_read": claimed["fluency_read"]} if "fluency_read" in claimed else {}
    kept = {k: v for k, v in actual.items() if k != "fluency_read"}
    return kept | read | {"rates": actual["rates"] | {"not_fluent": stated}}
