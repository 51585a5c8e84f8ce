"""Judge prompts as data: the authors' exact prompt, and the paper's version of it.

* ``authors``: what the published code sent. System message = system, evaluation procedure
  and rubric joined by blank lines (the automatic penalties are in the file but were never
  sent), the story's blank called "____" although the data writes "______", an empty
  candidate sent as an empty string.
* ``paper`` (default): the same prompt with the automatic penalties actually included, the
  paper's definitions of the five dimensions (§3.4), the blank written as it appears in
  the story, and an empty candidate shown as explicitly empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml

from ...data.records import BLANK
from ...definitions import DIMENSIONS, OptionError, display_name

VARIANTS = ("paper", "authors")
_AUTHORS_KEY = "narrative_infilling_evaluation_v4"
_AUTHORS_BLANK = '"____"'


@dataclass(frozen=True)
class JudgePrompt:
    variant: str
    system: str
    user_template: str
    empty_candidate: str

    def user(self, story_with_blank: str, candidate_infill: str) -> str:
        candidate = candidate_infill if candidate_infill.strip() else self.empty_candidate
        return self.user_template.format(story_with_blank=story_with_blank, candidate_infill=candidate)


@cache
def _load(name: str) -> dict:
    return yaml.safe_load(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


@cache
def judge_prompt(variant: str = "paper") -> JudgePrompt:
    if variant not in VARIANTS:
        raise OptionError(f"judge prompt variant must be one of {VARIANTS}, got {variant!r}")
    parts = _load("authors_eval_prompt.yaml")[_AUTHORS_KEY]
    if variant == "authors":
        # As gpt_eval.build_api_prompt joined them: each block keeps its trailing newline.
        system = "\n\n".join([parts["system"], parts["evaluation_procedure"], parts["rubric"]])
        return JudgePrompt(variant, system, parts["user"], "")
    additions = _load("paper_additions.yaml")
    blank = f'"{BLANK}"'
    system = "\n\n".join(
        [
            parts["system"],
            parts["evaluation_procedure"].replace(_AUTHORS_BLANK, blank),
            parts["automatic_penalties"],
            additions["dimensions"],
            parts["rubric"],
        ]
    )
    return JudgePrompt(
        variant, system, parts["user"].replace(_AUTHORS_BLANK, blank), additions["empty_candidate"]
    )


@cache
def dimension_definitions() -> list[dict[str, str]]:
    """The five dimensions with the paper's definitions (§3.4), for people rating by hand, in
    ``DIMENSIONS`` order; each definition is found by its name, so the YAML cannot reorder them."""
    entries = [
        line.strip()[2:].split(":", 1)
        for line in _load("paper_additions.yaml")["dimensions"].splitlines()
        if line.strip().startswith("- ")
    ]
    definitions = {name.strip(): text.strip() for name, text in entries}
    return [
        {"key": key, "name": display_name(key), "definition": definitions[display_name(key)]}
        for key in DIMENSIONS
    ]
