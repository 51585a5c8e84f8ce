"""The package's guards against answers that are not answers: near-verbatim copies of the gold
(contamination), copies of the story around the blank, and the story's own words rearranged.

Each threshold was chosen on data (docs/baselines.md) and is read by the metrics, the report, the
floor and the board from here. Imports nothing from the package, so any room may import it.
"""

from __future__ import annotations

from typing import Any

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


#: Two answers to different blanks of one story say the same thing when the words each holds beyond
#: the story's (case-folded) overlap this much (Jaccard similarity; ``platform.analysis.blank_guard``).
#: Chosen on the 9,800 real outputs (docs/baselines.md), never on the attack rules: 0.5 flags stories
#: whose blanks get answers sharing half their own words, which real models' answers to different
#: blanks rarely do.
BLANK_SAME_THRESHOLD = 0.5
#: Fewest words an answer needs to be compared: one-word answers ("Suddenly") repeated across a
#: story's blanks are a real model's weak answers, and too little text to win AtAvg by filler.
BLANK_MIN_WORDS = 4
