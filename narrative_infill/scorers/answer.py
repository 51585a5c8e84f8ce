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
from inspect_ai.model import ContentReasoning, ContentText
from inspect_ai.solver import TaskState

from ..extraction import DEFAULT_EXTRACTION, Extraction, extract_with


@lru_cache(maxsize=4096)
def _extract(extraction: str, response: str, problem: str) -> Extraction:
    return extract_with(extraction, response, problem)


def published_response(state: TaskState) -> str:
    """The response as the published code read it, vLLM's raw text with the reasoning in place:
    Inspect moves a ``<think>`` block into a reasoning part (``completion`` leaves it out), and
    the published rule takes a tag inside the reasoning, or the whole trace, as the answer."""
    if not state.output.choices:
        return state.output.completion
    content = state.output.message.content
    if isinstance(content, str):
        return content
    return "".join(
        f"<think>{part.reasoning}</think>" if isinstance(part, ContentReasoning) else part.text
        for part in content
        if isinstance(part, ContentReasoning | ContentText)
    )


async def extracted(state: TaskState, extraction: str = DEFAULT_EXTRACTION) -> Extraction:
    """The infill extracted from the sample's output (the problem is the sample input)."""
    response = published_response(state) if extraction == "published" else state.output.completion
    return await anyio.to_thread.run_sync(_extract, extraction, response, state.input_text)


def truncated(state: TaskState) -> bool:
    """Whether the output cap, not the model, ended the response."""
    return state.output.stop_reason == "max_tokens"
