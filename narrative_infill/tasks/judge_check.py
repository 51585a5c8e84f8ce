"""Judge sanity baselines: ``narrative_infill/judge_check`` and ``narrative-infill judge-check``.

Fixed answers any judge must separate: the gold span itself, and three probes: an empty answer,
a copy of the story around the blank (``context``) and a copy of the sentences next to it
(``neighbour``), the null baselines' rules (``data.baselines``). Each of N instances is judged
with all four; a grader whose QAvg gap between the gold and any probe is small cannot tell a
right infill from none or from a copy, and is flagged (naming the probes it fails) before
anyone spends a full run on it. No model is evaluated: the answers are put in place of a
model's output, and reach the judge whole (the ``published`` extraction: the whole response,
since the package's own rules would strip a copy of the context to nothing).
"""

from __future__ import annotations

import math
from statistics import fmean

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from narrative_infill.data.baselines import baseline_answer
from narrative_infill.data.dataset import infill_dataset
from narrative_infill.errors import OptionError
from narrative_infill.inspect_compat import shown_by_inspect
from narrative_infill.paper_protocol import PAPER_JUDGE_VARIANT
from narrative_infill.scorers.judge.scorer import judge

BASELINES = ("gold", "empty", "context", "neighbour")
#: The answers the gold must beat.
PROBES = BASELINES[1:]
#: The smallest QAvg gap (1-5 scale) between the gold and each probe a usable judge shows.
MIN_GAP = 1.0


@solver
def fixed_answer() -> Solver:
    """The sample's baseline answer as the output: the gold span, nothing, or a copy (``data.baselines``)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        answer = baseline_answer(
            state.metadata["baseline"], state.input_text, state.metadata["n"], gold=lambda: state.target.text
        )
        state.output = ModelOutput.from_content(model="baseline", content=answer)
        return state

    return solve


@task
@shown_by_inspect
def judge_check(
    data: str = "demo",
    instances: int = 12,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    judge_structured: str = "auto",
) -> Task:
    """The gold span and the probes (empty, context, neighbour) for each of the first ``instances``
    instances, judged.

    Args:
        data: the instances (as the tasks' ``-T data``).
        instances: how many instances (each judged four times).
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
        scorer=judge(
            variant=judge_variant, roles=judge_roles, structured=judge_structured, extraction="published"
        ),
        model="none/none",
        metadata={"data": data, "instances": instances},
    )


def summarize(log) -> dict[str, float]:
    """QAvg and the unscored share per baseline, and the gap between the gold and each probe
    (``gap`` is the gold minus the empty answer, ``gap_<probe>`` each probe's)."""
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
    for probe in PROBES:
        figures[f"gap_{probe}"] = figures["qavg_gold"] - figures[f"qavg_{probe}"]
    figures["gap"] = figures["gap_empty"]
    return figures


def describe(log, min_gap: float = MIN_GAP) -> tuple[str, bool]:
    """(what ``judge-check`` prints, whether the grader is flagged: any probe within ``min_gap`` of
    the gold, or unscored)."""
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
    for probe in PROBES:
        lines.append(
            f"  gap    {figures[f'gap_{probe}']:.2f} (gold minus {probe}; at least {min_gap:.1f} expected)"
        )
    failed = [p for p in PROBES if math.isnan(figures[f"gap_{p}"]) or figures[f"gap_{p}"] < min_gap]
    if failed:
        lines.append(
            f"FLAGGED: this grader cannot tell the gold span from the {', '.join(failed)} probe"
            f"{'s' if len(failed) > 1 else ''} (gap below {min_gap:.1f}); do not spend a run on it."
        )
    return "\n".join(lines), bool(failed)
