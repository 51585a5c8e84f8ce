"""``--model baseline/<rule>``: the null baselines run like any model.

The provider answers each sample of a narrative_infill task by its rule (``data.baselines``)
from the sample itself: the problem is the sample's input, ``n`` its metadata, and only
``baseline/gold`` reads the target. Everything else is the ordinary task: the same prompt,
solver, extraction and scorers, so its logs are ordinary logs that ``inspect view``, the report,
``submit`` and ``export`` read like any other.

The answer follows the prompt's answer format: wrapped in ``<ANSWER>`` tags when the prompt
asks for them (every level but L0), bare otherwise, so extraction keeps it whole. A baseline
ignores the output cap: it is a fixed text, not a generation (the context answer is longer
than twice the gold span). Usage is counted offline (words and punctuation marks, the task's
own length rule), since Inspect's totals need one.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ModelAPI, ModelOutput, ModelUsage, modelapi

from ..data.baselines import BaselineError, baseline_answer, check_baseline
from ..data.text import count_tokens
from ..inspect_compat import running_sample

#: The prompt asks for tagged answers when it names this tag.
ANSWER_TAG = "<ANSWER>"


def answer_format(prompt: str, answer: str) -> str:
    """``answer`` in the format ``prompt`` asks for: tagged when it names the tag."""
    return f"{ANSWER_TAG}{answer}</ANSWER>" if ANSWER_TAG in prompt else answer


def _prompt_text(messages: list[Any]) -> str:
    return "\n".join(message.text for message in messages)


@modelapi(name="baseline")
class BaselineModel(ModelAPI):
    """A model that answers by a baseline's rule: ``baseline/empty``, ``neighbour``, ``context``, ``gold``."""

    def __init__(self, model_name: str, **options: Any):
        """Inspect passes ``base_url``, ``api_key`` and ``config`` (and any ``-M`` model args, which
        a fixed rule has no use for)."""
        inspect_options = {key: options[key] for key in ("base_url", "api_key", "config") if key in options}
        super().__init__(model_name=model_name, **inspect_options)
        self.rule = check_baseline(model_name)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:
        """The rule's answer to the running sample, in the prompt's answer format."""
        state = running_sample()
        if state is None or "n" not in (state.metadata or {}):
            raise BaselineError(
                f"baseline/{self.rule} answers the samples of a narrative_infill task (it reads the problem "
                "and its metadata field 'n'); it was called outside one"
            )
        try:
            answer = baseline_answer(
                self.rule, state.input_text, state.metadata["n"], gold=lambda: state.target.text
            )
        except BaselineError as err:
            raise BaselineError(f"sample {state.sample_id!r}: {err}") from None
        prompt = _prompt_text(input)
        content = answer_format(prompt, answer)
        output = ModelOutput.from_content(model=f"baseline/{self.rule}", content=content)
        prompt_tokens, answer_tokens = count_tokens(prompt), count_tokens(content)
        output.usage = ModelUsage(
            input_tokens=prompt_tokens,
            output_tokens=answer_tokens,
            total_tokens=prompt_tokens + answer_tokens,
        )
        return output

    def max_tokens(self) -> int | None:
        """No default cap of its own: the task's cap applies to models, not to a fixed text."""
        return None
