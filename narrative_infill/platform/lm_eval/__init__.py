"""The benchmark as lm-evaluation-harness tasks: the same data loader, prompts, extraction and
metrics as the Inspect tasks, so an lm-eval user gets the same numbers without switching harness.

``tasks/`` holds the task YAML files (``lm_eval --include_path "$(narrative-infill lm-eval-tasks)"``);
they name this room's functions and classes with ``!function``. lm-eval itself is imported only
when lm-eval builds a task (``task.InfillTask``), never by the package's other rooms.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def include_path() -> Path:
    """The folder of task YAML files lm-eval's ``--include_path`` takes."""
    return Path(str(resources.files(__name__) / "tasks"))
