"""The shape of the judge's reply, and how each provider is told to keep to it.

The judge asks for one JSON object: its variant's dimensions (the paper's five), each an integer 1-5,
no other keys.
The range is an enum, not minimum/maximum: Inspect strips those for OpenAI-compatible
providers. Three paths:

* ``schema``: Inspect's ``response_schema``, which these providers pass on as a constraint
  (OpenAI and the OpenAI-compatible servers that honour ``json_schema``, vLLM among them,
  Anthropic, Google, Mistral...);
* ``grammar``: llama-cpp-python's server, which answers HTTP 500 to ``json_schema`` but turns
  ``{"type": "json_object", "schema": ...}`` into a grammar; sent through ``extra_body``;
* ``none``: providers that ignore schemas (``hf``, unknown endpoints): the tolerant parser
  and its retries.
"""

from __future__ import annotations

from inspect_ai.model import GenerateConfig, ResponseSchema
from inspect_ai.util import JSONSchema

from ...errors import NarrativeInfillError, OptionError
from ...paper_protocol import DIMENSIONS, reply_key

SCORES = [1, 2, 3, 4, 5]


def reply_schema(dimensions: tuple[str, ...] = DIMENSIONS) -> JSONSchema:
    """The verdict's shape: each of the variant's dimensions under the authors' output key, an
    integer 1-5, no other keys."""
    keys = [reply_key(d) for d in dimensions]
    return JSONSchema(
        type="object",
        properties={key: JSONSchema(type="integer", enum=SCORES) for key in keys},
        required=keys,
        additionalProperties=False,
    )


#: Providers whose Inspect model API turns ``response_schema`` into a constrained reply.
_HOSTED = ("openai", "azureai", "anthropic", "google", "vertex", "mistral", "grok", "groq", "together")
_SERVED = ("fireworks", "deepseek", "openrouter", "bedrock", "ollama", "vllm", "sglang")
SCHEMA_PROVIDERS = frozenset(_HOSTED + _SERVED)
GRAMMAR_PROVIDERS = frozenset({"llama-cpp-python"})
MODES = ("auto", "on", "off")


def structured_mode(value: str | bool) -> str:
    """``auto``, ``on`` or ``off``; booleans too, since ``-T judge_structured=off`` arrives as
    False (YAML reads on/off as booleans)."""
    mode = {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else str(value).lower()
    if mode not in MODES:
        raise OptionError(f"structured must be one of {MODES}, got {value!r}")
    return mode


class StructuredOutputUnavailable(NarrativeInfillError, RuntimeError):
    """``structured="on"`` with a grader whose provider cannot be constrained."""


def provider_of(model_name: str) -> str:
    return model_name.split("/", 1)[0]


def reply_constraint(model_name: str, mode: str, schema_of_reply: JSONSchema) -> tuple[str, GenerateConfig]:
    """(path, config to merge into the grader call) for a grader ``provider/model`` asked for a
    reply of the judge variant's shape (``JudgeVariant.reply_schema``)."""
    mode = structured_mode(mode)
    provider = provider_of(model_name)
    if mode == "off":
        return "none", GenerateConfig()
    if provider in GRAMMAR_PROVIDERS:
        schema = schema_of_reply.model_dump(exclude_none=True)
        return "grammar", GenerateConfig(
            extra_body={"response_format": {"type": "json_object", "schema": schema}}
        )
    if provider in SCHEMA_PROVIDERS:
        return "schema", GenerateConfig(
            response_schema=ResponseSchema(name="judgement", json_schema=schema_of_reply, strict=True)
        )
    if mode == "on":
        raise StructuredOutputUnavailable(
            f"structured=on, but the grader {model_name} cannot be told the reply's shape (its provider "
            f"{provider!r} ignores response schemas); use structured=auto to fall back to parsing"
        )
    return "none", GenerateConfig()
