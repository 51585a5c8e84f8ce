"""What a grid costs before it runs, for ``grid --dry-run``: prompt tokens, the output cap's
tokens, the judge's tokens per judgement, dollars from Inspect's model-cost file, GPU-hours.

Tokens are counted with SmolLM2's tokenizer where ``llama-cpp-python`` and the packaged GGUF are
installed (the models of a grid tokenize differently: a count, not their count), else estimated
as 1.3 tokens a word. The output figure is the cap, an upper bound: the per-sample cap of the
TELeR levels, the fixed one of the reasoning tasks. A judgement is counted with the gold span as
the candidate and a reply of five scores (an estimate). Where the data cannot be read here (the
hub out of reach), the per-instance means of the demo set stand for it (an estimate).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ...paper_protocol import CAP_FACTOR, DIMENSIONS, PAPER_JUDGE_VARIANT, PAPER_PROMPT_VARIANT, output_cap
from ...tasks.options import FILTERS
from .plan import GridError, Plan, Run
from .slurm import gpus

WORDS_TO_TOKENS = 1.3  # a common rule of thumb for English text in BPE vocabularies


@dataclass(frozen=True)
class Figures:
    """Token totals of one run (or a sum of runs)."""

    prompt: int = 0
    output_cap: int = 0
    judge_in: int = 0
    judge_out: int = 0
    judgements: int = 0

    def __add__(self, other: Figures) -> Figures:
        return Figures(*(a + b for a, b in zip(self.astuple(), other.astuple())))

    def astuple(self) -> tuple[int, ...]:
        return (self.prompt, self.output_cap, self.judge_in, self.judge_out, self.judgements)


@dataclass(frozen=True)
class Counter:
    count: Callable[[str], int]
    name: str
    estimate: bool


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """The C library writes to file descriptor 2 directly, past ``sys.stderr``."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@cache
def token_counter() -> Counter:
    """SmolLM2's tokenizer (vocabulary only) when it can load, else the word estimate."""
    try:
        import llama_cpp

        from ..local.server import default_gguf

        with _quiet_stderr():  # llama.cpp warns about the context of a vocabulary-only load
            vocab = llama_cpp.Llama(str(default_gguf()), vocab_only=True, verbose=False)
    except Exception:  # not installed, or the GGUF missing: the estimate says so
        return Counter(lambda text: round(len(text.split()) * WORDS_TO_TOKENS), "words x 1.3", True)
    return Counter(
        lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False)),
        "SmolLM2's tokenizer",
        False,
    )


def _task_args(command: list[str]) -> dict[str, Any]:
    """A run's ``-T`` arguments, parsed as Inspect parses them (YAML values)."""
    pairs = (value.split("=", 1) for flag, value in zip(command, command[1:]) if flag == "-T")
    return {key: yaml.safe_load(value) for key, value in pairs}


@cache
def _instances(data: str, subset: str | None, filters: tuple) -> tuple[list, bool]:
    """The run's instances and whether they are the demo set standing in for unreadable data."""
    from ...data.dataset import filter_instances, load_benchmark, stratified_subset

    try:
        instances = load_benchmark(data).instances
        stand_in = False
    except Exception:  # the hub raises many kinds of errors when it is out of reach
        if not data.startswith("hf"):
            raise
        instances, stand_in = load_benchmark("demo").instances, True
    instances = stratified_subset(instances, subset) if subset else list(instances)
    return filter_instances(instances, **dict(filters)), stand_in


@cache
def _per_task(task: str, data: str, subset: str | None, filters: tuple, shape: tuple) -> tuple[Figures, bool]:
    """Token totals of one task over its instances (one judge), and whether the demo stood in."""
    from ...prompts import prompt_template
    from ...scorers.judge.rubric import judge_variant

    variant, system_role, cap, factor, judge_name = shape
    count = token_counter().count
    template, judge = prompt_template(task, variant), judge_variant(judge_name).prompt
    reply = count(json.dumps({dimension: 3 for dimension in DIMENSIONS}))
    instances, stand_in = _instances(data, subset, filters)
    total = Figures()
    for instance in instances:
        slots = {"problem": instance.problem, "n": instance.n, "unit": instance.unit}
        prompt = sum(count(text) for _, text in template.conversation(slots, system_role))
        output, _ = output_cap(task, instance.gold_tokens, cap, factor)
        judged = count(judge.system) + count(judge.user(instance.problem, instance.gold_answer))
        total += Figures(prompt, output, judged, reply, 1)
    return total, stand_in


def run_figures(run: Run) -> tuple[Figures, bool]:
    """A run's tokens, scaled to its planned samples where the demo set stood in for the data."""
    args = _task_args(run.command)
    command_cap = (
        run.command[run.command.index("--max-tokens") + 1] if "--max-tokens" in run.command else None
    )
    shape = (
        args.get("variant", PAPER_PROMPT_VARIANT),
        bool(args.get("system_role", False)),
        int(command_cap or args.get("max_tokens") or 0) or None,
        float(args.get("max_tokens_factor", CAP_FACTOR)),
        args.get("judge_variant", PAPER_JUDGE_VARIANT),
    )
    filters = tuple((key, args[key]) for key in FILTERS if key in args)
    judges = sum(1 for flag in run.command if flag == "--model-role")
    figures, estimated = Figures(), False
    for task in run.tasks:
        per_task, stand_in = _per_task(task, str(args.get("data", "hf")), args.get("subset"), filters, shape)
        scale = run.samples / len(run.tasks) / max(per_task.judgements, 1) if stand_in else 1.0
        per_task = Figures(*(round(value * scale) for value in per_task.astuple()))
        figures += Figures(
            per_task.prompt,
            per_task.output_cap,
            per_task.judge_in * judges,
            per_task.judge_out * judges,
            per_task.judgements * judges,
        )
        estimated |= stand_in
    return figures, estimated


def load_prices(path: Path) -> dict[str, Any]:
    """Inspect's ``--model-cost-config`` file: model name -> dollars per million tokens, each entry
    read as Inspect reads it (``ModelCost``: its four fields, no defaults, so ``inspect eval``
    refuses an entry without the cache prices too), a missing field named in one sentence; a price
    that is negative, not a number or infinite is named (it would print as dollars)."""
    from inspect_ai.model import ModelCost
    from pydantic import ValidationError

    try:
        entries = dict(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, TypeError, ValueError) as err:
        raise GridError(f"{path}: not a model cost file ({type(err).__name__}: {err})") from None
    prices = {}
    for model, cost in entries.items():
        try:
            prices[str(model)] = ModelCost.model_validate(cost)
        except ValidationError as err:
            raise GridError(
                f"{path}: {model}: {_fields_wrong(err)} (Inspect's model cost has "
                f"{', '.join(ModelCost.model_fields)}, dollars per million tokens)"
            ) from None
    for model, price in prices.items():
        for field, value in price.model_dump().items():
            if isinstance(value, float) and not (math.isfinite(value) and value >= 0):
                raise GridError(f"{path}: {model}: {field}: {value} is not a price")
    return prices


def _fields_wrong(err: Any) -> str:
    """Pydantic's report as one clause: the missing fields, then each field that is no number."""
    problems = err.errors()
    missing = [str(p["loc"][0]) for p in problems if p["type"] == "missing"]
    wrong = [
        f"{'.'.join(map(str, p['loc'])) or 'the entry'}: {p['msg']}"
        for p in problems
        if p["type"] != "missing"
    ]
    return "; ".join(([f"missing {', '.join(missing)}"] if missing else []) + wrong)


def run_dollars(run: Run, figures: Figures, prices: dict[str, Any]) -> tuple[float, float]:
    """(the model's dollars at its output cap, the judges' dollars); a model without a price costs
    nothing here (a local model), as the note under the figures says."""
    model = run.command[run.command.index("--model") + 1]
    generation = 0.0
    if model in prices:
        generation = (figures.prompt * prices[model].input + figures.output_cap * prices[model].output) / 1e6
    roles = [
        value.split("=", 1)[1] for flag, value in zip(run.command, run.command[1:]) if flag == "--model-role"
    ]
    judging = sum(
        (figures.judge_in * prices[judge].input + figures.judge_out * prices[judge].output) / 1e6 / len(roles)
        for judge in roles
        if judge in prices
    )
    return generation, judging


def describe_cost(result: Plan, prices: dict[str, Any] | None, samples_per_hour: float | None) -> str:
    """The dry run's cost lines: per run, then the total, then which figures are estimates."""
    counter, lines = token_counter(), []
    total, dollars, gpu_hours, stand_in = Figures(), [0.0, 0.0], 0.0, False
    for run in result.runs:
        figures, estimated = run_figures(run)
        total, stand_in = total + figures, stand_in or estimated
        judged = figures.judge_in + figures.judge_out
        line = (
            f"{run.study}: {run.model}: {figures.prompt:,} prompt tokens, {figures.output_cap:,} output "
            f"tokens at most, {judged:,} judge tokens ({judged // max(figures.judgements, 1):,} a judgement)"
        )
        if prices is not None:
            generation, judging = run_dollars(run, figures, prices)
            dollars = [dollars[0] + generation, dollars[1] + judging]
            line += f", ${generation:,.2f} model + ${judging:,.2f} judge"
        if samples_per_hour:
            hours = run.samples / samples_per_hour * gpus(run)
            gpu_hours += hours
            line += f", {hours:,.1f} GPU-hours"
        lines.append(line)
    lines.append(
        f"cost total: {total.prompt:,} prompt tokens, {total.output_cap:,} output tokens at most, "
        f"{total.judge_in:,} judge input + {total.judge_out:,} judge output tokens over "
        f"{total.judgements:,} judgements"
        + (f", ${dollars[0]:,.2f} model + ${dollars[1]:,.2f} judge" if prices is not None else "")
        + (f", {gpu_hours:,.1f} GPU-hours" if samples_per_hour else "")
    )
    notes = [
        f"tokens counted with {counter.name}"
        + (" (an estimate)" if counter.estimate else "")
        + "; output tokens are the cap (an upper bound); a judgement is estimated with the gold span "
        "as the candidate and a five-score reply"
    ]
    if stand_in:
        notes.append(
            "the data is not readable here: tokens are the demo set's per-instance means (an estimate)"
        )
    if prices is not None:
        notes.append("dollars: models and judges without a price in the cost file count $0 (local models)")
    if samples_per_hour:
        notes.append(f"GPU-hours at the stated {samples_per_hour:,g} samples an hour per server")
    return "\n".join(lines + [f"cost note: {note}" for note in notes])
