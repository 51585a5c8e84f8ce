"""Import existing generations (the authors' pipeline outputs, or any JSONL/CSV/xlsx with the
same fields) into Inspect ``.eval`` logs, one per (model, task).

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Scorer

from ..data.atomic import atomic_dir
from ..data.jsonl import iter_jsonl, read_csv_frame
from ..data.narrative import NARRATIVE, record_narrative
from ..definitions import PARADIGMS, TELER_LEVELS, NarrativeInfillError, OptionError, is_missing
from ..inspect_compat import add_samples, replayed_sample
from ..solvers.replay import replay_output

#: The authors' template names and reasoning ids (REFERENCE §2, §7) -> this package's tasks.
TEMPLATE_TASKS = {f"fitb_l{level}": f"l{level}" for level in range(5)}
REASONING_IDS = {0: "abductive", 1: "causal", 2: "counterfactual", 3: "cot"}
REASONING_NAMES = {
    "abductive_reasoning": "abductive",
    "causal_reasoning": "causal",
    "counterfactual_thinking": "counterfactual",
    "chain_of_thought": "cot",
    **{name: name for name in PARADIGMS},
}
REQUIRED = ("problem", "response", "model")


@dataclass(frozen=True)
class ImportedRow:
    origin: str
    row: int
    task: str
    variant: str | None
    record: dict[str, Any]


class ImportRowError(NarrativeInfillError, ValueError):
    """Rows that cannot be imported, each named by file and row."""


class ImportTargetError(NarrativeInfillError, ValueError):
    """The output folder would mix new logs with old ones."""


def _read_rows(path: Path) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return [record for _, record in iter_jsonl(path, ImportRowError)]
    import pandas as pd

    if suffix == ".csv":
        frame = read_csv_frame(path, ImportRowError, keep_default_na=False)
    elif suffix in (".xlsx", ".xls"):
        try:
            frame = pd.read_excel(path, keep_default_na=False)
        except Exception as err:  # pandas and its Excel engines raise several types for a broken file
            raise ImportRowError(f"{path}: unreadable spreadsheet ({str(err).splitlines()[0]})") from None
    else:
        raise ImportRowError(f"{path}: expected .jsonl, .csv or .xlsx")
    return frame.to_dict(orient="records")


def _integer(value: Any) -> int | None:
    """An integer field (``3``, ``3.0``, ``"3"``); None when empty; ValueError otherwise."""
    if value == "" or is_missing(value):
        return None
    number = float(value)
    if not number.is_integer():
        raise ValueError(value)
    return int(number)


def _task_of(record: dict[str, Any]) -> tuple[str | None, str | None]:
    """(task, variant) for a row's template_name / template_id, or (None, reason)."""
    name = str(record.get("template_name") or "").strip()
    try:
        template_id = _integer(record.get("template_id"))
    except ValueError:
        return None, f"template_id {record.get('template_id')!r} is not an integer"
    variant = None if template_id is None else f"code{template_id}"
    if name in TEMPLATE_TASKS:
        return TEMPLATE_TASKS[name], variant
    if name in TELER_LEVELS:
        return name, variant
    if name in REASONING_NAMES:
        return REASONING_NAMES[name], "code"
    if name in ("reasoning_paradigms", "reasoning") and template_id is not None:
        paradigm = REASONING_IDS.get(template_id)
        if paradigm:
            return paradigm, "code"
    return None, f"template_name {name!r} (template_id {template_id!r}) maps to no task"


def _text(value: Any) -> str | None:
    return None if is_missing(value) else str(value)


def _sample_id(record: dict[str, Any], origin: str, row: int) -> str:
    return f"{record['id']}" if record.get("id") not in (None, "") else f"{Path(origin).stem}-{row}"


def read_generations(files: list[str]) -> list[ImportedRow]:
    """Validate every row first; report all bad rows at once (file and row), drop none.

    A bad row is one with a missing field (or an empty id), a template that maps to no task, a non-integer
    ``template_id`` or ``n``, or an id that another row of the same model and task already has
    (it would be counted twice).
    """
    rows: list[ImportedRow] = []
    problems: list[str] = []
    seen: dict[tuple, str] = {}
    for file in files:
        path = Path(file)
        records = _read_rows(path)
        if not records:
            problems.append(f"{file}: no rows")
        for index, record in enumerate(records, 1):
            missing = [f for f in REQUIRED if not (_text(record.get(f)) or "").strip() and f != "response"]
            if _text(record.get("response")) is None:
                missing.append("response")
            gold = _text(record.get("gold_answer")) or _text(record.get("answer"))
            if not gold or not gold.strip():
                missing.append("gold_answer (or answer)")
            if "id" in record and not (_text(record["id"]) or "").strip():
                missing.append("id (leave the field out to number the rows)")
            task, variant = _task_of(record)
            try:
                _integer(record.get("n"))
                bad_n = None
            except ValueError:
                bad_n = f"n {record.get('n')!r} is not an integer"
            key = (str(record.get("model")), task, _sample_id(record, file, index))
            if missing:
                problems.append(f"{file}, row {index}: missing or empty field(s): {', '.join(missing)}")
            elif task is None or bad_n:
                problems.append(f"{file}, row {index}: {variant if task is None else bad_n}")
            elif key in seen:
                problems.append(
                    f"{file}, row {index}: id {key[2]!r} repeats {seen[key]} (model {key[0]}, task {task})"
                )
            else:
                seen[key] = f"{file}, row {index}"
                rows.append(ImportedRow(file, index, task, variant, record))
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ImportRowError(f"{len(problems)} row(s) cannot be imported:\n  {shown}{more}")
    return rows


def _sample(item: ImportedRow) -> Sample:
    record = item.record
    # read_generations has checked that the problem and one of the gold fields are present
    gold = _text(record.get("gold_answer")) or str(record["answer"])
    known = {"problem", "response", "gold_answer", "answer", "prompt_text", "model"}
    extra = {k: (None if is_missing(v) else v) for k, v in record.items() if k not in known}
    n = _integer(record.get("n"))
    metadata = {
        **extra,
        "original_prompt": _text(record.get("prompt_text")) or _text(record["problem"]),
        "original_response": _text(record["response"]),
        "imported_from": f"{item.origin}:{item.row}",
        "template": item.task,
        "prompt_variant": item.variant,
    }
    if n is not None:
        metadata["n"] = n
    metadata[NARRATIVE] = record_narrative(record, str(record["problem"]), gold)
    return Sample(
        id=_sample_id(record, item.origin, item.row),
        input=str(record["problem"]),
        target=gold,
        metadata=metadata,
    )


def _groups(rows: list[ImportedRow]) -> dict[tuple[str, str], list[ImportedRow]]:
    groups: dict[tuple[str, str], list[ImportedRow]] = defaultdict(list)
    for row in rows:
        groups[(str(row.record["model"]), row.task)].append(row)
    return groups


def imported_task(model: str, task_name: str, items: list[ImportedRow]) -> Task:
    """The Inspect task replaying ``items`` as the outputs of ``replay/<model>``."""
    from inspect_ai.model import get_model

    return Task(
        name=f"narrative_infill/{task_name}",
        dataset=MemoryDataset([_sample(item) for item in items], name="imported"),
        solver=replay_output(),
        model=get_model(f"replay/{model}"),
        metadata={"template": task_name, "imported": True, "sources": sorted({i.origin for i in items})},
    )


def _replayed_sample(item: ImportedRow, model: str, template) -> Any:
    """What ``replay_output`` makes of a row, built directly (no per-sample eval machinery)."""
    sample = _sample(item)
    metadata = sample.metadata or {}
    return replayed_sample(
        sample, metadata["original_prompt"], metadata["original_response"], model, template
    )


def import_generations(
    files: list[str], log_dir: str, max_tasks: int = 8, overwrite: bool = False,
    scorers: list[str] | None = None, model_roles: dict[str, Any] | None = None,
) -> list[str]:  # fmt: skip
    """Write one .eval log per (model, task), optionally scored; returns their locations.

    Inspect runs each (model, task) on its first row, which gives a complete log (spec,
    plan, one replayed sample with its transcript); the group's other rows are then added as
    the same replayed samples, built directly. Running all 9,800 rows of the shared file
    through Inspect's sample loop took about two minutes here; this takes seconds.

    A folder that already holds files is refused unless ``overwrite`` (then its contents are
    replaced): a second copy of the same generations would be counted by the report. The logs
    are written and scored in a folder beside ``log_dir`` that takes its place only when all
    of it succeeded.
    """
    return write_imported(read_generations(files), files, log_dir, max_tasks, overwrite, scorers, model_roles)


def write_imported(
    rows: list[ImportedRow],
    files: list[str],
    log_dir: str,
    max_tasks: int = 8,
    overwrite: bool = False,
    scorers: list[str] | None = None,
    model_roles: dict[str, Any] | None = None,
    describe: Callable[[Any], None] | None = None,
) -> list[str]:
    """``import_generations`` for rows already read (from ``files``); ``describe(log)`` adds what
    the source recorded about the run (the lm-eval reader: model settings) to each log before scoring."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log

    target = Path(log_dir)
    if target.exists() and (not target.is_dir() or any(target.iterdir())) and not overwrite:
        raise ImportTargetError(
            f"{target} is not an empty folder; choose a new one or pass --overwrite to replace its contents"
        )
    groups = _groups(rows)
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
            location = by_key[(f"replay/{model}", f"narrative_infill/{task_name}")]
            log = read_eval_log(location)
            template = (log.samples or [])[0]  # the eval above wrote this row's first sample
            add_samples(log, [_replayed_sample(item, f"replay/{model}", template) for item in items[1:]])
            if describe is not None:
                describe(log)
            write_eval_log(log, location)
        if scorers:
            score_logs(list(by_key.values()), scorers, model_roles)
        names = [Path(location).name for location in by_key.values()]
    return [str(target / name) for name in names]


def score_logs(locations: list[str], scorers: list[str], model_roles: dict[str, Any] | None = None) -> None:
    """Score imported logs in this process (models load once), appending to each log."""
    from inspect_ai import score
    from inspect_ai.log import read_eval_log, write_eval_log

    from ..scorers.judge.scorer import judge
    from ..scorers.metrics.scorer import metrics

    factories: dict[str, Callable[[], Scorer]] = {"metrics": metrics, "judge": judge}
    unknown = [name for name in scorers if name not in factories]
    if unknown:
        raise OptionError(f"unknown scorer(s) {unknown}; choose from {sorted(factories)}")
    built = [factories[name]() for name in scorers]
    for location in locations:
        scored = score(
            read_eval_log(location), built, action="append", model_roles=model_roles, display="none"
        )
        write_eval_log(scored, location)
