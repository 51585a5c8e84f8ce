"""Test helpers: paths of the read-only ../shared data and offline mock models."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BENCHMARK_CSV = SHARED / "data" / "benchmark" / "sample_10pct_head.csv"
APPENDIX_B = SHARED / "paper" / "appendix-b-prompts.md"
REFERENCE_MD = SHARED / "reference" / "REFERENCE.md"


def mock_output(text: str) -> ModelOutput:
    """A mock completion with usage filled in, so Inspect never asks tiktoken (a download) to count."""
    output = ModelOutput.from_content(model="mockllm", content=text)
    output.usage = ModelUsage(
        input_tokens=100, output_tokens=max(1, len(text.split())), total_tokens=100 + len(text.split())
    )
    return output


def mock_model(respond: Callable[[list[ChatMessage], GenerateConfig], str | ModelOutput], **model_args):
    """``mockllm/model`` answering with ``respond(messages, config)`` (text, or a whole output)."""

    def outputs(messages, tools, tool_choice, config):
        reply = respond(messages, config)
        return reply if isinstance(reply, ModelOutput) else mock_output(reply)

    return get_model("mockllm/model", custom_outputs=outputs, **model_args)
