"""The nine infilling tasks: one pipeline (``infill_task``), a different prompt template each, the
same ``-T`` options (``tasks.options.InfillOptions``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Scorer

# Absolute imports: `inspect eval narrative_infill/tasks/infill.py@l2` loads this file outside its package.
from narrative_infill.data.dataset import infill_dataset, load_benchmark
from narrative_infill.inspect_compat import shown_by_inspect
from narrative_infill.paper_protocol import TEMPERATURE, TOP_P
from narrative_infill.scorers.judge.scorer import NOT_RUN_HINT
from narrative_infill.scorers.judge.scorer import judge as judge_scorer
from narrative_infill.scorers.metrics.loading import load_metric_models
from narrative_infill.scorers.metrics.scorer import metrics
from narrative_infill.solvers import generate_infill, infill_prompt
from narrative_infill.task_options import as_list
from narrative_infill.tasks.options import InfillOptions, takes_infill_options

#: The tasks' version, its one home (every log records it as Inspect's task_version; the lm-eval task
#: files restate it, tests/platform/test_eval_yaml.py holds them to it). Bumped whenever prompts, extraction
#: or scoring change what a score means, so that logs of different versions are never compared as
#: equals. 1: the authors' position rule on the problem text, the output-cap rule (user cap wins,
#: 4,096 for reasoning), the truncated flag, the second extraction pass (prompt echoes, whole
#: sentences). 2: a tagged answer is kept whole (no restated closing sentence dropped); the
#: ``extraction`` option. 3: the paper judge sees the candidate inside a block it cannot close, told
#: it is text to grade (QAvg of version 2 logs is not comparable); a grader reply with two verdicts
#: or a quoted one is retried. In inspect_evals' N-X form (``task_options``): N as above, X the interface
#: letter; a log of a plain 3 is 3-A.
TASK_VERSION = "3-A"


@shown_by_inspect
def infill_task(template: str, **options: Any) -> Task:
    """One narrative-infilling task with the prompt ``template`` (l0..l4, abductive, causal, cot,
    counterfactual); ``options`` are ``InfillOptions``' fields (the ``-T`` options), the rest default."""
    chosen = InfillOptions.given(options)
    dataset = infill_dataset(chosen.data, chosen.revision, chosen.subset, **chosen.filters())
    scorers = [metrics(backbone=chosen.backbone, extraction=chosen.extraction)]
    if chosen.judge is not False:
        scorers.append(_judge(chosen))
    identity = load_benchmark(chosen.data, chosen.revision).identity
    irregularities = Counter(kind for sample in dataset for kind in (sample.metadata or {})["irregularities"])
    return Task(
        dataset=dataset,
        setup=load_metric_models(),  # the metrics' models load while the first samples generate
        solver=[
            infill_prompt(template, variant=chosen.variant, system_role=chosen.system_role, unit=chosen.unit),
            generate_infill(max_tokens_factor=chosen.max_tokens_factor, template=template),
        ],
        scorer=scorers,
        # -T max_tokens is the task's cap: Inspect's --max-tokens (the eval's config) wins over it
        config=GenerateConfig(temperature=TEMPERATURE, top_p=TOP_P, max_tokens=chosen.max_tokens),
        version=TASK_VERSION,
        metadata={
            "template": template,
            "prompt_variant": chosen.variant,
            "system_role": chosen.system_role,
            "data": chosen.data,
            "dataset_identity": {**identity, "instances": len(dataset)},
            "data_irregularities": dict(irregularities),
            "judge": _judge_note(chosen),
        },
    )


def _judge(options: InfillOptions) -> Scorer:
    """The task's judge, optional unless ``judge`` asks for it. The scorer list is fixed here, but
    roles may be bound later (task_with, eval-set, Inspect Flow): the judge is always listed and
    looks for its grader when it scores (see judge(optional=...))."""
    return judge_scorer(
        variant=options.judge_variant,
        roles=as_list(options.judge_roles) or [],
        grader_model=options.grader_model,
        structured=options.judge_structured,
        extraction=options.extraction,
        optional=options.judge is None,
    )


def _judge_note(options: InfillOptions) -> str:
    """The log's metadata on the judge: its prompt, or off. Whether it ran is in the samples' scores
    (a grader role can be bound after the task is built), not here."""
    if options.judge is False:
        return f"off (judge=false); add it with: {NOT_RUN_HINT}"
    return f"{options.judge_variant} prompt"


# Nine @task functions, not one registered in a loop: `inspect list tasks`, `inspect eval FILE@l2`, the
# editor extension and inspect-evals-lint find tasks by reading this file for @task definitions.
# Each takes InfillOptions' fields as its -T options (takes_infill_options says why so).


@task
@takes_infill_options
def l0(**options: Any) -> Task:
    """TELeR level 0 (very low specificity): the problem alone."""
    return infill_task("l0", **options)


@task
@takes_infill_options
def l1(**options: Any) -> Task:
    """TELeR level 1 (low specificity): a one-line directive."""
    return infill_task("l1", **options)


@task
@takes_infill_options
def l2(**options: Any) -> Task:
    """TELeR level 2 (moderate specificity): a paragraph of sub-tasks."""
    return infill_task("l2", **options)


@task
@takes_infill_options
def l3(**options: Any) -> Task:
    """TELeR level 3 (high specificity): a bulleted list of sub-tasks."""
    return infill_task("l3", **options)


@task
@takes_infill_options
def l4(**options: Any) -> Task:
    """TELeR level 4 (very high specificity): level 3 with few-shot examples."""
    return infill_task("l4", **options)


@task
@takes_infill_options
def abductive(**options: Any) -> Task:
    """Abductive reasoning guidance: infer the most plausible explanation."""
    return infill_task("abductive", **options)


@task
@takes_infill_options
def causal(**options: Any) -> Task:
    """Causal reasoning guidance: keep cause-and-effect relationships."""
    return infill_task("causal", **options)


@task
@takes_infill_options
def cot(**options: Any) -> Task:
    """Chain-of-thought guidance: reason step by step, then fill the blank."""
    return infill_task("cot", **options)


@task
@takes_infill_options
def counterfactual(**options: Any) -> Task:
    """Counterfactual guidance: weigh alternative events."""
    return infill_task("counterfactual", **options)
