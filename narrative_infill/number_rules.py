"""When two numbers are the same number, what counts as no number, the confidence level and the
range an interval is clipped to: the rules every recomputation (verify, the importer, the report),
every empty cell and every interval share. Imports nothing from the package.
"""

from __future__ import annotations

import math
from typing import Any

#: The confidence level of every interval and test the package reports: the scorers' interval of
#: the headline keys, the report's comparisons, the board's intervals and rankings.
CONFIDENCE = 0.95

#: The range a score can take: the metrics and AtAvg 0-1, the judge's dimensions and QAvg 1-5. A
#: t interval near an edge reaches past it; every printed interval is clipped to it (``clip``).
METRIC_RANGE = (0.0, 1.0)
JUDGE_RANGE = (1.0, 5.0)

#: How far a number recomputed by arithmetic (a mean summed in another order, a value read back
#: from a file) may sit from the logged one and still be the same number: summing in another order
#: moves a mean by ~1e-15, and no table shows more than 4 decimals. A larger difference is a changed
#: number. A metric scored again by a model is not arithmetic: ``RESCORED_TOLERANCE``.
SAME_NUMBER_TOLERANCE = 1e-6

#: How far a metric scored again (``verify``'s and ``submit``'s re-scoring) may sit from the logged
#: one and still be the same score. BERTScore and Sem-F1 run a model forward pass whose floating
#: point sums depend on what else is in the batch (padding, order), on the torch thread count, the
#: process and the hardware: the same pair moved by up to 1.07e-6 between batches on SmolLM2's demo
#: answers (issue 57), by 1.8e-7 on 100 real answers of ../shared and 1.4e-7 on the demo set's
#: scripted answers (benchmarks/score_spread.py: flushes of 1-1024 pairs, shuffled orders, 1 and 2
#: threads, a fresh process). Ten times the largest, rounded up to a power of ten;
#: docs/leaderboard.md. A metric moved by more is refused.
RESCORED_TOLERANCE = 1e-5


def same_number(a: float, b: float) -> bool:
    """Whether two numbers, one of them recomputed, are the same within ``SAME_NUMBER_TOLERANCE``."""
    return math.isclose(a, b, rel_tol=0, abs_tol=SAME_NUMBER_TOLERANCE)


def same_rescored(a: float, b: float) -> bool:
    """Whether a logged metric and the same metric scored again are the same score, within
    ``RESCORED_TOLERANCE``."""
    return math.isclose(a, b, rel_tol=0, abs_tol=RESCORED_TOLERANCE)


def clip(low: float, high: float, bounds: tuple[float, float]) -> tuple[float, float, bool]:
    """(low, high) cut to the score's ``bounds``, and whether either was cut (NaN stays NaN): each
    end into the range, so an interval wholly past an edge stays ordered (it becomes the edge)."""
    floor, ceiling = bounds
    inside = [floor if value < floor else ceiling if value > ceiling else value for value in (low, high)]
    outside = any(not floor <= value <= ceiling for value in (low, high) if not math.isnan(value))
    return inside[0], inside[1], outside


def is_missing(value: Any) -> bool:
    """None or NaN: how pandas and spreadsheets leave an empty cell."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def none_if_nan(value: Any) -> float | None:
    """A number as a float, None for a missing, non-numeric or NaN value (JSON has no NaN)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number
