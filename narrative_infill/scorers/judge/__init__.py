"""The LLM judge: ``narrative_infill/judge``.

``scorer`` is the Inspect scorer, ``rubric`` registers each judge variant (its prompt, its
dimensions and its reply shape), ``prompt`` builds the prompts from their YAML files, ``parse``
reads the grader's reply.
"""

from ...paper_protocol import DIMENSIONS
from .parse import JudgementError, parse_judgement
from .prompt import JudgePrompt
from .rubric import JUDGE_VARIANTS, JudgeVariant, judge_variant
from .scorer import judge

__all__ = [
    "DIMENSIONS",
    "JUDGE_VARIANTS",
    "JudgePrompt",
    "JudgeVariant",
    "JudgementError",
    "judge",
    "judge_variant",
    "parse_judgement",
]
