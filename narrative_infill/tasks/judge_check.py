"""Judge sanity baselines: ``narrative_infill/judge_check`` and ``narrative-infill judge-check``.

Two fixed answers any judge must separate: the gold span itself and an empty answer. Each of N
instances is judged with both; a grader whose QAvg gap (gold minus empty) is small cannot tell
a right infill from none, and is flagged before anyone spends a full run on it. No model is
evaluated: the answers are put in place of a model's output.
"""

from __future__ import annotations

import math
from statistics import fmean

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from narrative_infill.data.dataset import infill_dataset
from narrative_infill.definitions import OptionError
from narrative_infill.inspect_compat import shown_by_inspect
from narrative_infill.scorers.judge.scorer import judge

BASELINES = ("gold", "empty")
#: The smallest QAvg gap (1-5 scale) between the gold and the empty answer a usable judge shows.
MIN_GAP = 1.0


@solver
def fixed_answer() -> Solver:
    """The sample's baseline answer as the output: the gold span, or nothing."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        answer = state.target.text if state.metadata["baseline"] == "gold" else ""
        state.output = ModelOutput.from_content(model="baseline", content=answer)
        return state

    return solve


@task
@shown_by_inspect
def judge_check(
    data: str = "demo",
    instances: int = 12,
    judge_variant: str = "paper",
    judge_roles: str | list[str] = "grader",
    judge_structured: str = "auto",
) -> Task:
    """The gold span and an empty answer to each of the first ``instances`` instances, judged.

    Args:
        data: the instances (as the tasks' ``-T data``).
        instances: how many instances (each judged twice).
        judge_variant: judge prompt, ``paper`` or ``authors``.
        judge_roles: model role(s) whose models judge.
        judge_structured: the judge's ``structured`` option (auto, on, off).
    """
    if type(instances) is not int or instances < 1:
        raise OptionError(f"instances must be a whole number from 1, got {instances!r}")
    samples = []
    for sample in list(infill_dataset(data))[:instances]:
        for baseline in BASELINES:
            samples.append(
                sample.model_copy(
                    update={
                        "id": f"{sample.id}-{baseline}",
                        "metadata": {**(sample.metadata or {}), "baseline": baseline},
                    }
                )
            )
    return Task(
        dataset=MemoryDataset(samples, name="judge_check"),
        solver=fixed_answer(),
        scorer=judge(variant=judge_variant, roles=judge_roles, structured=judge_structured),
        model="none/none",
        metadata={"data": data, "instances": instances},
    )


def summarize(log) -> dict[str, float]:
    """QAvg and the unscored share per baseline, and the gap between them."""
    figures: dict[str, float] = {}
    for baseline in BASELINES:
        values = [
            s.scores["judge"].value["qavg"]
            for s in log.samples
            if s.metadata["baseline"] == baseline and s.scores
        ]
        scored = [v for v in values if not math.isnan(v)]
        figures[f"qavg_{baseline}"] = fmean(scored) if scored else math.nan
        figures[f"unscored_{baseline}"] = 1 - len(scored) / len(values) if values else math.nan
    figures["gap"] = figures["qavg_gold"] - figures["qavg_empty"]
    return figures


def describe(log, min_gap: float = MIN_GAP) -> tuple[str, bool]:
    """(what ``judge-check`` prints, whether the grader is flagged)."""
    figures = summarize(log)
    instances = (log.eval.metadata or {}).get("instances")
    lines = [
        f"judge-check on {instances} instances of {(log.eval.metadata or {}).get('data')} ({log.location}):"
    ]
    for baseline in BASELINES:
        lines.append(
            f"  {baseline:<5}  QAvg {figures[f'qavg_{baseline}']:.2f}  unscored "
            f"{figures[f'unscored_{baseline}']:.0%}"
        )
    lines.append(f"  gap    {figures['gap']:.2f} (gold minus empty; at least {min_gap:.1f} expected)")
    flagged = math.isnan(figures["gap"]) or figures["gap"] < min_gap
    if flagged:
        lines.append(
            "FLAGGED: this grader cannot tell the gold span from an empty answer; do not spend a run on it."
        )
    return "\n".join(lines), flagged
