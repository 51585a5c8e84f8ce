"""The LLM judge: ``narrative_infill/judge``.

``scorer`` is the Inspect scorer, ``prompt`` builds the rubric prompt from its YAML files,
``parse`` reads the grader's reply.
"""

from ...definitions import DIMENSIONS
from .parse import JudgementError, parse_judgement
from .prompt import VARIANTS, JudgePrompt, judge_prompt
from .scorer import judge

__all__ = [
    "DIMENSIONS",
    "VARIANTS",
    "JudgePrompt",
    "JudgementError",
    "judge",
    "judge_prompt",
    "parse_judgement",
]
