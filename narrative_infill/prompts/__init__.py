"""Prompt templates (kept as data in ``templates.yaml``) and their slot filling."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from ..errors import OptionError
from ..paper_protocol import PAPER_PROMPT_VARIANT

_SLOT = re.compile(r"\{\{\s*(.*?)\s*\}\}")


@dataclass(frozen=True)
class PromptTemplate:
    task: str
    variant: str
    system: str
    user: str

    def render(self, slots: Mapping[str, Any]) -> str:
        return fill_slots(self.user, slots)

    def conversation(self, slots: Mapping[str, Any], system_role: bool = False) -> list[tuple[str, str]]:
        """The (role, text) turns a model is sent, the same in every harness (Inspect's solver,
        the lm-eval tasks): the system text as its own turn, or leading the user turn as
        ``f"{system}\\n\\n{prompt}"`` (the authors' fallback for chat templates without a system role)."""
        prompt = self.render(slots)
        if system_role:
            return [("system", self.system), ("user", prompt)]
        return [("user", f"{self.system}\n\n{prompt}")]


def fill_slots(template: str, slots: Mapping[str, Any]) -> str:
    """Replace ``{{name}}`` slots like the authors' ``replace_slots``: unknown names stay as written."""
    return _SLOT.sub(lambda m: str(slots[m.group(1)]) if m.group(1) in slots else m.group(0), template)


@cache
def _templates() -> dict[str, Any]:
    text = (resources.files(__name__) / "templates.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def variants(task: str) -> list[str]:
    tasks = _templates()["tasks"]
    if task not in tasks:
        raise OptionError(f"unknown task {task!r}; available: {', '.join(tasks)}")
    return list(tasks[task])


def prompt_template(task: str, variant: str = PAPER_PROMPT_VARIANT) -> PromptTemplate:
    """The user template of ``task`` in ``variant`` with its matching system text.

    The paper's variant uses the paper's system message; the code's variants use the code's
    (identical but for the final period).
    """
    available = variants(task)
    if variant not in available:
        raise OptionError(
            f"task {task!r} has no prompt variant {variant!r}; available: {', '.join(available)}"
        )
    system = _templates()["system"][PAPER_PROMPT_VARIANT if variant == PAPER_PROMPT_VARIANT else "code"]
    return PromptTemplate(
        task=task, variant=variant, system=system, user=_templates()["tasks"][task][variant]
    )
