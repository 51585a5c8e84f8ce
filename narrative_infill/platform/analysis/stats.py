"""One home for the package's statistics: intervals and paired tests clustered by narrative.

``compare``, ``report``, the leaderboard and ``report --compare-paper`` all draw their error bars
here, so that a number means the same thing wherever it is printed. Every computation takes one
value per unit (a sample, or an instance's mean over epochs) and the unit's cluster, its source
narrative (``data.narrative``): the instances of one story are correlated, so intervals and tests
sum whole narratives, never single instances.

Formulas (n units, G clusters, cluster sums taken of the deviations from the mean):

* clustered standard error (CR1, as Inspect's ``stderr(cluster=)``):
  ``SE = sqrt(G / (G - 1) * sum_g (sum_{i in g} (x_i - mean))^2) / n``;
* interval: ``mean +- t_{(1 + level) / 2, G - 1} * SE`` (as Inspect's ``ci(cluster=)``);
* paired test of per-unit differences d (A - B): the clustered t test, ``t = mean(d) / SE(d)``
  with G - 1 degrees of freedom; its interval is ``mean(d) +- t_{(1 + level) / 2, G - 1} * SE(d)``,
  the same inference as its p-value, so the interval excludes 0 exactly when p < 1 - level. It is
  analytic, so its p-values are as fine as a multiplicity correction needs (a sign-flip p-value
  cannot go below 1 / (draws + 1): never past Holm over a 20-entry board's 190 pairs);
* Holm's step-down adjustment of m p-values (``holm``): the k-th smallest is multiplied by
  m - k + 1, and the adjusted values made non-decreasing; it controls the family-wise error;
* minimum detectable difference at ``POWER`` (two-sided level ``1 - CONFIDENCE``):
  ``MDE = (t_{1 - alpha/2, G - 1} + t_{power, G - 1}) * SE(paired differences)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ...number_rules import CONFIDENCE, SAME_NUMBER_TOLERANCE

POWER = 0.8
#: Fewer narratives than this: a clustered interval or test holds its level only roughly, so the
#: commands that print one say so.
FEW_NARRATIVES = 50
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
    """A paired comparison on shared units: the mean difference (A - B), its clustered t interval
    and p-value (one inference: the interval excludes 0 exactly when p < 1 - ``confidence``) and
    the smallest difference these units detect at ``POWER``."""

    difference: float
    stderr: float
    low: float
    high: float
    p_value: float
    mde: float
    n: int
    clusters: int
    confidence: float = CONFIDENCE

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
    None for no values. One narrative leaves no degree of freedom: its bounds are NaN, not the
    zero-width interval its standard error of 0 (a convention, as Inspect's) would give."""
    x = np.asarray(values, dtype=float)
    if not len(x):
        return None
    groups = len(set(map(str, clusters)))
    se = clustered_stderr(x, clusters)
    half = _t((1 + confidence) / 2, groups) * se if groups > 1 else math.nan
    mean = float(x.mean())
    return Interval(mean, se, mean - half, mean + half, len(x), groups)


def minimum_detectable(
    stderr: float, clusters: int, power: float = POWER, confidence: float = CONFIDENCE
) -> float:
    """The smallest true difference a two-sided test at ``1 - confidence`` finds with ``power``."""
    return (_t((1 + confidence) / 2, clusters) + _t(power, clusters)) * stderr


def t_p_value(estimate: float, stderr: float, clusters: int) -> float:
    """The two-sided p-value of "true value 0" for ``estimate`` with clustered ``stderr``, from the
    t distribution with ``clusters - 1`` degrees of freedom (0 when the estimate is not 0 and every
    cluster agrees exactly; 1 when both are 0)."""
    from scipy.stats import t

    if stderr == 0:
        return 1.0 if estimate == 0 else 0.0
    return float(2 * t.sf(abs(estimate) / stderr, max(clusters - 1, 1)))


def holm(p_values: Values) -> np.ndarray:
    """Holm's step-down adjusted p-values: reject where adjusted < level controls the chance of
    any false rejection at ``level``, whatever the tests' dependence. Written here because scipy
    has only the false-discovery adjustments (``scipy.stats.false_discovery_control``)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * (len(p) - np.arange(len(p)))
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return adjusted


def paired_test(
    differences: Values, clusters: Sequence[Any], confidence: float = CONFIDENCE
) -> PairedTest | None:
    """The clustered t test of per-unit differences (A - B); None with fewer than two clusters,
    which leave no degree of freedom to test on. A difference within ``SAME_NUMBER_TOLERANCE`` is
    none: two equal scores averaged over different epochs ((3.2 + 3.2 + 3.2) / 3 is not 3.2) or
    scored on other hardware differ by rounding of one sign, which the test would call significant."""
    d = np.asarray(differences, dtype=float)
    d = np.where(np.abs(d) <= SAME_NUMBER_TOLERANCE, 0.0, d)
    groups = len(set(map(str, clusters)))
    if groups < 2:
        return None
    se = clustered_stderr(d, clusters)
    mean = float(d.mean())
    half = _t((1 + confidence) / 2, groups) * se
    return PairedTest(
        difference=mean,
        stderr=se,
        low=mean - half,
        high=mean + half,
        p_value=t_p_value(mean, se, groups),
        mde=minimum_detectable(se, groups, confidence=confidence),
        n=len(d),
        clusters=groups,
        confidence=confidence,
    )


def p_text(p_value: float, level: float = round(1 - CONFIDENCE, 9)) -> str:
    """A p-value as printed: ``< 0.001`` below a thousandth, else three decimals, with more digits
    where rounding would carry it across ``level`` (0.0496 is "0.0496", never "0.050"; the level
    rounded, as 1 - 0.95 is 0.050000000000000044)."""
    if p_value < 0.001:
        return "< 0.001"
    digits = 3
    while (float(f"{p_value:.{digits}f}") < level) != (p_value < level):
        digits += 1
    return f"{p_value:.{digits}f}"
