"""One home for the package's statistics: intervals and paired tests clustered by narrative.

``compare``, ``report``, the leaderboard and ``report --compare-paper`` all draw their error bars
here, so that a number means the same thing wherever it is printed. Every computation takes one
value per unit (a sample, or an instance's mean over epochs) and the unit's cluster, its source
narrative (``data.narrative``): the instances of one story are correlated, so intervals and tests
resample, flip or sum whole narratives, never single instances.

Formulas (n units, G clusters, cluster sums taken of the deviations from the mean):

* clustered standard error (CR1, as Inspect's ``stderr(cluster=)``):
  ``SE = sqrt(G / (G - 1) * sum_g (sum_{i in g} (x_i - mean))^2) / n``;
* interval: ``mean +- t_{(1 + level) / 2, G - 1} * SE`` (as Inspect's ``ci(cluster=)``);
* paired bootstrap: narratives drawn with replacement (each with all its instances), the mean
  difference recomputed; the percentile interval of the draws;
* paired sign-flip test: under "no difference" A and B are exchangeable within a narrative, so each
  narrative's summed difference may change sign; the two-sided p-value is the share of sign
  patterns whose mean difference is at least as far from 0 as the observed one (all 2^G patterns
  when there are at most ``RESAMPLES``, else ``RESAMPLES`` seeded draws, counting the observed one);
* minimum detectable difference at ``POWER`` (two-sided level ``1 - CONFIDENCE``):
  ``MDE = (t_{1 - alpha/2, G - 1} + t_{power, G - 1}) * SE(paired differences)``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

CONFIDENCE = 0.95
#: Bootstrap draws and sign-flip draws (when 2^G is larger).
RESAMPLES = 2000
SEED = 20260101
POWER = 0.8
#: Per-unit values: a list or a numpy array.
Values = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class Interval:
    """A mean with its clustered standard error and interval."""

    mean: float
    stderr: float
    low: float
    high: float
    n: int
    clusters: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PairedTest:
    """A paired comparison on shared units: the mean difference (A - B), its clustered bootstrap
    interval, the sign-flip p-value and the smallest difference these units detect at ``POWER``."""

    difference: float
    stderr: float
    low: float
    high: float
    p_value: float
    mde: float
    n: int
    clusters: int

    def significant(self, level: float = 1 - CONFIDENCE) -> bool:
        return self.p_value < level

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _codes(clusters: Sequence[Any]) -> np.ndarray:
    """Cluster labels as 0..G-1."""
    return np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)[1]


def _cluster_sums(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sum of the values, number of units) per cluster."""
    groups = int(codes.max()) + 1 if len(codes) else 0
    return np.bincount(codes, values, groups), np.bincount(codes, minlength=groups).astype(float)


def clustered_stderr(values: Values, clusters: Sequence[Any]) -> float:
    """The CR1 clustered standard error of the mean (0 with fewer than two clusters, as Inspect's)."""
    x = np.asarray(values, dtype=float)
    codes = _codes(clusters)
    sums, _ = _cluster_sums(x - x.mean(), codes) if len(x) else (np.array([]), None)
    groups = len(sums)
    if groups < 2:
        return 0.0
    return float(math.sqrt(groups / (groups - 1) * float((sums**2).sum())) / len(x))


def _t(quantile: float, clusters: int) -> float:
    from scipy.stats import t

    return float(t.ppf(quantile, max(clusters - 1, 1)))


def clustered_interval(
    values: Values, clusters: Sequence[Any], confidence: float = CONFIDENCE
) -> Interval | None:
    """The mean and its t interval from the clustered standard error (G - 1 degrees of freedom);
    None for no values."""
    x = np.asarray(values, dtype=float)
    if not len(x):
        return None
    groups = len(set(map(str, clusters)))
    se = clustered_stderr(x, clusters)
    half = _t((1 + confidence) / 2, groups) * se
    mean = float(x.mean())
    return Interval(mean, se, mean - half, mean + half, len(x), groups)


def cluster_draws(clusters: int, rng: np.random.Generator, resamples: int = RESAMPLES) -> np.ndarray:
    """``resamples`` x ``clusters`` counts: how often each cluster is drawn in each bootstrap
    resample (drawing ``clusters`` clusters with replacement)."""
    return rng.multinomial(clusters, np.full(clusters, 1 / clusters), size=resamples).astype(float)


def unit_draws(clusters: Sequence[Any], rng: np.random.Generator, resamples: int = RESAMPLES) -> np.ndarray:
    """``resamples`` x units weights: each unit weighted by how often its cluster was drawn (for a
    statistic that needs the resampled units themselves, such as a ranking's coefficient)."""
    codes = _codes(clusters)
    return cluster_draws(int(codes.max()) + 1, rng, resamples)[:, codes]


def bootstrap_means(
    values: Values, clusters: Sequence[Any], rng: np.random.Generator, resamples: int = RESAMPLES
) -> np.ndarray:
    """The mean of each cluster-bootstrap resample: whole clusters drawn with replacement."""
    sums, sizes = _cluster_sums(np.asarray(values, dtype=float), _codes(clusters))
    weights = cluster_draws(len(sums), rng, resamples)
    return (weights @ sums) / (weights @ sizes)


def sign_flip_p(
    differences: Values,
    clusters: Sequence[Any],
    rng: np.random.Generator,
    resamples: int = RESAMPLES,
) -> float:
    """The two-sided p-value of "mean difference 0" by flipping the sign of whole clusters."""
    sums, _ = _cluster_sums(np.asarray(differences, dtype=float), _codes(clusters))
    observed = abs(float(sums.sum()))
    tolerance = 1e-9 * max(float(np.abs(sums).sum()), 1.0)
    if 2 ** len(sums) <= resamples:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(sums))))
        return float(np.mean(np.abs(signs @ sums) >= observed - tolerance))
    signs = rng.choice((1.0, -1.0), size=(resamples, len(sums)))
    extreme = int((np.abs(signs @ sums) >= observed - tolerance).sum())
    return (1 + extreme) / (1 + resamples)


def minimum_detectable(
    stderr: float, clusters: int, power: float = POWER, confidence: float = CONFIDENCE
) -> float:
    """The smallest true difference a two-sided test at ``1 - confidence`` finds with ``power``."""
    return (_t((1 + confidence) / 2, clusters) + _t(power, clusters)) * stderr


def paired_test(
    differences: Values,
    clusters: Sequence[Any],
    seed: int = SEED,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> PairedTest | None:
    """The paired comparison of per-unit differences (A - B), clustered; None for no units."""
    d = np.asarray(differences, dtype=float)
    if not len(d):
        return None
    groups = len(set(map(str, clusters)))
    rng = np.random.default_rng(seed)
    draws = bootstrap_means(d, clusters, rng, resamples)
    tail = (1 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    se = clustered_stderr(d, clusters)
    return PairedTest(
        difference=float(d.mean()),
        stderr=se,
        low=float(low),
        high=float(high),
        p_value=sign_flip_p(d, clusters, rng, resamples),
        mde=minimum_detectable(se, groups, confidence=confidence),
        n=len(d),
        clusters=groups,
    )
