"""Imported generations replayed as a model's output: the ``replay`` provider and its solver.

``narrative-infill import`` runs each (model, task) group of stored responses as an Inspect task
whose solver puts the stored response in the output, under the model name
``replay/<original model>``; the provider stands in for that model and never generates. Here, not
in the importer, so that Inspect's entry point registers them without importing analysis code.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver


@modelapi(name="replay")
class ReplayModel(ModelAPI):
    """Stands in for the model that produced imported outputs; it never generates."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's ModelAPI signature)
        **model_args: Any,
    ):
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)

    async def generate(self, input, tools, tool_choice, config):
        raise RuntimeError(
            f"replay/{self.model_name} only replays imported outputs; to generate, run the package's tasks "
            f"with a real model"
        )


@solver
def replay_output() -> Solver:
    """Put the stored prompt and response in the conversation and the response in ``state.output``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        prompt, response = state.metadata["original_prompt"], state.metadata["original_response"]
        state.messages = [
            ChatMessageUser(content=prompt),
            ChatMessageAssistant(content=response, model=str(state.model)),
        ]
        state.output = ModelOutput.from_content(model=str(state.model), content=response)
        return state

    return solve
