"""What each score key of the tasks means, in Every Eval Ever's terms: bounds, direction, kind.

One entry per key the ``metrics`` and ``judge`` scorers write; a judge dimension's entry comes
from the dimensions of the judge prompt variant the log's judge used. A key without an entry (a new
scorer key) stops the export with its name instead of being written with unknown bounds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ....copy_guards import CONTEXT_COPY_THRESHOLD, STORY_REUSE_THRESHOLD, is_copied, is_story_reuse
from ....paper_protocol import HIGH_QAVG, LOW_QAVG, display_name, high_label, is_high, is_low
from ....scorers.metrics.pairs import ATAVG


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
    "context_copy": MetricSpec(
        "Context copy",
        "copy_share",
        _OVERLAP,
        True,
        0.0,
        1.0,
        "share of the answer's words in runs of 3+ copied from the story around the blank",
    ),
    "story_reuse": MetricSpec(
        "Story reuse",
        "reuse_share",
        _OVERLAP,
        True,
        0.0,
        1.0,
        "content words (stemmed) shared with the story, in any order, over the smaller set's count",
    ),
    "qavg": MetricSpec("QAvg", "rubric_mean", "points", False, 1.0, 5.0, "mean of the judge's dimensions"),
    "grader_failed": MetricSpec(
        "Grader failed", "failure_rate", _OVERLAP, True, 0.0, 1.0, "judgements without five valid scores"
    ),
}


@dataclass(frozen=True)
class Share:
    """An extra aggregate result of a key: the share of judged samples a rule counts."""

    suffix: str  # of the result id (and metric id)
    spec: MetricSpec
    counts: Callable[[float], bool]  # the rule, on one sample's reduced value
    metric: str  # the log's metric of this share ...
    params: dict[str, Any]  # ... which is this rule's when it was computed with these params


def _guard_share(key: str, suffix: str, label: str, threshold: float, rule: Callable[[Any], Any]) -> Share:
    """A story guard's share: the answers whose ``key`` is above ``threshold`` (``rule``)."""
    spec = MetricSpec(
        f"{label} ({key} > {threshold:g})",
        "share",
        _OVERLAP,
        True,
        0.0,
        1.0,
        f"share of answers with {key} > {threshold:g}",
    )
    return Share(suffix, spec, lambda value: bool(rule(value)), suffix, {"threshold": threshold})


#: The story guards' shares (``context_copy``: copied in order; ``story_reuse``: in any order).
GUARD_SHARES = {
    key: _guard_share(key, suffix, label, threshold, rule)
    for key, suffix, label, threshold, rule in (
        ("context_copy", "copied_share", "Copied%", CONTEXT_COPY_THRESHOLD, is_copied),
        ("story_reuse", "reused_share", "Reused%", STORY_REUSE_THRESHOLD, is_story_reuse),
    )
}


def shares_of(key: str, high_inclusive: bool = False) -> tuple[Share, ...]:
    """A story guard's share of flagged answers; QAvg's High% (under the rule asked for,
    ``paper_protocol.is_high``) and Low%. The two High% rules are two metrics: each has its own id,
    and its name says which rule it counts."""
    if key in GUARD_SHARES:
        return (GUARD_SHARES[key],)
    if key != "qavg":
        return ()
    high = high_label(high_inclusive)
    return (
        Share(
            "high_share_inclusive" if high_inclusive else "high_share",
            MetricSpec(
                f"High% ({high})", "share", _OVERLAP, False, 0.0, 1.0, f"share of judged samples with {high}"
            ),
            lambda qavg: bool(is_high(qavg, high_inclusive)),
            "share_above",
            {"threshold": HIGH_QAVG, **({"inclusive": True} if high_inclusive else {})},
        ),
        Share(
            "low_share",
            MetricSpec(
                f"Low% (QAvg < {LOW_QAVG:g})",
                "share",
                _OVERLAP,
                True,
                0.0,
                1.0,
                f"share of judged samples with QAvg < {LOW_QAVG:g}",
            ),
            lambda qavg: bool(is_low(qavg)),
            "share_below",
            {"threshold": LOW_QAVG},
        ),
    )


_PANEL_MEMBER = re.compile(r"^qavg_(.+)$")


def spec_for(key: str, dimensions: tuple[str, ...]) -> MetricSpec | None:
    """The key's spec: a fixed key's, a judge dimension's (``dimensions``: those of the judge
    prompt variant the log's judge used), or a panel member's ``qavg_<judge>`` (QAvg's)."""
    if key in SPECS:
        return SPECS[key]
    if key in dimensions:
        return MetricSpec(display_name(key), "rubric_score", "points", False, 1.0, 5.0, f"judge: {key}")
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
