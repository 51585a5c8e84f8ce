"""The paper's protocol, each value once: what a run must use to be the paper's run.

The settings (§3.2: five TELeR levels, four reasoning paradigms), decoding and the output-cap rule
(§3.2), the published data's size (§3.1), the judge, its temperature and its five dimensions (§3.4),
the High%/Low% rule, METEOR's parameters and the scoring backbones (§3.3). The tasks, the solver,
the submission tracks, the grid, the report's comparison with the paper and the Register entry (``eval.yaml``,
checked by a test) read them from here, so a reader finds each choice in one place and a change
to one moves every reader. Imports nothing from the package, so any room may import it.
"""

from __future__ import annotations

import math
from typing import Any

#: The settings: the five TELeR levels and the four reasoning paradigms, each one task.
TELER_LEVELS = ("l0", "l1", "l2", "l3", "l4")
PARADIGMS = ("abductive", "causal", "cot", "counterfactual")
SETTINGS = TELER_LEVELS + PARADIGMS

#: Decoding of every generation (§3.2: "temperature = 0.8, top-p = 0.9").
TEMPERATURE = 0.8
TOP_P = 0.9

#: The output cap of the TELeR levels: this many times the masked span's length (§3.2: "a maximum
#: output length set to twice the length of the masked span"), at least one token.
CAP_FACTOR = 2.0
#: The output cap of the reasoning-paradigm tasks: the published code's ``max_tokens``, under
#: which the authors' own generations were made (their DeepSeek-R1 traces run to ~4,400 words
#: and punctuation marks). Those prompts ask for reasoning before the tagged answer, so twice
#: the gold span would cut almost every reply before its answer.
REASONING_MAX_TOKENS = 4096


def output_cap(
    setting: str, gold_tokens: int, user_cap: int | None = None, factor: float = CAP_FACTOR
) -> tuple[int, str]:
    """(cap, rule) of one sample's generation, the one rule every harness and check applies: a cap
    the user set wins (``user``); else a reasoning paradigm gets ``REASONING_MAX_TOKENS``
    (``task_default``); else a TELeR level gets ``factor`` times the gold span's length, at least one
    token (``per_sample``)."""
    if user_cap:
        return int(user_cap), "user"
    if setting in PARADIGMS:
        return REASONING_MAX_TOKENS, "task_default"
    return max(1, math.ceil(factor * gold_tokens)), "per_sample"


#: The published benchmark: 9,142 instances (§3.1), masked from 3,823 narratives ("base samples").
PUBLISHED_INSTANCES = 9142

#: The prompt wording of the paper's runs: Appendix B's templates (``prompts/templates.yaml``), not
#: one of the published code's variants (``code0``..``code3``).
PAPER_PROMPT_VARIANT = "paper"
#: The judge prompt of the paper's runs: the authors' prompt as §3.4 describes it (its penalties
#: sent, the paper's dimension definitions), not the published code's verbatim one (``authors``).
PAPER_JUDGE_VARIANT = "paper"
#: The embedding backbones of the paper's BERTScore and Sem-F1 (below), as ``-T backbone`` names them.
PAPER_BACKBONE = "paper"

#: The paper's judge (§3.4: GPT-4.1-mini, version 2025-04-14) as Inspect names it, and its
#: temperature ("to ensure deterministic evaluation").
JUDGE_MODEL = "openai/gpt-4.1-mini"
JUDGE_TEMPERATURE = 0.0

#: The scoring backbones (§3.3): BERTScore on roberta-large's layer 17 (bert-score's default for
#: it), Sem-F1 on paraphrase-distilroberta.
BERTSCORE_MODEL = "roberta-large"
BERTSCORE_LAYER = 17
SEMF1_MODEL = "sentence-transformers/paraphrase-distilroberta-base-v1"

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


#: NLTK METEOR's parameters (the authors' ``evaluate`` defaults).
METEOR_PARAMS = {"alpha": 0.9, "beta": 3.0, "gamma": 0.5}
