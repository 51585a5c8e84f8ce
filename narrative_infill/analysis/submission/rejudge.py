"""``verify --rejudge K --grader MODEL``: the judge claim re-tested with the verifier's own grader.

A log says which grader judged it and where (``judges.py``), but the submitter wrote the log: a
local server answering 5s under the paper judge's name leaves a log that agrees with itself in
every respect. The re-judge draws K of the submission's judged samples (pooled over its settings,
with a seed drawn at run time and printed), reads each one's story and judged answer from its log,
has the verifier's grader judge it again with the options the log's judge ran with (prompt
variant, temperature, retries, system role, reply constraint; never from the cache), and compares
each sample's claimed QAvg with the re-judged one.

The decision rule: with d = claimed QAvg - re-judged QAvg per drawn sample, the one-sided Wilcoxon
signed-rank test (scipy) of "d - MARGIN tends to be positive", failing below ``ALPHA``. When the
claimed scores came from the same judge, claimed and re-judged QAvg are two draws of one
distribution for each sample (identical at temperature 0), so d is symmetric about 0, d - MARGIN
leans negative, and the false-alarm rate is at most ``ALPHA``. A judge that inflates every sample
(all 5s) gives d > MARGIN on nearly all of them; the smallest p-value is 2**-K, so K >= 7 can fail
at ``ALPHA`` = 0.01. ``MARGIN`` (half a QAvg step of 0.2) keeps a judge that agrees exactly from
being tested on ties. ``benchmarks/rejudge_power.py`` measures both rates (docs/judge.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import secrets
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from ...definitions import QAVG_COLUMN, NarrativeInfillError
from .regenerate import Retest, wilcoxon_greater

ALPHA = 0.01
MARGIN = 0.1
#: Grader calls in flight at once during a re-judge.
CONCURRENT = 8


class RejudgeError(NarrativeInfillError, RuntimeError):
    """The re-judge could not run (no judged samples, a log without its judge's inputs)."""


@dataclass(frozen=True)
class _Drawn:
    """One drawn sample: its run, id and epoch, the claimed QAvg, and what the judge was shown."""

    run: Any
    sample_id: str
    epoch: int
    claimed: float


def declared_grader(document: dict) -> str | None:
    """The one grader model a submission names (``grader=openai/gpt-4.1-mini`` -> the model), or None."""
    judges = (document.get("provenance") or {}).get("judges") or []
    models = {pair.partition("=")[2] for judge in judges for pair in judge.split(" | ")[0].split(", ")}
    return models.pop() if len(models) == 1 else None


def _draw(document: dict, runs: list, k: int, rng: random.Random) -> list[_Drawn]:
    pool = [
        _Drawn(run, str(row[0]), int(row[1]), float(row[QAVG_COLUMN]))
        for run in runs
        for row in document["samples"].get(run.setting, [])
        if row[QAVG_COLUMN] is not None
    ]
    if not pool:
        raise RejudgeError("the submission has no judged sample to re-judge")
    return rng.sample(pool, min(k, len(pool)))


def _judge_inputs(drawn: _Drawn) -> tuple[Any, str, str]:
    """(the judge call the log's judge made, the story, the answer it judged), from the log."""
    from inspect_ai.log import read_eval_log_sample

    from ...scorers.judge.scorer import JudgeCall
    from ..report.load import newest_score
    from .protocol import scorer_options

    ids = {(str(s.id), s.epoch): s.id for s in drawn.run.samples}
    sample = read_eval_log_sample(
        drawn.run.location, id=ids[(drawn.sample_id, drawn.epoch)], epoch=drawn.epoch
    )
    score = newest_score(sample, "judge")
    if score is None or not isinstance(sample.input, str):
        raise RejudgeError(f"{drawn.run.setting} sample {drawn.sample_id}: no judge score or no story text")
    options = scorer_options(drawn.run.header, "judge") or {}
    call = dataclasses.replace(JudgeCall.from_options(**options), cache=False)  # ask again
    return call, sample.input, score.answer or ""


async def _rejudge_all(grader: Any, drawn: list[_Drawn]) -> list[float | None]:
    """The re-judged QAvg of each drawn sample (None where the grader gave no usable verdict)."""
    from ...scorers.judge.scorer import verdict_of

    limit = asyncio.Semaphore(CONCURRENT)

    async def one(item: _Drawn) -> float | None:
        call, story, answer = _judge_inputs(item)
        async with limit:
            verdict = await verdict_of(grader, call, story, answer)
        return fmean(verdict["values"].values()) if "values" in verdict else None

    return list(await asyncio.gather(*(one(item) for item in drawn)))


def rejudge(document: dict, runs: list, grader: Any, k: int, alpha: float = ALPHA) -> Retest:
    """Draw ``k`` judged samples, judge them again with ``grader`` (a model name or an Inspect
    ``Model``) and test the claimed QAvg against the re-judged one (the rule in the docstring)."""
    from inspect_ai.model import get_model

    model = get_model(grader) if isinstance(grader, str) else grader
    result = Retest(seed=secrets.randbits(32), model=str(model))
    declared = declared_grader(document)
    if declared != str(model):
        result.warnings.append(
            f"re-judged with {model}, the submission's judges are {document['provenance'].get('judges')}"
        )
    drawn = _draw(document, runs, k, random.Random(result.seed))
    fresh = asyncio.run(_rejudge_all(model, drawn))
    pairs = [(item.claimed, value) for item, value in zip(drawn, fresh) if value is not None]
    if len(pairs) < len(drawn):
        result.warnings.append(
            f"{len(drawn) - len(pairs)} drawn sample(s) got no usable verdict from {model}"
        )
    if not pairs:
        raise RejudgeError(f"{model} gave no usable verdict on any of the {len(drawn)} drawn samples")
    result.p_value = wilcoxon_greater([claimed - value - MARGIN for claimed, value in pairs])
    result.submitted, result.fresh = fmean(c for c, _ in pairs), fmean(v for _, v in pairs)
    summary = (
        f"{len(pairs)} samples re-judged with {result.model} (seed {result.seed}): claimed QAvg "
        f"{result.submitted:.3f}, re-judged {result.fresh:.3f}; one-sided Wilcoxon signed-rank of claimed "
        f"- re-judged - {MARGIN:g}: p = {result.p_value:.3g} (fails below {alpha:g})"
    )
    if result.p_value < alpha:
        result.failures.append(f"re-judge: the claimed QAvg is higher than {result.model} gives: {summary}")
    else:
        result.checks.append(f"re-judge consistent: {summary}")
    return result
