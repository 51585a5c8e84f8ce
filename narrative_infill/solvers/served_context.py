"""The output cap against a vLLM server's context: capped before the request, with the reason.

A vLLM server serves a fixed context (``--max-model-len``). A request whose prompt plus
``max_tokens`` exceeds it is either refused by the server (Inspect's vllm provider turns that
refusal into an *answer* whose text is the error message) or stopped at the context length: an
answer cut where the task asked for more, for a reason the sample does not show. So before each
request to a ``vllm/`` model the prompt is counted under the model's own chat template by the
server (``/tokenize`` with the messages, which also reports ``max_model_len``), and a cap that
does not fit is lowered to what does, recorded in the sample's metadata (``max_tokens_limit``);
a prompt that leaves no room at all is refused before it is sent (:class:`ContextLimitError`).
Other providers report no served context and are left alone.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
from inspect_ai.model import Model
from inspect_ai.solver import TaskState

from ..errors import NarrativeInfillError

logger = logging.getLogger(__name__)
PROVIDER = "vllm"
TIMEOUT = 60.0  # seconds for one /tokenize request: tokenising is cheap, even under load
#: The sample metadata key that records a cap lowered to fit the served context.
METADATA_KEY = "max_tokens_limit"


class ContextLimitError(NarrativeInfillError, RuntimeError):
    """The prompt alone fills the served context, or the server would not say how large it is."""


async def served_budget(model: Model, messages: list[dict[str, str]]) -> tuple[int, int]:
    """(prompt tokens under the chat template, the served context) from the model's vLLM server."""
    api = model.api
    await api.tokenize("")  # the vllm provider starts its own server here when it has none yet
    root = str(api.base_url).rstrip("/").removesuffix("/v1")
    body = {"model": api.model_name, "messages": messages, "add_generation_prompt": True}
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            reply = await client.post(
                f"{root}/tokenize", json=body, headers={"Authorization": f"Bearer {api.api_key}"}
            )
        reply.raise_for_status()
        counted: Any = reply.json()
        return int(counted["count"]), int(counted["max_model_len"])
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as err:
        raise ContextLimitError(
            f"the vLLM server at {root} did not report the prompt's length and its context "
            f"(/tokenize: {type(err).__name__}: {err}); not sending a request it may cut"
        ) from None


async def fit_served_context(model: Model, state: TaskState, cap: int) -> int:
    """``cap``, or the room the served context leaves after the prompt (the reason in metadata)."""
    if str(model).split("/", 1)[0] != PROVIDER:
        return cap
    messages = [{"role": message.role, "content": message.text} for message in state.messages]
    prompt_tokens, context = await served_budget(model, messages)
    if prompt_tokens + cap <= context:
        return cap
    room = context - prompt_tokens
    reason = (
        f"the prompt ({prompt_tokens} tokens) plus max_tokens {cap} exceed the served context of "
        f"{context} tokens (the server's max_model_len)"
    )
    if room < 1:
        raise ContextLimitError(f"{reason}: no room left for an answer; the request was not sent")
    if state.metadata.get("max_tokens_rule") == "task_default":
        reason += (
            "; this reasoning task's default cap assumes a long-context model: a reply that reasons "
            "at length may end before its tagged answer"
        )
    logger.warning(f"sample {state.sample_id}: max_tokens lowered to {room}: {reason}")
    state.metadata[METADATA_KEY] = {
        "requested": cap,
        "capped_to": room,
        "prompt_tokens": prompt_tokens,
        "served_context": context,
        "reason": reason,
    }
    return room
