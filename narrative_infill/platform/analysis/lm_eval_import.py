"""Read an lm-evaluation-harness run of the narrative_infill tasks into Inspect logs.

``lm_eval ... --log_samples --output_path DIR`` writes, per run, ``results_<date>.json`` and one
``samples_<task>_<date>.jsonl`` per task beside it. Each task becomes one Inspect log (through the
generations importer's replay), its samples carrying the document's metadata, the prompt lm-eval
sent, the raw response, the per-sample output cap and lm-eval's own answer and scores; the log
records the model, the generation settings, the task options and the lm-eval version. Every line
is checked first: a bad or partial file is refused, naming the file, the line and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...data.jsonl import iter_jsonl, read_utf8
from ...errors import NarrativeInfillError
from ...paper_protocol import SETTINGS, output_cap
from ...tasks.options import option_names
from ..names import LookAlikes, checked_name
from .importer import ImportedRow, write_imported

_RESULTS = re.compile(r"^results_(?P<date>.+)\.json$")
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d\d-\d\dT[\d.-]+)\.jsonl$")
#: The task name prefix of the packaged lm-eval tasks (``narrative_infill_l2``).
TASK_PREFIX = "narrative_infill_"
#: Document fields every sample needs (the rest of the document is kept as sample metadata).
DOC_FIELDS = ("id", "problem", "gold_answer", "n", "unit", "gold_tokens")


class LmEvalImportError(NarrativeInfillError, ValueError):
    """An lm-eval output that cannot be imported, named by file, line and field."""


@dataclass(frozen=True)
class LmEvalTask:
    """One task of one lm-eval run: its results file, its samples file and its config there."""

    results_file: Path
    results: dict[str, Any]
    name: str
    samples_file: Path

    @property
    def config(self) -> dict[str, Any]:
        return self.results["configs"][self.name]

    @property
    def options(self) -> dict[str, Any]:
        return self.config.get("metadata") or {}


def is_lm_eval_output(paths: Iterable[str]) -> bool:
    """Whether ``paths`` name lm-eval output (its files, or folders holding a results file)."""
    return any(
        _RESULTS.match(Path(p).name) or _SAMPLES.match(Path(p).name) or any(Path(p).rglob("results_*.json"))
        for p in paths
        if Path(p).exists()
    )


def _results_files(paths: Iterable[str]) -> dict[Path, set[str] | None]:
    """Each results file named or found, with the tasks asked for (None: all of them)."""
    chosen: dict[Path, set[str] | None] = {}
    for given in map(Path, paths):
        if given.is_dir():
            found = sorted(given.rglob("results_*.json"))
            if not found:
                raise LmEvalImportError(f"{given}: no results_<date>.json in this folder or below")
            chosen.update(dict.fromkeys(found))
        elif match := _SAMPLES.match(given.name):
            results = given.with_name(f"results_{match['date']}.json")
            if not results.is_file():
                raise LmEvalImportError(f"{given}: its run's results file {results.name} is not beside it")
            if results not in chosen or chosen[results] is not None:
                chosen[results] = (chosen.get(results) or set()) | {match["task"]}
        elif _RESULTS.match(given.name) and given.is_file():
            chosen[given] = None
        else:
            raise LmEvalImportError(
                f"{given}: not an lm-eval results_<date>.json, samples_<task>_<date>.jsonl or folder"
            )
    return chosen


def _read_results(path: Path) -> dict[str, Any]:
    try:
        results = json.loads(read_utf8(path, LmEvalImportError))
    except json.JSONDecodeError as err:
        raise LmEvalImportError(f"{path}, line {err.lineno}: not JSON ({err.msg})") from None
    for key in ("configs", "n-samples", "config"):
        if not isinstance(results, dict) or not isinstance(results.get(key), dict):
            raise LmEvalImportError(
                f"{path}: field '{key}': missing (not a results file of lm_eval --log_samples?)"
            )
    return results


def find_tasks(paths: Iterable[str]) -> list[LmEvalTask]:
    """The narrative_infill tasks of the runs ``paths`` name, each with its samples file."""
    tasks = []
    for path, wanted in _results_files(paths).items():
        results = _read_results(path)
        date = _RESULTS.match(path.name)["date"]  # type: ignore[index]
        names = (
            [t for t in results["configs"] if t.startswith(TASK_PREFIX)] if wanted is None else sorted(wanted)
        )
        if not names:
            raise LmEvalImportError(f"{path}: no narrative_infill task in field 'configs'")
        for name in names:
            if name not in results["configs"]:
                raise LmEvalImportError(f"{path}: field 'configs': no task {name!r}")
            samples = path.with_name(f"samples_{name}_{date}.jsonl")
            if not samples.is_file():
                raise LmEvalImportError(
                    f"{path}: task {name} has no samples file {samples.name} beside it "
                    "(run lm_eval with --log_samples)"
                )
            tasks.append(LmEvalTask(path, results, name, samples))
    return tasks


def _field(value: Any, path: Path, line: int, name: str, kind: type | tuple[type, ...]) -> Any:
    """``value`` if it is of ``kind``, else the error naming file, line and field."""
    if isinstance(value, bool) or not isinstance(value, kind):
        shown = (
            "missing" if value is None else f"expected {getattr(kind, '__name__', kind)}, got {value!r:.80}"
        )
        raise LmEvalImportError(f"{path}, line {line}: field '{name}': {shown}")
    return value


def _prompt(context: Any, path: Path, line: int) -> tuple[str, str | None]:
    """(user turn, system turn or None) of what lm-eval sent: a chat backend's JSON messages, or
    the text a completion backend (or a chat template lm-eval applied itself) was given."""
    if isinstance(context, list) and len(context) == 1:  # a JsonChatStr, written as a one-item list
        context = context[0]
    text = _field(context, path, line, "arguments.gen_args_0.arg_0", str)
    try:
        messages = json.loads(text)
    except json.JSONDecodeError:
        return text, None
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return text, None
    turns = {m.get("role"): m.get("content") for m in messages}
    user = _field(turns.get("user"), path, line, "arguments.gen_args_0.arg_0 (the user message)", str)
    return user, turns.get("system")


def _row(task: LmEvalTask, line: int, sample: dict[str, Any], model: str) -> ImportedRow:
    """One samples line as a generations row, every field it needs checked."""
    path = task.samples_file
    doc = _field(sample.get("doc"), path, line, "doc", dict)
    for name in DOC_FIELDS:
        kind = int if name in ("n", "gold_tokens") else str
        _field(doc.get(name), path, line, f"doc.{name}", kind)
    request = _field(
        (sample.get("arguments") or {}).get("gen_args_0"), path, line, "arguments.gen_args_0", dict
    )
    settings = _field(request.get("arg_1"), path, line, "arguments.gen_args_0.arg_1", dict)
    cap = _field(settings.get("max_gen_toks"), path, line, "arguments.gen_args_0.arg_1.max_gen_toks", int)
    user, system = _prompt(request.get("arg_0"), path, line)
    responses = _field(sample.get("resps"), path, line, "resps", list)
    if len(responses) != 1 or not isinstance(responses[0], list) or len(responses[0]) != 1:
        raise LmEvalImportError(
            f"{path}, line {line}: field 'resps': expected one response, got {responses!r:.80}"
        )
    response = _field(responses[0][0], path, line, "resps[0][0]", str)
    filtered = _field(sample.get("filtered_resps"), path, line, "filtered_resps", list)
    scores = {k: sample[k] for k in sample.get("metrics") or [] if k in sample}
    options = task.options
    record = {
        **{k: v for k, v in doc.items() if k not in ("id", "problem", "gold_answer")},
        "id": doc["id"],
        "problem": doc["problem"],
        "gold_answer": doc["gold_answer"],
        "response": response,
        "prompt_text": user,
        "model": model,
        "max_tokens": cap,
        "max_tokens_rule": _cap_rule(task),
        "system_role": system is not None,
        "lm_eval": {
            "doc_id": sample.get("doc_id"),
            "filter": sample.get("filter"),
            "answer": filtered[:1],
            **scores,
        },
    }
    if system is not None:
        record["system_message"] = system
    return ImportedRow(str(path), line, options["template"], options.get("variant"), record)


def _cap_rule(task: LmEvalTask) -> str:
    """How the samples' caps were set (``paper_protocol.output_cap``'s rule names): a user's
    ``--gen_kwargs max_gen_toks`` (the task files set none), else the setting's own rule."""
    user_cap = (task.config.get("generation_kwargs") or {}).get("max_gen_toks")
    return output_cap(task.options["template"], 0, user_cap)[1]


def model_name(results: dict[str, Any], where: Path) -> str:
    """``<backend>/<model>`` as lm-eval ran it (``local-chat-completions/smollm2``), in NFKC; a
    name that is not text or would render as another (:mod:`..names`) is refused, naming the
    results file and field."""
    parts = {"config.model": results["config"].get("model") or "lm-eval"}
    parts["model_name"] = results.get("model_name") or "unnamed"
    return "/".join(
        checked_name(value, f"{where}: field {field!r}", LmEvalImportError) for field, value in parts.items()
    )


def read_task(task: LmEvalTask) -> list[ImportedRow]:
    """Every sample of one task, checked: its config is a narrative_infill task's, each line has
    its fields, no document twice, and as many samples as the results file says were evaluated."""
    template = task.options.get("template")
    if template not in SETTINGS:
        raise LmEvalImportError(
            f"{task.results_file}: field 'configs.{task.name}.metadata.template': {template!r} is no "
            f"narrative_infill setting (expected one of {', '.join(SETTINGS)})"
        )
    rows: list[ImportedRow] = []
    seen: dict[str, int] = {}
    for line, sample in iter_jsonl(task.samples_file, LmEvalImportError):
        row = _row(task, line, sample, model_name(task.results, task.results_file))
        if row.record["id"] in seen:
            raise LmEvalImportError(
                f"{task.samples_file}, line {line}: field 'doc.id': {row.record['id']!r} "
                f"repeats line {seen[row.record['id']]}"
            )
        seen[row.record["id"]] = line
        rows.append(row)
    expected = (task.results["n-samples"].get(task.name) or {}).get("effective")
    if expected != len(rows):
        raise LmEvalImportError(
            f"{task.samples_file}: {len(rows)} samples, but {task.results_file.name} field "
            f"'n-samples.{task.name}.effective' says {expected!r} (a partial or foreign file)"
        )
    return rows


def task_args(options: dict[str, Any]) -> dict[str, Any]:
    """The lm-eval task options under the Inspect tasks' ``-T`` names (the hub revision is
    ``data_revision`` there, ``revision`` here), so the report and submit read them as a run's."""
    keys = {name: "data_revision" if name == "revision" else name for name in option_names()}
    return {name: options[key] for name, key in keys.items() if key in options}


def describe_run(tasks: dict[tuple[str, str], LmEvalTask]) -> Any:
    """The importer's ``describe`` hook: each log gets its lm-eval task's generation settings (as
    Inspect's model config), options (as task args), data identity and lm-eval's run record."""
    from inspect_ai.model import GenerateConfig

    from ...data.dataset import source_identity

    def describe(log: Any) -> None:
        task = tasks[(log.eval.model.removeprefix("replay/"), log.eval.task.split("/")[-1])]
        options, generation = task.options, task.config.get("generation_kwargs") or {}
        log.eval.model_generate_config = GenerateConfig(
            temperature=generation.get("temperature"),
            top_p=generation.get("top_p"),
            max_tokens=generation.get("max_gen_toks"),
            stop_seqs=generation.get("until") or None,
        )
        log.eval.task_args = task_args(options)
        for sample in (
            log.samples or []
        ):  # lm-eval keeps no finish reason: whether the cap cut a reply is unknown
            for choice in sample.output.choices:
                choice.stop_reason = "unknown"
        log.eval.task_version = options.get("version") or 0  # N-X (3-A), or a plain N before the form
        results = task.results
        log.eval.metadata = {
            **(log.eval.metadata or {}),
            "prompt_variant": options.get("variant"),
            "system_role": options.get("system_role"),
            "data": options.get("data"),
            "dataset_identity": source_identity(options.get("data") or "hf", options.get("data_revision")),
            "lm_eval": {
                "version": results.get("lm_eval_version"),
                "git_hash": results.get("git_hash"),
                "date": results.get("date"),
                "task": task.name,
                "results_file": str(task.results_file),
                "samples_file": str(task.samples_file),
                "model": results["config"].get("model"),
                "model_args": results["config"].get("model_args"),
                "gen_kwargs": results["config"].get("gen_kwargs"),
                "generation_kwargs": generation,
                "task_hash": (results.get("task_hashes") or {}).get(task.name),
                "results": results.get("results", {}).get(task.name),
            },
        }

    return describe


def import_lm_eval(paths: list[str], log_dir: str, **options: Any) -> list[str]:
    """One Inspect log per narrative_infill task of the lm-eval runs ``paths`` name (results files,
    samples files or folders), written like ``import_generations`` writes (``options``: its
    ``max_tasks``, ``overwrite``, ``scorers``, ``model_roles``); returns their locations."""
    tasks = find_tasks(paths)
    settings = [str(task.options.get("template")) for task in tasks]
    models = [model_name(task.results, task.results_file) for task in tasks]
    names = LookAlikes()  # two runs whose model names print alike would be two rows that look like one
    for task, model in zip(tasks, models):
        if alike := names.problem(model, str(task.results_file)):
            raise LmEvalImportError(f"{task.results_file}: model {alike}")
    repeated = {(m, s) for m, s in zip(models, settings) if list(zip(models, settings)).count((m, s)) > 1}
    if repeated:
        raise LmEvalImportError(
            f"several runs of the same model and setting {sorted(repeated)}: "
            "import them into separate folders"
        )
    rows = [row for task in tasks for row in read_task(task)]
    by_run = {(model, setting): task for model, setting, task in zip(models, settings, tasks)}
    files = sorted({str(t.results_file) for t in tasks} | {str(t.samples_file) for t in tasks})
    return write_imported(rows, files, log_dir, describe=describe_run(by_run), **options)
