"""How the tasks' options, names and versions are read back, the same in every room: an option that
takes one value or several, the setting a log ran, and its task version in inspect_evals' ``N-X`` form
(its TASK_VERSIONING.md): N, the comparability version, changes when scores change meaning, so logs
compare only within one N; X, the interface letter, when only the options change. Logs written before
the form record a plain N (versions 1-3) and read as ``N-A``, so they compare with new logs of their N.
Imports nothing from the package.
"""

from __future__ import annotations

import re
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


_FORM = re.compile(r"(\d+)(?:-([A-Z]))?")


def version_parts(version: int | str) -> tuple[int, str]:
    """(N, X) of a task version as a log records it; ValueError naming it when it is neither ``N-X``
    nor a plain N."""
    match = None if isinstance(version, bool) else _FORM.fullmatch(str(version).strip())
    if match is None:
        raise ValueError(f"task version {version!r} is neither N-X (such as 3-A) nor a plain N")
    return int(match.group(1)), match.group(2) or "A"


def comparability(version: int | str) -> str:
    """What two logs' versions must share for their scores to compare: N, or the version itself as
    text where it has no N (it then matches only itself)."""
    try:
        return str(version_parts(version)[0])
    except ValueError:
        return repr(version)
