"""``lm-eval-tasks``: where lm-evaluation-harness finds this benchmark's tasks."""

from __future__ import annotations

import argparse

from .options import command


def _lm_eval_tasks(args: argparse.Namespace) -> int:
    """print the folder of the lm-eval task files, for lm_eval --include_path

    lm_eval --include_path "$(narrative-infill lm-eval-tasks)" --tasks narrative_infill_l2 ... runs the
    benchmark in lm-evaluation-harness with this package's data, prompts, extraction and metrics
    (docs/lm-eval.md); narrative-infill import reads its --log_samples output into Inspect logs.
    """
    from ..lm_eval import include_path

    print(include_path())
    return 0


def add_commands(commands) -> None:
    command(commands, "lm-eval-tasks", _lm_eval_tasks)
