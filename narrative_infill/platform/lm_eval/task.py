"""The lm-eval task class every narrative_infill YAML names (``class: !function ...task.InfillTask``).

It adds to lm-eval's ``ConfigurableTask`` what YAML cannot say: the prompt rendered by the Inspect
tasks' template code, the paper's per-sample output cap (a user's ``--gen_kwargs max_gen_toks=``
wins), and the extraction-and-scoring filter with the options from ``--metadata``. Only lm-eval
imports this module (the YAML's ``!function``), so it imports lm-eval at the top.
"""

from __future__ import annotations

from typing import Any

from lm_eval.api.task import ConfigurableTask
from lm_eval.filters import build_filter_ensemble

from ...prompts import prompt_template
from .docs import conversation
from .options import HarnessOptions
from .scoring import FILTER_NAME, ExtractAndScore


class InfillTask(ConfigurableTask):
    """One narrative_infill setting as an lm-eval ``generate_until`` task."""

    def __init__(self, config: dict[str, Any] | None = None, **_: Any) -> None:
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        self.options = HarnessOptions.from_metadata(config.get("metadata") or {})
        self.template = prompt_template(self.options.template, self.options.variant)
        if self.options.system_role:  # lm-eval sends the description as the system turn
            config["description"] = self.template.system
        config["metadata"] = {**config["metadata"], **self.options.recorded()}
        super().__init__(config=config)
        scorer = [
            ExtractAndScore,
            {"extraction": self.options.extraction, "backbone": self.options.backbone},
        ]
        self._filters = [build_filter_ensemble(FILTER_NAME, [scorer])]

    def doc_to_text(self, doc: dict[str, Any], doc_to_text: Any = None) -> str:
        """The user turn the Inspect solver sends (the system text leads it unless ``system_role``)."""
        return conversation(self.template, doc, self.options)[-1][1]

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> Any:
        """lm-eval's request, with this document's output cap as ``max_gen_toks``."""
        request = super().construct_requests(doc, ctx, **kwargs)
        user_cap = (self.config.generation_kwargs or {}).get("max_gen_toks")
        request.arguments[1]["max_gen_toks"] = self.options.output_cap(doc["gold_tokens"], user_cap)[0]
        return request
