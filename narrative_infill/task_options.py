"""How the tasks' options and names are read back, the same in every room: an option that takes one
value or several, and the setting a log ran. Imports nothing from the package.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_list(value: Any) -> list[Any] | None:
    """An option that takes one value or several, as a list (None when not given): a comma string
    splits (``-T domain=a,b``, ``-T judge_roles=grader,grader2``), a YAML list stays a list."""
    if value is None:
        return None
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple, set)):
        return list(value)
    return [value]


def setting_name(metadata: Mapping[str, Any] | None, task_name: str) -> str:
    """A log's setting: its task's ``template`` metadata, else the registered task name's last part."""
    return (metadata or {}).get("template") or str(task_name).split("/")[-1]
