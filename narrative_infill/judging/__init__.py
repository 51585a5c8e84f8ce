"""The LLM judge: the paper's five-dimension rubric, its prompt, and parsing of the grader's reply.

The Inspect scorer is ``narrative_infill.scorers.judge``; this package holds what it needs
and nothing Inspect-specific.
"""

from .parse import DIMENSIONS, JudgementError, parse_judgement
from .prompt import VARIANTS, JudgePrompt, judge_prompt

__all__ = ["DIMENSIONS", "VARIANTS", "JudgePrompt", "JudgementError", "judge_prompt", "parse_judgement"]
