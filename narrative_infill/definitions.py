"""Definitions every room shares: one home for each rule that two rooms would otherwise copy.

The judge's five dimensions, the paper's High%/Low% rule, the contamination, context-copy and
story-reuse thresholds, METEOR's parameters, the setting names and how a log names its setting, how a
one-or-several option becomes a list, when a recomputed number is the same number, the per-sample
row of a submission, and the base class of the package's errors. (The paper's run protocol is in
``paper_protocol``.) Imports nothing from the package, so any room may import it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: The judge's dimensions (paper §3.4), in the paper's order: score keys, reply keys and names
#: are all derived from these.
DIMENSIONS = (
    "fluency",
    "context_faithfulness",
    "bidirectional_coherence",
    "narrative_consistency",
    "informativeness",
)


def reply_key(dimension: str) -> str:
    """The key of ``dimension`` in the authors' reply format: ``Context_Faithfulness``."""
    return dimension.title()


def display_name(dimension: str) -> str:
    """How the paper writes ``dimension``: ``Context Faithfulness``."""
    return dimension.replace("_", " ").title()


#: High% counts QAvg above this (paper: > 4; the authors' scripts: >= 4, ``--high-inclusive``).
HIGH_QAVG = 4.0
#: Low% counts QAvg below this (paper and scripts: < 2).
LOW_QAVG = 2.0


def is_high(qavg: Any, inclusive: bool = False, threshold: float = HIGH_QAVG) -> Any:
    """Whether a QAvg (a float or a pandas Series) counts towards High% (above ``threshold``)."""
    return qavg >= threshold if inclusive else qavg > threshold


def is_low(qavg: Any, threshold: float = LOW_QAVG) -> Any:
    """Whether a QAvg (a float or a pandas Series) counts towards Low% (below ``threshold``)."""
    return qavg < threshold


def high_label(inclusive: bool = False) -> str:
    """The High% rule in words, for axis labels and help texts."""
    return f"QAvg {'>=' if inclusive else '>'} {HIGH_QAVG:g}"


#: An answer whose ROUGE-1 F1 against the gold reaches this is a near-verbatim copy (contamination).
CONTAMINATION_ROUGE = 0.8


def is_near_verbatim(rouge1: Any) -> Any:
    """Whether an answer's ROUGE-1 F1 (a float or a pandas Series) makes it a near-verbatim copy."""
    return rouge1 >= CONTAMINATION_ROUGE


#: An answer whose ``context_copy`` (the share of its words in runs of three or more copied from the
#: story around the blank; ``scorers/metrics/copying.py``) is above this is a copy of the context,
#: not an answer: at most a fifth of its words are its own. Chosen from data (docs/baselines.md):
#: on the authors' 9,800 outputs the scores pile up at 0 and at 1 with the trough at 0.8-0.9, and
#: every null-baseline copy scores 1.
CONTEXT_COPY_THRESHOLD = 0.8
#: A ranked entry with more than this share of copied answers is flagged on the board, not ranked:
#: over twice the highest share among the authors' 20 models under the package's extraction (11.6%).
COPIED_SHARE_LIMIT = 0.25


def is_copied(context_copy: Any, threshold: float = CONTEXT_COPY_THRESHOLD) -> Any:
    """Whether an answer's ``context_copy`` (a float or a pandas Series) makes it a copy of the context."""
    return context_copy > threshold


#: An answer whose ``story_reuse`` (the overlap coefficient of its content words, stemmed, and the
#: story's, in any order; ``scorers/metrics/reuse.py``) is above this is the story's own material
#: rearranged, not an answer. Chosen on the authors' 9,800 outputs (in-sample; docs/baselines.md):
#: under the package's extraction it flags 3.4% of them (at most 8.6% of one model's) and most
#: answers of every rule that rearranges the story's words; 0.85 would flag 1.9% but let through 23%
#: of the stories with every third word replaced by a filler (10% at 0.8).
STORY_REUSE_THRESHOLD = 0.8


def is_story_reuse(story_reuse: Any, threshold: float = STORY_REUSE_THRESHOLD) -> Any:
    """Whether an answer's ``story_reuse`` (a float or a pandas Series) makes it the story's own
    words in some order: the order-free guard beside ``is_copied``."""
    return story_reuse > threshold


#: An answer whose ``order_gain`` (how many nats a word its own word order saves the packaged
#: SmolLM2 over one seeded shuffle of the same words; ``analysis/fluency.py``) is below this is not
#: fluent: words in no sentence's order (scrambled, sorted, swapped, padded salad). Between the two
#: measured groups (docs/baselines.md): the padded salads gain -0.5 to 0.4 (0.9-2.0 with a fluent
#: sentence pair before them), the authors' real answers of eight words or more 3.2 and up (the first
#: 60 of the shared test's seeded sample: in-sample).
FLUENCY_THRESHOLD = 2.5


def is_not_fluent(order_gain: Any, threshold: float = FLUENCY_THRESHOLD) -> Any:
    """Whether an answer's ``order_gain`` (a float, or a pandas Series; None or NaN: too short to
    read, counted fluent) makes it a bag of words rather than text."""
    return order_gain < threshold if order_gain is not None else False


#: NLTK METEOR's parameters (the authors' ``evaluate`` defaults).
METEOR_PARAMS = {"alpha": 0.9, "beta": 3.0, "gamma": 0.5}

#: The settings: the five TELeR levels and the four reasoning paradigms, each one task.
TELER_LEVELS = ("l0", "l1", "l2", "l3", "l4")
PARADIGMS = ("abductive", "causal", "cot", "counterfactual")
SETTINGS = TELER_LEVELS + PARADIGMS


def setting_name(metadata: Mapping[str, Any] | None, task_name: str) -> str:
    """A log's setting: its task's ``template`` metadata, else the registered task name's last part."""
    return (metadata or {}).get("template") or str(task_name).split("/")[-1]


def as_list(value: Any) -> list[Any] | None:
    """An option that takes one value or several, as a list (None when not given): a comma string
    splits (``-T domain=a,b``, ``-T judge_roles=grader,grader2``), a YAML list stays a list."""
    if value is None:
        return None
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple, set)):
        return list(value)
    return [value]


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


#: The fields of a submission's per-sample row, in order.
SAMPLE_ROW_FIELDS = ("id", "epoch", "atavg", "qavg")
ATAVG_COLUMN = SAMPLE_ROW_FIELDS.index("atavg")
QAVG_COLUMN = SAMPLE_ROW_FIELDS.index("qavg")


def sample_row(sample_id: Any, epoch: int, metrics: Mapping[str, Any], judged: Mapping[str, Any]) -> list:
    """A submission's row for one sample, from its newest metrics and judge score values."""
    return [str(sample_id), epoch, none_if_nan(metrics.get("atavg")), none_if_nan(judged.get("qavg"))]


class NarrativeInfillError(Exception):
    """Base of every error the package raises about its input or environment (a bad file, an
    option outside its choices, a busy port): the command line prints the message without a
    traceback. Any other exception is a bug and shows its traceback."""


class OptionError(NarrativeInfillError):
    """An option or task argument outside its allowed values. Not a ``ValueError``: Inspect's
    scorer loader reads a ``ValueError`` from a scorer factory as "no such scorer" and hides the
    message (``inspect score --scorer narrative_infill/metrics -S extraction=bogus``)."""
