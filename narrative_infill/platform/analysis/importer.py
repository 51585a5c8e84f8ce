"""Import existing generations (the authors' pipeline outputs, or any JSONL/CSV/xlsx with the
same fields) into Inspect ``.eval`` logs, one per (model, task). The rows are read and validated
first (:mod:`.import_rows`): a bad one is refused with its file, row and field.

Mechanism: each (model, task) group becomes an Inspect task whose solver replays the stored
response as the model's output, run with the model name ``replay/<original model>``
(``solvers.replay``). The ``replay`` provider never generates (it raises if asked to). The
logs are ordinary Inspect logs: they open in ``inspect view``, ``inspect score`` rescores them with
``narrative_infill/metrics`` or ``narrative_infill/judge``, and the sample input is the
problem (as in the package's own tasks) while the conversation holds the original prompt.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Scorer

from ...data.atomic import atomic_dir
from ...data.narrative import NARRATIVE, record_narrative, story_of
from ...data.records import blank_index, breakdown_fields
from ...errors import NarrativeInfillError, OptionError
from ...inspect_compat import add_samples, replayed_sample
from ...number_rules import is_missing
from ...solvers.replay import replay_output
from .import_rows import ImportedRow, integer_field, read_generations, sample_id, text_field


class ImportTargetError(NarrativeInfillError, ValueError):
    """The output folder would mix new logs with old ones."""


def _gold(record: dict[str, Any]) -> str:
    # read_generations has checked that the problem and one of the gold fields are present
    return text_field(record.get("gold_answer")) or str(record["answer"])


def _sample(item: ImportedRow) -> Sample:
    record = item.record
    gold = _gold(record)
    known = {"problem", "response", "gold_answer", "answer", "prompt_text", "model"}
    extra = {k: (None if is_missing(v) else v) for k, v in record.items() if k not in known}
    metadata = {
        **extra,
        "original_prompt": text_field(record.get("prompt_text")) or text_field(record["problem"]),
        "original_response": text_field(record["response"]),
        "imported_from": f"{item.origin}:{item.row}",
        "template": item.task,
        "prompt_variant": item.variant,
        "n": span_sentences(record, gold),
    }
    metadata[NARRATIVE] = record_narrative(record, str(record["problem"]), gold)
    return Sample(
        id=sample_id(record, item.origin, item.row),
        input=str(record["problem"]),
        target=gold,
        metadata=_with_breakdowns(metadata, str(record["problem"]), gold),
    )


def span_sentences(record: dict[str, Any], gold: str) -> int:
    """The row's ``n``, else its gold's sentence count (the shared outputs give none; where their
    prompt states the span, the count agrees in all 4,608 rows, tests/platform/test_importer.py)."""
    from ...data.text import split_sentences

    return integer_field(record.get("n")) or max(1, len(split_sentences(gold, "prose")))


def _with_breakdowns(metadata: dict[str, Any], problem: str, gold: str) -> dict[str, Any]:
    """The blank position and narrative length a task's own sample gets (``data.records.breakdown_fields``),
    and the domain where the row names its ``dataset`` (no text says it), so the viewer's and the
    report's breakdowns cover imported generations: the blank's place is the row's ``unit_idx``,
    else the sentences before ``______``; the narrative its ``source_text``, else the story its
    problem and gold rebuild. A field the row gives itself is kept."""
    dataset = (text_field(metadata.get("dataset")) or "").strip()  # blank: no source, as for the key
    unit_idx = integer_field(metadata.get("unit_idx"))
    if unit_idx is None or unit_idx < 0:
        unit_idx = blank_index(problem)
    narrative = text_field(metadata.get("source_text")) or story_of(problem, gold)
    derived = breakdown_fields(dataset, unit_idx, problem, narrative)
    if not dataset:
        del derived["domain"]
    return {**metadata, **{k: v for k, v in derived.items() if is_missing(metadata.get(k))}}


def _groups(rows: list[ImportedRow]) -> dict[tuple[str, str], list[ImportedRow]]:
    """The rows of each log: (the model it names, task) -> rows."""
    groups: dict[tuple[str, str], list[ImportedRow]] = defaultdict(list)
    for row in rows:
        groups[(row.log_model, row.task)].append(row)
    return groups


def baseline_rows(rows: list[ImportedRow], rules: list[str]) -> list[ImportedRow]:
    """Each null baseline's answers to the imported instances: per task, one row per distinct
    instance (problem and gold), answered by the rule (``data.baselines``) in the answer format of
    the prompt the models were given (``solvers.baseline_model``), as ``--model baseline/<rule>``
    answers the package's tasks. ``n`` is the row's, else the gold's sentence count."""
    from ...data.baselines import baseline_answer, check_baseline
    from ...solvers.baseline_model import ANSWER_TAG, answer_format

    # an instance per format too: where prompts of one setting differ in asking for tags, each is answered
    instances: dict[tuple[str, str, str, bool], ImportedRow] = {}
    for row in rows:
        problem, gold = str(row.record["problem"]), _gold(row.record)
        prompt = text_field(row.record.get("prompt_text")) or problem
        instances.setdefault((row.task, problem, gold, ANSWER_TAG in prompt), row)
    answered = []
    for rule in map(check_baseline, rules):
        for (_, problem, gold, _), row in instances.items():
            n = span_sentences(row.record, gold)
            prompt = text_field(row.record.get("prompt_text")) or problem
            answer = baseline_answer(rule, problem, n, gold=partial(str, gold))
            record = {
                **row.record,
                "n": n,
                "response": answer_format(prompt, answer),
                "model": f"baseline/{rule}",
            }
            answered.append(replace(row, record=record, answered_by=f"baseline/{rule}"))
    return answered


def imported_task(log_model: str, task_name: str, items: list[ImportedRow]) -> Task:
    """The Inspect task replaying ``items`` as the outputs of ``log_model`` (``replay/<model>``,
    or ``baseline/<rule>``)."""
    from inspect_ai.model import get_model

    return Task(
        name=f"narrative_infill/{task_name}",
        dataset=MemoryDataset([_sample(item) for item in items], name="imported"),
        solver=replay_output(),
        model=get_model(log_model),
        metadata={"template": task_name, "imported": True, "sources": sorted({i.origin for i in items})},
    )


def _replayed_sample(item: ImportedRow, model: str, template) -> Any:
    """What ``replay_output`` makes of a row, built directly (no per-sample eval machinery)."""
    sample = _sample(item)
    metadata = sample.metadata or {}
    return replayed_sample(
        sample, metadata["original_prompt"], metadata["original_response"], model, template
    )


def import_generations(files: list[str], log_dir: str, **options: Any) -> list[str]:
    """Write one .eval log per (model, task), optionally scored, from the generations ``files``;
    returns their locations (``options``: those of :func:`write_imported`)."""
    return write_imported(read_generations(files), files, log_dir, **options)


def write_imported(
    rows: list[ImportedRow],
    files: list[str],
    log_dir: str,
    max_tasks: int = 8,
    overwrite: bool = False,
    scorers: list[str] | None = None,
    model_roles: dict[str, Any] | None = None,
    baselines: list[str] | None = None,
    extraction: str | None = None,
    describe: Callable[[Any], None] | None = None,
) -> list[str]:
    """One .eval log per (model, task) of ``rows`` (read from ``files``), and with ``baselines``
    one per (baseline, task) answering the same instances (:func:`baseline_rows`); scored with
    ``scorers`` (reading answers with ``extraction``, the scorers' default when None) when given.
    ``describe(log)`` adds what the source recorded about the run (the lm-eval reader: model
    settings) to each imported model's log before scoring.

    Inspect runs each (model, task) on its first row, which gives a complete log (spec,
    plan, one replayed sample with its transcript); the group's other rows are then added as
    the same replayed samples, built directly. Running all 9,800 rows of the shared file
    through Inspect's sample loop took about two minutes here; this takes seconds.

    A folder that already holds files is refused unless ``overwrite`` (then its contents are
    replaced): a second copy of the same generations would be counted by the report. The logs
    are written and scored in a folder beside ``log_dir`` that takes its place only when all
    of it succeeded.
    """
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log

    target = Path(log_dir)
    if target.exists() and (not target.is_dir() or any(target.iterdir())) and not overwrite:
        raise ImportTargetError(
            f"{target} is not an empty folder; choose a new one or pass --overwrite to replace its contents"
        )
    groups = _groups(rows + baseline_rows(rows, baselines or []))
    with atomic_dir(target, "import", files) as folder:
        tasks = [imported_task(model, task_name, items[:1]) for (model, task_name), items in groups.items()]
        logs = inspect_eval(tasks, log_dir=str(folder), display="none", score=False, max_tasks=max_tasks)
        failed = [
            f"{log.eval.model} / {log.eval.task}: {log.error}" for log in logs if log.status != "success"
        ]
        if failed:
            raise ImportTargetError("import failed for " + "; ".join(failed))
        by_key = {(log.eval.model, log.eval.task): log.location for log in logs}
        for (model, task_name), items in groups.items():
            location = by_key[(model, f"narrative_infill/{task_name}")]
            log = read_eval_log(location)
            template = (log.samples or [])[0]  # the eval above wrote this row's first sample
            add_samples(log, [_replayed_sample(item, model, template) for item in items[1:]])
            if describe is not None and items[0].answered_by is None:
                describe(log)
            write_eval_log(log, location)
        if scorers:
            score_logs(list(by_key.values()), scorers, model_roles, extraction)
        names = [Path(location).name for location in by_key.values()]
    return [str(target / name) for name in names]


def score_logs(
    locations: list[str],
    scorers: list[str],
    model_roles: dict[str, Any] | None = None,
    extraction: str | None = None,
) -> None:
    """Score imported logs in this process (models load once), appending to each log; answers are
    read with ``extraction`` (the scorers' default when None)."""
    from inspect_ai import score
    from inspect_ai.log import read_eval_log, write_eval_log

    from ...scorers.judge.scorer import judge
    from ...scorers.metrics.scorer import metrics

    factories: dict[str, Callable[..., Scorer]] = {"metrics": metrics, "judge": judge}
    unknown = [name for name in scorers if name not in factories]
    if unknown:
        raise OptionError(f"unknown scorer(s) {unknown}; choose from {sorted(factories)}")
    options = {"extraction": extraction} if extraction else {}
    built = [factories[name](**options) for name in scorers]
    for location in locations:
        scored = score(
            read_eval_log(location), built, action="append", model_roles=model_roles, display="none"
        )
        write_eval_log(scored, location)
