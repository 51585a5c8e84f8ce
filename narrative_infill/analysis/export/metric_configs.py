"""What each score key of the tasks means, in Every Eval Ever's terms: bounds, direction, kind.

One entry per key the ``metrics`` and ``judge`` scorers write. A key without an entry (a new
scorer key) stops the export with its name instead of being written with unknown bounds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...definitions import DIMENSIONS, HIGH_QAVG, LOW_QAVG
from ...scorers.metrics.pairs import ATAVG


@dataclass(frozen=True)
class MetricSpec:
    name: str
    kind: str
    unit: str
    lower_is_better: bool
    min_score: float
    max_score: float
    description: str
    binary: bool = False  # per sample 0 or 1; its mean is a share


_OVERLAP = "proportion"
SPECS: dict[str, MetricSpec] = {
    "rouge1": MetricSpec(
        "ROUGE-1 F1", "f1", _OVERLAP, False, 0.0, 1.0, "unigram-overlap F1 with the gold span"
    ),
    "meteor": MetricSpec("METEOR", "meteor", _OVERLAP, False, 0.0, 1.0, "METEOR against the gold span"),
    "chrf": MetricSpec("chrF", "chrf", _OVERLAP, False, 0.0, 1.0, "sacrebleu chrF / 100"),
    # Cosine similarities, not rescaled against a baseline: -1 is possible in principle.
    "bertscore": MetricSpec("BERTScore F1", "bertscore_f1", "cosine", False, -1.0, 1.0, "BERTScore F1"),
    "semf1": MetricSpec("Sem-F1", "f1", "cosine", False, -1.0, 1.0, "sentence-embedding F1 (Sem-F1)"),
    # The mean of the five above: (-1 + 0 + 0 + 0 - 1) / 5 at worst.
    ATAVG: MetricSpec("AtAvg", "mean", "mixed", False, -0.4, 1.0, "mean of the five automatic metrics"),
    "truncated": MetricSpec(
        "Truncated", "rate", _OVERLAP, True, 0.0, 1.0, "the output cap ended the response", binary=True
    ),
    "qavg": MetricSpec("QAvg", "rubric_mean", "points", False, 1.0, 5.0, "mean of the five judge dimensions"),
    "grader_failed": MetricSpec(
        "Grader failed", "failure_rate", _OVERLAP, True, 0.0, 1.0, "judgements without five valid scores"
    ),
    **{
        d: MetricSpec(d.replace("_", " ").title(), "rubric_score", "points", False, 1.0, 5.0, f"judge: {d}")
        for d in DIMENSIONS
    },
}

#: Extra aggregate results of a key: (metric in the log, result suffix, spec).
SHARES = {
    "qavg": (
        (
            "share_above",
            "high_share",
            MetricSpec(
                "High%", "share", _OVERLAP, False, 0.0, 1.0, f"share of samples with QAvg above {HIGH_QAVG:g}"
            ),
        ),
        (
            "share_below",
            "low_share",
            MetricSpec(
                "Low%", "share", _OVERLAP, True, 0.0, 1.0, f"share of samples with QAvg below {LOW_QAVG:g}"
            ),
        ),
    )
}

_PANEL_MEMBER = re.compile(r"^qavg_(.+)$")


def spec_for(key: str) -> MetricSpec | None:
    """The key's spec; ``qavg_<judge>`` (a panel member's QAvg) shares QAvg's."""
    if key in SPECS:
        return SPECS[key]
    member = _PANEL_MEMBER.match(key)
    if member:
        qavg = SPECS["qavg"]
        return MetricSpec(
            f"QAvg ({member.group(1)})",
            qavg.kind,
            qavg.unit,
            False,
            1.0,
            5.0,
            f"QAvg of the panel member {member.group(1)}",
        )
    return None


def is_best(spec: MetricSpec, value: float) -> bool:
    """EEE's per-sample ``is_correct`` for a graded score: the value is the metric's best
    (an exact reproduction of the gold span, 5 on a judge dimension, no truncation)."""
    return value <= spec.min_score if spec.lower_is_better else value >= spec.max_score
