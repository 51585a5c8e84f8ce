"""When two numbers are the same number, what counts as no number, and the confidence level: the
rules every recomputation (verify, the importer, the report), every empty cell and every interval
share. Imports nothing from the package.
"""

from __future__ import annotations

import math
from typing import Any

#: The confidence level of every interval and test the package reports: the scorers' interval of
#: the headline keys, the report's comparisons, the board's intervals and rankings.
CONFIDENCE = 0.95

#: How far a recomputed number may sit from the logged one and still be the same number. A model
#: forward pass in another batch or on other hardware moves BERTScore and Sem-F1 by up to 8.9e-7
#: (benchmarks/metrics_parity.py over the 9,800 shared outputs), summing in another order moves a
#: mean by ~1e-15; no table shows more than 4 decimals. A larger difference is a changed number.
SAME_NUMBER_TOLERANCE = 1e-6


def same_number(a: float, b: float) -> bool:
    """Whether two numbers, one of them recomputed, are the same within ``SAME_NUMBER_TOLERANCE``."""
    return math.isclose(a, b, rel_tol=0, abs_tol=SAME_NUMBER_TOLERANCE)


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
