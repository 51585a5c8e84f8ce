"""The paper's run grid as data, turned into runs: ``narrative-infill grid``.

A grid file (``paper.yaml`` here, or any file of the same shape) names the models, the tasks,
the judge and the robustness studies. Each run is one ``inspect eval-set`` command in its own
process, so that vLLM servers never pile up on one GPU, with a log folder of its own, so that
re-running the same grid resumes: eval-set skips what is finished and retries what is not.
Logs go to ``LOG_DIR/main/<model>``, ``LOG_DIR/seeds/<model>-<task>-seed<S>`` and
``LOG_DIR/judges/<model>-<task>``, which ``narrative-infill report`` reads one study at a time.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ...data.jsonl import read_utf8
from ...errors import NarrativeInfillError
from ...paper_protocol import PARADIGMS, PUBLISHED_INSTANCES, TELER_LEVELS

STUDIES = ("main", "seeds", "judges")
#: Arguments Inspect's vLLM provider takes itself; every other ``-M`` key goes to ``vllm serve``.
VLLM_PROVIDER_ARGS = frozenset(
    {
        "base_url",
        "port",
        "api_key",
        "is_mistral",
        "retry_delay",
        "lazy_init",
        "client_timeout",
        "timeout",
        "host",
        "configure_logging",
        "device",
        "devices",
        "enable_lora",
        "use_chat_template",
    }
)
#: ``vllm serve`` engine arguments the grids use (vLLM's engine-args reference, as --dashed-names).
VLLM_SERVE_ARGS = frozenset(
    {
        "max_model_len",
        "tensor_parallel_size",
        "data_parallel_size",
        "pipeline_parallel_size",
        "gpu_memory_utilization",
        "trust_remote_code",
        "quantization",
        "load_format",
        "dtype",
        "enforce_eager",
        "max_num_seqs",
        "seed",
        "enable_prefix_caching",
    }
)


class GridError(NarrativeInfillError, ValueError):
    """A grid file that cannot be turned into runs, naming the entry and field."""


@dataclass(frozen=True)
class Run:
    study: str
    model: str
    tasks: tuple[str, ...]
    log_dir: Path
    command: list[str]
    samples: int  # generated samples (over all its tasks)
    grader_calls: int
    estimated: bool = False  # counts from an estimated subset size

    def shell(self) -> str:
        return shlex.join(self.command)


@dataclass
class Plan:
    runs: list[Run]
    instances: dict[str, int]  # "full" / subset name -> instances per task
    exact_counts: bool
    notes: list[str] = field(default_factory=list)


def load_grid(name: str) -> dict[str, Any]:
    """A packaged grid by name (``paper``) or a grid file by path."""
    path = Path(name)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise GridError(f"grid file not found: {path}")
        text = read_utf8(path, GridError)
    else:
        packaged = resources.files(__package__) / f"{name}.yaml"
        if not packaged.is_file():
            raise GridError(
                f"no packaged grid {name!r} (packaged: paper); or give a path to a grid .yaml file"
            )
        text = packaged.read_text(encoding="utf-8")
    try:
        grid = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f", line {mark.line + 1}" if mark else ""
        raise GridError(f"{name}{where}: not valid YAML ({getattr(err, 'problem', None) or err})") from None
    _validate(grid, name)
    return grid


def _validate(grid: Any, origin: str) -> None:
    def fail(where: str, problem: str):
        raise GridError(f"{origin}: {where}: {problem}")

    if not isinstance(grid, dict):
        fail("(file)", "expected a mapping")
    for key in ("tasks", "models", "provider"):
        if key not in grid:
            fail(key, "missing")
    known_tasks = set(TELER_LEVELS + PARADIGMS)
    for task in grid["tasks"]:
        if task not in known_tasks:
            fail("tasks", f"unknown task {task!r}; choose from {', '.join(sorted(known_tasks))}")
    names = set()
    for index, model in enumerate(grid["models"]):
        if not isinstance(model, dict) or not model.get("id") or not model.get("name"):
            fail(f"models[{index}]", "needs a name and an id")
        if model["name"] in names:
            fail(f"models[{index}]", f"name {model['name']!r} repeats")
        names.add(model["name"])
    for study, spec in (grid.get("studies") or {}).items():
        if study not in STUDIES[1:]:
            fail(f"studies.{study}", f"unknown study; choose from {', '.join(STUDIES[1:])}")
        for pair in spec.get("pairs", []):
            if len(pair) != 2 or pair[0] not in names or pair[1] not in known_tasks:
                fail(f"studies.{study}.pairs", f"{pair!r} is not [model name, task] of this grid")


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def instance_counts(grid: dict[str, Any]) -> tuple[dict[str, int], bool]:
    """Instances per task for the full data and each subset a study uses; exact when the data
    can be read here, else (a hub source out of reach) the published count (the paper's, unless
    the grid names another as ``published_instances``) and a 10% estimate."""
    from ...data.dataset import SUBSET_FRACTION, filter_instances, load_benchmark, stratified_subset

    data = str(grid.get("data", "hf"))
    subsets = {spec["subset"] for spec in (grid.get("studies") or {}).values() if spec.get("subset")}
    filters = {k: v for k, v in (grid.get("task_args") or {}).items() if k in ("domain", "n", "position")}
    try:
        instances = load_benchmark(data).instances
    except Exception:  # the hub raises many kinds of errors when it is out of reach
        if not data.startswith("hf"):
            raise
        # A grid over another hub dataset gives its size as ``published_instances``.
        published = int(grid.get("published_instances", PUBLISHED_INSTANCES))
        return {
            "full": published,
            **{s: math.floor(published * SUBSET_FRACTION.get(s, 0.1) + 0.5) for s in subsets},
        }, False
    counts = {"full": len(filter_instances(instances, **filters))}
    for subset in subsets:
        counts[subset] = len(filter_instances(stratified_subset(instances, subset), **filters))
    return counts, True


def _model_flags(grid: dict[str, Any], model: dict[str, Any]) -> list[str]:
    args = {**(grid.get("model_args") or {}), **(model.get("model_args") or {})}
    # A model entry may name its own provider (an API model, a baseline) beside the grid's.
    flags = ["--model", f"{model.get('provider', grid['provider'])}/{model['id']}"]
    for key, value in args.items():
        flags += ["-M", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    return flags


def _task_flags(grid: dict[str, Any], extra: dict[str, Any] | None = None) -> list[str]:
    args = {"data": grid.get("data", "hf"), **(grid.get("task_args") or {}), **(extra or {})}
    flags = []
    for key, value in args.items():
        rendered = "[" + ",".join(map(str, value)) + "]" if isinstance(value, list) else value
        flags += ["-T", f"{key}={rendered}"]
    return flags


@dataclass(frozen=True)
class _Context:
    """What every command of one plan shares."""

    grid: dict[str, Any]
    log_dir: Path
    tasks: list[str]
    counts: dict[str, int]
    exact: bool
    extra_args: list[str]

    def command(self, tasks: list[str], model: dict, roles: list[str], task_args: dict, *flags: str) -> list:
        """One ``inspect eval-set`` command, its log folder given in ``flags``."""
        return [
            "inspect",
            "eval-set",
            *(f"narrative_infill/{t}" for t in tasks),
            *_model_flags(self.grid, model),
            *roles,
            *_task_flags(self.grid, task_args),
            *flags,
            *self.extra_args,
        ]


def _role_flags(judges: dict[str, str]) -> list[str]:
    return [flag for role, model in judges.items() for flag in ("--model-role", f"{role}={model}")]


def _chosen(grid: dict[str, Any], models, tasks, studies) -> tuple[list[dict], list[str], list[str]]:
    """The grid's models, tasks and studies a plan is restricted to; a name the grid lacks fails."""
    chosen = [m for m in grid["models"] if not models or m["name"] in models or m["id"] in models]
    if models and len(chosen) != len(set(models)):
        known = ", ".join(m["name"] for m in grid["models"])
        raise GridError(f"unknown model(s) in {models}; the grid has: {known}")
    if tasks and set(tasks) - set(grid["tasks"]):
        raise GridError(
            f"task(s) {sorted(set(tasks) - set(grid['tasks']))} are not in the grid "
            f"({', '.join(grid['tasks'])})"
        )
    if studies and set(studies) - set(STUDIES):
        raise GridError(
            f"unknown study(ies) {sorted(set(studies) - set(STUDIES))}; choose from {', '.join(STUDIES)}"
        )
    return chosen, [t for t in grid["tasks"] if not tasks or t in tasks], studies or list(STUDIES)


def _main_runs(context: _Context, models: list[dict]) -> list[Run]:
    """One command per model: every chosen task on the full data, judged by the grid's judge."""
    judge = context.grid.get("judge") or {}
    runs = []
    for model in models if context.tasks else []:
        folder = context.log_dir / "main" / slug(model["name"])
        command = context.command(context.tasks, model, _role_flags(judge), {}, "--log-dir", str(folder))
        samples = context.counts["full"] * len(context.tasks)
        runs.append(
            Run("main", model["name"], tuple(context.tasks), folder, command, samples, samples * len(judge))
        )
    return runs


def _study_runs(context: _Context, study: str, spec: dict, models: dict[str, dict]) -> list[Run]:
    """The seed study (each pair once per seed) or the judge study (each pair judged by the panel)."""
    subset = {"subset": spec["subset"]} if spec.get("subset") else {}
    size = context.counts.get(spec.get("subset") or "full", context.counts["full"])
    estimated = not context.exact and bool(subset)
    judges = spec["judges"] if study == "judges" else context.grid.get("judge") or {}
    runs = []
    for name, task in spec["pairs"]:
        if name not in models or task not in context.tasks:
            continue
        if study == "seeds":
            for seed in spec["seeds"]:
                folder = context.log_dir / "seeds" / f"{slug(name)}-{task}-seed{seed}"
                flags = ("--seed", str(seed), "--log-dir", str(folder))
                command = context.command([task], models[name], _role_flags(judges), subset, *flags)
                runs.append(Run(study, name, (task,), folder, command, size, size * len(judges), estimated))
        else:
            folder = context.log_dir / "judges" / f"{slug(name)}-{task}"
            task_args = {**subset, "judge_roles": list(judges)}
            command = context.command(
                [task], models[name], _role_flags(judges), task_args, "--log-dir", str(folder)
            )
            runs.append(Run(study, name, (task,), folder, command, size, size * len(judges), estimated))
    return runs


def plan(
    grid: dict[str, Any],
    log_dir: Path,
    models: list[str] | None = None,
    tasks: list[str] | None = None,
    studies: list[str] | None = None,
    extra_args: list[str] | None = None,
) -> Plan:
    """Every run of the grid, restricted to ``models`` (names or ids), ``tasks`` and ``studies``."""
    chosen, wanted_tasks, wanted_studies = _chosen(grid, models, tasks, studies)
    counts, exact = instance_counts(grid)
    context = _Context(grid, log_dir, wanted_tasks, counts, exact, list(extra_args or []))
    runs = _main_runs(context, chosen) if "main" in wanted_studies else []
    for study in ("seeds", "judges"):
        spec = (grid.get("studies") or {}).get(study)
        if study in wanted_studies and spec:
            runs += _study_runs(context, study, spec, {m["name"]: m for m in chosen})
    notes = []
    if not exact:
        notes.append(
            f"the data is not readable here: counts use the published {counts['full']:,} instances, and "
            "'~' marks subsets estimated as 10%"
        )
    return Plan(runs, counts, exact, notes)


def describe(result: Plan) -> str:
    """The dry run: every command (a seed run's with its seed), then the totals per study."""
    lines = []
    for run in result.runs:
        seed = f", seed {run.command[run.command.index('--seed') + 1]}" if run.study == "seeds" else ""
        what = f"task {run.tasks[0]}{seed}" if len(run.tasks) == 1 else f"{len(run.tasks)} task(s)"
        lines.append(  # '~': an estimated subset size
            f"# {run.study}: {run.model}, {what}, {'~' * run.estimated}{run.samples:,} samples, "
            f"{'~' * run.estimated}{run.grader_calls:,} grader calls"
        )
        lines.append(run.shell())
    lines.append("")
    for study in (*STUDIES, "total"):
        runs = [r for r in result.runs if study in (r.study, "total")]
        if runs:
            approx = "~" if any(r.estimated for r in runs) else ""
            lines.append(
                f"{study}: {len(runs)} command(s), {sum(len(r.tasks) for r in runs)} generation runs, "
                f"{approx}{sum(r.samples for r in runs):,} samples, "
                f"{approx}{sum(r.grader_calls for r in runs):,} grader calls"
            )
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines)
