"""The extracted answer of a sample, shared by the scorers.

Both scorers of a task (metrics, judge) score the same extraction; it is computed once per
distinct (rule, response, problem) and reused. The rule is ``ours`` (the default) or
``published`` (the authors' released code: first ``<ANSWER>`` span, else the whole response).
It runs in a worker thread: aligning a 3,000-word response with its story takes most of a
second, and the event loop must keep serving every other sample's model calls meanwhile.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import anyio
from inspect_ai.model import ContentReasoning, ContentText
from inspect_ai.solver import TaskState

from ..data.text import is_invisible, valid_unicode
from ..extraction import DEFAULT_EXTRACTION, MAX_TEXT_CHARS, Extraction, ExtractionStatus, extract_with

#: The most sentences of one answer the metrics and the judge read (after its first ``MAX_TEXT_CHARS``
#: characters): Sem-F1 embeds every sentence, so a long answer of short sentences cost minutes
#: (200 KB of ~5,400 sentences: 84 s). No real answer comes near it: the most sentences of an
#: answer extracted from the 9,800 real outputs is 348 (the published rule, a whole reasoning
#: trace; 16 under the paper's rules); a gold span has at most 3. See docs/extraction-limits.md.
MAX_ANSWER_SENTENCES = 512


@lru_cache(maxsize=4096)
def read_answer(extraction: str, response: str, problem: str) -> Extraction:
    """The answer the scorers score, from a model's raw ``response``: where model text enters
    scoring, so the one place it is made valid Unicode (``replaced_chars``); extracted under
    the named rule (its input limit: ``truncated_chars``); an answer of invisible characters
    only (zero-width, control, format, private use) is no answer, with that step, so the
    empty-answer rate counts it and the judge sees the explicit empty marker."""
    response, replaced = valid_unicode(response or "")
    answer = extract_with(extraction, response, problem)
    if answer.text and is_invisible(answer.text):
        steps = (*answer.steps, "invisible_characters_only")
        answer = replace(answer, text="", status=ExtractionStatus.NO_ANSWER, steps=steps)
    return replace(answer, replaced_chars=replaced) if replaced else answer


def bounded_answer(text: str) -> str:
    """The part of an answer the metrics and the judge read: its first ``MAX_TEXT_CHARS``
    characters, and of those its first ``MAX_ANSWER_SENTENCES`` sentences. Under the published
    rule an untagged response is the answer whole: this is what bounds it."""
    text = text[:MAX_TEXT_CHARS]
    if sum(text.count(mark) for mark in ".?!") < MAX_ANSWER_SENTENCES:
        return text  # Punkt ends a sentence only after one of these: no more sentences than the limit
    split = sentences(text)
    if len(split) <= MAX_ANSWER_SENTENCES:
        return text
    end = 0
    for sentence in split[:MAX_ANSWER_SENTENCES]:  # each sentence is a piece of the text, in order
        end = text.index(sentence, end) + len(sentence)
    return text[:end]


def sentences(text: str) -> list[str]:
    """Sentences as the authors' Sem-F1 split them: NLTK ``sent_tokenize``."""
    from nltk import sent_tokenize

    from ..nltk_data import ensure_punkt

    ensure_punkt()
    return [s for s in sent_tokenize(text) if s.strip()]


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
    return await anyio.to_thread.run_sync(read_answer, extraction, response, state.input_text)


def truncated(state: TaskState) -> bool:
    """Whether the output cap, not the model, ended the response."""
    return state.output.stop_reason == "max_tokens"


def input_limits(answer: Extraction, answer_truncated_chars: int = 0) -> dict[str, int]:
    """Score metadata naming what was not read as the model wrote it, only where something was:
    ``response_replaced_chars`` (lone surrogates replaced), ``response_truncated_chars`` (past the
    extraction's input limit) and ``answer_truncated_chars`` (past the metrics' input limit)."""
    counts = {
        "response_replaced_chars": answer.replaced_chars,
        "response_truncated_chars": answer.truncated_chars,
        "answer_truncated_chars": answer_truncated_chars,
    }
    return {key: count for key, count in counts.items() if count}
