"""A model's output made valid Unicode where it enters the sample, before anything reads or logs it.

A response can hold lone surrogates (a provider's JSON ``"\\ud800"``): no tokenizer accepts them,
and the log writer stores them as the six characters ``\\ud800``, so a rescoring of the log would
read other text than the scorers read during the run. Replaced here once, with U+FFFD
(``data.text.valid_unicode``), and counted in the sample's metadata (``output_replaced_chars``).
"""

from __future__ import annotations

from inspect_ai.model import ChatMessage, ContentReasoning, ContentText
from inspect_ai.solver import TaskState

from ..data.text import valid_unicode


def _make_valid(message: ChatMessage) -> int:
    """Replace in place; how many characters were replaced."""
    if isinstance(message.content, str):
        message.content, replaced = valid_unicode(message.content)
        return replaced
    total = 0
    for part in message.content:
        if isinstance(part, ContentText):
            part.text, replaced = valid_unicode(part.text)
        elif isinstance(part, ContentReasoning):
            part.reasoning, replaced = valid_unicode(part.reasoning)
        else:
            continue
        total += replaced
    return total


def make_output_valid(state: TaskState) -> int:
    """The state's new output (every choice, its completion, the conversation's last assistant
    message) as valid Unicode; the count of replaced characters, also in the sample's metadata."""
    replaced = sum(_make_valid(choice.message) for choice in state.output.choices)
    state.output.completion, in_completion = valid_unicode(state.output.completion)
    replaced = replaced or in_completion
    last = state.messages[-1] if state.messages else None
    if last is not None and last.role == "assistant" and last is not state.output.message:
        _make_valid(last)
    if replaced:
        state.metadata["output_replaced_chars"] = replaced
    return replaced
