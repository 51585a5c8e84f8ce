"""The lm-eval tasks' options: what ``--metadata '{...}'`` sets, as ``-T`` sets them for Inspect.

lm-eval hands a task's ``metadata`` (the YAML's, the user's ``--metadata`` JSON and, merged in by
lm-eval, the ``--model_args``) to the dataset loader and to the task. The options are read from
it by name; lm-eval's own keys (the model's arguments) are left to lm-eval, so a mistyped option
cannot be told from a model argument: ``recorded()`` writes the options in force into the
results file's task config, where a reader sees what ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import OptionError
from ...extraction import check_extraction
from ...paper_protocol import SETTINGS, output_cap
from ...prompts import prompt_template
from ...tasks.options import InfillOptions, option_names

#: The Inspect tasks' options lm-eval takes: not the judge's (lm-eval runs no grader), nor
#: ``max_tokens`` (lm-eval's own ``--gen_kwargs max_gen_toks=`` is the user's cap).
HARNESS_OPTIONS = tuple(
    name
    for name in option_names()
    if name != "max_tokens" and not name.startswith("judge") and name != "grader_model"
)
#: The metadata key of an option whose name lm-eval already uses: ``revision`` is a model argument
#: of lm-eval's hf and vllm backends (and lm-eval merges the model's arguments into the metadata).
METADATA_KEYS = {name: "data_revision" if name == "revision" else name for name in HARNESS_OPTIONS}


@dataclass(frozen=True, kw_only=True)
class HarnessOptions(InfillOptions):
    """One lm-eval task's options: its template and the Inspect tasks' options (``HARNESS_OPTIONS``
    of them are read; the others keep their defaults)."""

    template: str

    def __post_init__(self) -> None:
        """The Inspect tasks' checks, the template, its prompt variant and the extraction rule."""
        if self.template not in SETTINGS:
            raise OptionError(f"task metadata: template must be one of {SETTINGS}, got {self.template!r}")
        super().__post_init__()
        prompt_template(self.template, self.variant)  # raises for an unknown variant
        check_extraction(self.extraction)

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> HarnessOptions:
        """The options in ``metadata`` (other keys are lm-eval's), checked as the Inspect tasks check them."""
        given = {name: metadata[key] for name, key in METADATA_KEYS.items() if key in metadata}
        return cls(template=metadata.get("template", ""), **given)

    def recorded(self) -> dict[str, Any]:
        """Every option in force, under its metadata key, for the task config lm-eval writes into
        its results file."""
        return {"template": self.template} | {key: getattr(self, name) for name, key in METADATA_KEYS.items()}

    def output_cap(self, gold_tokens: int, user_cap: int | None) -> tuple[int, str]:
        """(cap, rule) of the Inspect tasks' solver (``paper_protocol.output_cap``)."""
        return output_cap(self.template, gold_tokens, user_cap, self.max_tokens_factor)
