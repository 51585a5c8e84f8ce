"""The extracted answer of a sample, shared by the scorers.

Both scorers of a task (metrics, judge) score the same extraction; it is computed once per
distinct (rule, response, problem) and reused. The rule is ``ours`` (the default) or
``published`` (the authors' released code: first ``<ANSWER>`` span, else the whole response).
It runs in a worker thread: aligning a 3,000-word response with its story takes most of a
second, and the event loop must keep serving every other sample's model calls meanwhile.
"""

from __future__ import annotations

from functools import lru_cache

import anyio
from inspect_ai.solver import TaskState

from ..extraction import DEFAULT_EXTRACTION, Extraction, extract_with


@lru_cache(maxsize=4096)
def _extract(extraction: str, response: str, problem: str) -> Extraction:
    return extract_with(extraction, response, problem)


async def extracted(state: TaskState, extraction: str = DEFAULT_EXTRACTION) -> Extraction:
    """The infill extracted from the sample's output (the problem is the sample input)."""
    return await anyio.to_thread.run_sync(_extract, extraction, state.output.completion, state.input_text)


def truncated(state: TaskState) -> bool:
    """Whether the output cap, not the model, ended the response."""
    return state.output.stop_reason == "max_tokens"
