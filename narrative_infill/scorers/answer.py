"""The extracted answer of a sample, shared by the scorers.

Both scorers of a task (metrics, judge) score the same extraction; it is computed once per
distinct (response, problem, n) and reused.
"""

from __future__ import annotations

from functools import lru_cache

from inspect_ai.solver import TaskState

from ..extraction import Extraction, extract_answer


@lru_cache(maxsize=4096)
def _extract(response: str, problem: str, n: int | None) -> Extraction:
    return extract_answer(response, problem, n)


def extracted(state: TaskState) -> Extraction:
    """The infill extracted from the sample's output (the problem is the sample input)."""
    return _extract(state.output.completion, state.input_text, state.metadata.get("n"))
