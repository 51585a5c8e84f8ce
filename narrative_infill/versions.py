"""Task versions in inspect_evals' ``N-X`` form (its TASK_VERSIONING.md): N, the comparability version,
changes when scores change meaning, so logs compare only within one N; X, the interface letter, when
the options change and the scores do not. Logs written before the form record a plain N (versions 1-3)
and read as ``N-A``, so they stay comparable with new logs of their N."""

from __future__ import annotations

import re

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
