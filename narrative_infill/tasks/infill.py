"""Task definitions. Each task is the same pipeline with a different prompt template."""

from __future__ import annotations

from collections import Counter

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Scorer

# Absolute imports: `inspect eval narrative_infill/tasks/infill.py@l2` loads this file outside its package.
from narrative_infill.data.dataset import infill_dataset, load_benchmark
from narrative_infill.errors import OptionError
from narrative_infill.inspect_compat import shown_by_inspect
from narrative_infill.paper_protocol import (
    CAP_FACTOR,
    PAPER_JUDGE_VARIANT,
    PAPER_PROMPT_VARIANT,
    TEMPERATURE,
    TOP_P,
)
from narrative_infill.scorers.answer import DEFAULT_EXTRACTION
from narrative_infill.scorers.judge.scorer import NOT_RUN_HINT
from narrative_infill.scorers.judge.scorer import judge as judge_scorer
from narrative_infill.scorers.metrics.loading import load_metric_models
from narrative_infill.scorers.metrics.scorer import metrics
from narrative_infill.solvers import generate_infill, infill_prompt
from narrative_infill.task_options import as_list

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
def infill_task(
    template: str,
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """One narrative-infilling task; every argument is a ``-T`` option of the registered tasks.

    Args:
        template: prompt template (l0..l4, abductive, causal, cot, counterfactual).
        data: ``hf`` (the published dataset), ``hf:REPO``, ``demo``, or a local CSV/JSONL/parquet path.
        revision: hub revision (branch, tag or commit) of an ``hf`` source; the published set's
            default is ``PUBLISHED_REVISION`` (data/dataset.py), the pin.
        domain: keep these domains (wikipedia, rocstories, cnn_dailymail, sind; published names accepted).
        n: keep these span lengths (1-3 sentences).
        position: keep these blank positions (opening, middle, closing).
        min_sentences: keep narratives with at least this many sentences.
        max_sentences: keep narratives with at most this many sentences.
        subset: ``10pct``, the authors' stratified robustness subset (seed 42).
        variant: ``paper`` or a published-code variant (``code0``..``code3``; ``code`` for paradigms).
        system_role: send the system text as a system message instead of leading the user turn.
        unit: text of the ``{{unit}}`` slot (default: the record's ``unit`` column).
        max_tokens: a fixed output cap for every sample. ``--max-tokens`` does the same and
            also wins; without either, TELeR levels cap each sample at ``max_tokens_factor``
            x its gold span and the reasoning tasks at ``REASONING_MAX_TOKENS`` (paper_protocol).
        max_tokens_factor: per-sample cap (TELeR levels) as a multiple of the gold span's length.
        backbone: embedding backbones of BERTScore and Sem-F1: ``auto`` (the paper's when
            available, else the packaged MiniLM with a warning), ``paper`` or ``minilm``.
        judge: run the LLM judge; by default it runs when a ``grader`` model role is bound at
            scoring time (however it is bound); ``false`` turns it off, ``true`` requires a grader.
        judge_variant: judge prompt, ``paper`` or ``authors``.
        judge_roles: model role(s) whose models judge (a list, or comma-separated); several make a panel.
        grader_model: a grader to use when no ``grader`` role is bound (implies ``judge``).
        judge_structured: tell the grader the reply's shape: ``auto`` where its provider can be
            constrained, ``on`` (fail for one that cannot), ``off``.
        extraction: the answer both scorers score: ``ours`` (the paper's extraction rules) or
            ``published`` (the authors' released code: first ``<ANSWER>`` span, else the whole response).
    """
    if judge not in (None, True, False):
        raise OptionError(f"judge must be true or false (or left out), got {judge!r}")
    filters = dict(domain=domain, n=n, position=position, min_sentences=min_sentences)
    dataset = infill_dataset(data, revision, subset, **filters, max_sentences=max_sentences)
    scorers = [metrics(backbone=backbone, extraction=extraction)]
    if judge is not False:
        scorers.append(_judge(judge_variant, judge_roles, grader_model, judge_structured, extraction, judge))
    irregularities = Counter(kind for sample in dataset for kind in (sample.metadata or {})["irregularities"])
    return Task(
        dataset=dataset,
        setup=load_metric_models(),  # the metrics' models load while the first samples generate
        solver=[
            infill_prompt(template, variant=variant, system_role=system_role, unit=unit),
            generate_infill(max_tokens=max_tokens, max_tokens_factor=max_tokens_factor, setting=template),
        ],
        scorer=scorers,
        config=GenerateConfig(temperature=TEMPERATURE, top_p=TOP_P),
        version=TASK_VERSION,
        metadata={
            "template": template,
            "prompt_variant": variant,
            "system_role": system_role,
            "data": data,
            "dataset_identity": {**load_benchmark(data, revision).identity, "instances": len(dataset)},
            "data_irregularities": dict(irregularities),
            "judge": _judge_note(judge, judge_variant),
        },
    )


def _judge(variant: str, roles, grader_model, structured, extraction: str, judge: bool | None) -> Scorer:
    """The task's judge, optional unless ``judge`` asks for it. The scorer list is fixed here, but
    roles may be bound later (task_with, eval-set, Inspect Flow): the judge is always listed and
    looks for its grader when it scores (see judge(optional=...))."""
    return judge_scorer(
        variant=variant,
        roles=as_list(roles) or [],
        grader_model=grader_model,
        structured=structured,
        extraction=extraction,
        optional=judge is None,
    )


def _judge_note(judge: bool | None, variant: str) -> str:
    """The log's metadata on the judge: its prompt, or off. Whether it ran is in the samples' scores
    (a grader role can be bound after the task is built), not here."""
    return f"off (judge=false); add it with: {NOT_RUN_HINT}" if judge is False else f"{variant} prompt"


# Nine @task functions, not one registered in a loop: `inspect list tasks`, `inspect eval FILE@l2`, the
# editor extension and inspect-evals-lint find tasks by reading this file for @task definitions, and
# Inspect reads each one's parameters as its -T options (and records their defaults in the log), so
# each lists them; `**locals()` hands exactly those parameters on to infill_task. No Inspect idiom
# shares one options list without hiding them: `**options: Unpack[InfillOptions]` (PEP 692) makes
# Inspect pass any -T on without its "not used by task" warning (task_create reads only named
# parameters) and log no defaults; a `functools.partial` registered with `task(name=...)` is no @task
# definition in this file; rewriting signatures at import is the magic issue 46 took out.
@task
def l0(
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """TELeR level 0 (very low specificity): the problem alone. Options: ``infill_task``."""
    return infill_task("l0", **locals())


@task
def l1(
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """TELeR level 1 (low specificity): a one-line directive. Options: ``infill_task``."""
    return infill_task("l1", **locals())


@task
def l2(
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """TELeR level 2 (moderate specificity): a paragraph of sub-tasks. Options: ``infill_task``."""
    return infill_task("l2", **locals())


@task
def l3(
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """TELeR level 3 (high specificity): a bulleted list of sub-tasks. Options: ``infill_task``."""
    return infill_task("l3", **locals())


@task
def l4(
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """TELeR level 4 (very high specificity): level 3 with few-shot examples. Options: ``infill_task``."""
    return infill_task("l4", **locals())


@task
def abductive(
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """Abductive reasoning guidance: infer the most plausible explanation. Options: ``infill_task``."""
    return infill_task("abductive", **locals())


@task
def causal(
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """Causal reasoning guidance: keep cause-and-effect relationships. Options: ``infill_task``."""
    return infill_task("causal", **locals())


@task
def cot(
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """Chain-of-thought guidance: reason step by step, then fill the blank. Options: ``infill_task``."""
    return infill_task("cot", **locals())


@task
def counterfactual(
    data: str = "hf",
    revision: str | None = None,
    domain: str | list[str] | None = None,
    n: int | list[int] | None = None,
    position: str | list[str] | None = None,
    min_sentences: int | None = None,
    max_sentences: int | None = None,
    subset: str | None = None,
    variant: str = PAPER_PROMPT_VARIANT,
    system_role: bool = False,
    unit: str | None = None,
    max_tokens: int | None = None,
    max_tokens_factor: float = CAP_FACTOR,
    backbone: str = "auto",
    judge: bool | None = None,
    judge_variant: str = PAPER_JUDGE_VARIANT,
    judge_roles: str | list[str] = "grader",
    grader_model: str | None = None,
    judge_structured: str | bool = "auto",
    extraction: str = DEFAULT_EXTRACTION,
) -> Task:
    """Counterfactual guidance: weigh alternative events. Options: ``infill_task``."""
    return infill_task("counterfactual", **locals())
