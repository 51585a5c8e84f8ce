"""The lm-eval tasks' options: what ``--metadata '{...}'`` sets, as ``-T`` sets them for Inspect.

lm-eval hands a task's ``metadata`` (the YAML's, the user's ``--metadata`` JSON and, merged in by
lm-eval, the ``--model_args``) to the dataset loader and to the task. The options are read from
it by name; lm-eval's own keys (the model's arguments) are left to lm-eval, so a mistyped option
cannot be told from a model argument: ``recorded()`` writes the options in force into the
results file's task config, where a reader sees what ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from ...errors import OptionError
from ...extraction import DEFAULT_EXTRACTION, check_extraction
from ...paper_protocol import CAP_FACTOR, PAPER_PROMPT_VARIANT, SETTINGS, output_cap
from ...prompts import prompt_template


@dataclass(frozen=True)
class HarnessOptions:
    """One lm-eval task's options; the names and defaults of the Inspect tasks' ``-T`` options but
    one: the hub revision is ``data_revision``, since ``revision`` is a model argument of lm-eval's
    hf and vllm backends (and lm-eval merges the model's arguments into the metadata)."""

    template: str
    data: str = "hf"
    data_revision: str | None = None
    subset: str | None = None
    domain: str | list[str] | None = None
    n: int | list[int] | None = None
    position: str | list[str] | None = None
    min_sentences: int | None = None
    max_sentences: int | None = None
    variant: str = PAPER_PROMPT_VARIANT
    system_role: bool = False
    unit: str | None = None
    max_tokens_factor: float = CAP_FACTOR
    backbone: str = "auto"
    extraction: str = DEFAULT_EXTRACTION

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> HarnessOptions:
        """The options in ``metadata`` (other keys are lm-eval's), checked as the Inspect tasks check them."""
        if metadata.get("template") not in SETTINGS:
            raise OptionError(
                f"task metadata: template must be one of {SETTINGS}, got {metadata.get('template')!r}"
            )
        options = cls(**{f.name: metadata[f.name] for f in fields(cls) if f.name in metadata})
        options.check()
        return options

    def check(self) -> None:
        """Refuse values outside their choices, naming the option (the loader checks the data filters)."""
        if type(self.system_role) is not bool:
            raise OptionError(f"system_role must be true or false, got {self.system_role!r}")
        if type(self.max_tokens_factor) not in (int, float) or self.max_tokens_factor <= 0:
            raise OptionError(f"max_tokens_factor must be a positive number, got {self.max_tokens_factor!r}")
        if not isinstance(self.data, str):
            raise OptionError(f"data must be 'hf', 'hf:REPO', 'demo' or a file path, got {self.data!r}")
        prompt_template(self.template, self.variant)  # raises for an unknown variant
        check_extraction(self.extraction)

    def filters(self) -> dict[str, Any]:
        """The data filters, as ``infill_dataset`` takes them."""
        names = ("domain", "n", "position", "min_sentences", "max_sentences")
        return {name: getattr(self, name) for name in names}

    def recorded(self) -> dict[str, Any]:
        """Every option in force, for the task config lm-eval writes into its results file."""
        return asdict(self)

    def output_cap(self, gold_tokens: int, user_cap: int | None) -> tuple[int, str]:
        """(cap, rule) of the Inspect tasks' solver (``paper_protocol.output_cap``)."""
        return output_cap(self.template, gold_tokens, user_cap, self.max_tokens_factor)
