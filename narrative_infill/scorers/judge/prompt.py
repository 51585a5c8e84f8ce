"""Judge prompts as data: the authors' exact prompt, and the paper's version of it.

* ``authors``: what the published code sent. System message = system, evaluation procedure
  and rubric joined by blank lines (the automatic penalties are in the file but were never
  sent), the story's blank called "____" although the data writes "______", an empty
  candidate sent as an empty string.
* ``paper`` (default): the same prompt with the automatic penalties actually included, the
  paper's definitions of the five dimensions (§3.4), the blank written as it appears in
  the story, an empty candidate shown as explicitly empty, and the candidate as data: sent
  between ``<candidate_infill>`` markers it cannot close (every ``<`` of it, and its
  full-width and small forms, is escaped as ``&lt;``), under a heading telling the judge that
  whatever is inside is text to grade, never instructions.

The ``authors`` variant pastes the candidate raw between ``CANDIDATE INFILL:`` and
``INSTRUCTIONS:``, as their code did: a candidate can write instructions to the judge there
(docs/judge.md shows one). It stays verbatim, for reproducing the authors' numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml

from ...data.records import BLANK
from ...errors import NarrativeInfillError
from ...paper_protocol import DIMENSIONS, display_name

_AUTHORS_KEY = "narrative_infilling_evaluation_v4"
_AUTHORS_BLANK = '"____"'
_AUTHORS_CANDIDATE = "CANDIDATE INFILL:\n{candidate_infill}\n"
#: A "<" that could open or close the candidate block: every "<" and its full-width and small forms,
#: whatever follows. Escaping only a "<" followed by "candidate" let "</cand\u200bidate_infill>", a
#: Cyrillic "е" for the "e" or "＜/candidate_infill＞" through: each reads as the marker to a model.
_MARKER_START = re.compile("[<\uff1c\ufe64]")


class JudgePromptError(NarrativeInfillError, RuntimeError):
    """The packaged prompt files do not fit together (a mended YAML lost a part the code replaces)."""


@dataclass(frozen=True)
class JudgePrompt:
    """A judge variant's system message and user template (``rubric.JUDGE_VARIANTS`` names them)."""

    system: str
    user_template: str
    empty_candidate: str
    #: the candidate sits in a block it cannot close (the paper variant), else it is pasted raw
    delimited: bool = False

    def user(self, story_with_blank: str, candidate_infill: str) -> str:
        candidate = candidate_infill if candidate_infill.strip() else self.empty_candidate
        if self.delimited:
            candidate = _MARKER_START.sub("&lt;", candidate)
        return self.user_template.format(story_with_blank=story_with_blank, candidate_infill=candidate)


@cache
def _load(name: str) -> dict:
    """One of the packaged prompt YAML files."""
    return yaml.safe_load(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


@cache
def authors_prompt() -> JudgePrompt:
    """The ``authors`` variant: what the published code sent (see the module docstring)."""
    parts = _load("authors_eval_prompt.yaml")[_AUTHORS_KEY]
    # As gpt_eval.build_api_prompt joined them: each block keeps its trailing newline.
    system = "\n\n".join([parts["system"], parts["evaluation_procedure"], parts["rubric"]])
    return JudgePrompt(system, parts["user"], "")


@cache
def paper_prompt() -> JudgePrompt:
    """The ``paper`` variant: the authors' prompt as the paper describes it (see the module docstring)."""
    parts = _load("authors_eval_prompt.yaml")[_AUTHORS_KEY]
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
    user = parts["user"].replace(_AUTHORS_BLANK, blank)
    if _AUTHORS_CANDIDATE not in user:
        raise JudgePromptError("the authors' user prompt has no 'CANDIDATE INFILL:' line to delimit")
    user = user.replace(_AUTHORS_CANDIDATE, additions["candidate_block"])
    return JudgePrompt(system, user, additions["empty_candidate"], delimited=True)


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
