"""``verify --rejudge K --grader MODEL``: the judge claim re-tested with the verifier's own grader.

A log says which grader judged it and where (``judges.py``), but the submitter wrote the log: a
local server answering 5s under the paper judge's name leaves a log that agrees with itself in
every respect. The re-judge draws K of the submission's judged samples (pooled over its settings,
with a seed drawn at run time and printed), reads each one's story and judged answer from its log,
has the verifier's grader judge it again with the options the log's judge ran with (prompt
variant, temperature, retries, system role, reply constraint; never from the cache), and compares
each sample's claimed QAvg with the re-judged one.

The decision rule, on d = claimed QAvg - re-judged QAvg per drawn sample: two one-sided tests, the
check failing when the smaller p-value, doubled (Bonferroni: the false-alarm bound stays ``ALPHA``),
is below ``ALPHA``.

- The mean: each d shrunk toward 0 by ``MARGIN`` (a difference within it counts as agreement, a
  larger one by how far it exceeds it), a sign-flip test (scipy's ``permutation_test``) of "their
  mean is positive". It catches an inflation spread thin over many answers. When the claimed scores
  came from the same judge, d is symmetric about 0 (identical at temperature 0), so its false-alarm
  rate is at most the level; but its smallest p-value is 2**-n for n answers beyond the margin, so
  a few answers inflated by a lot could never fail it (issue 57: six of twenty, each two points on
  every dimension, passed ``--rejudge 20`` at p = 0.016).
- The large differences: how many answers the claim sits more than ``LARGE`` (a point on the
  average dimension) above the re-judge, a binomial test against ``HONEST_LARGE_SHARE``, the share
  of answers an honest re-judge may put that far below the claim. An honest judge at temperature 0
  puts none there; one at temperature above 0, or a different honest model, a few in a thousand
  (the simulated ones of ``benchmarks/rejudge_power.py``: 0.03-0.7%, 1.1-1.25% for one harsher by
  0.06 QAvg); an inflater every answer it inflated by two points. Its p-value shrinks with each
  such answer, so three of twenty fail.

The smallest K is where the mean test can fail at all (``MIN_K``): below it an inflation of every
answer by a little could never fail, so such a K is refused, as is a re-judge that got fewer than
``MIN_K`` usable verdicts. ``benchmarks/rejudge_power.py`` measures both rates (docs/judge.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
import secrets
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from ....errors import NarrativeInfillError
from ....scorers.signature import JudgeSignature
from .build import QAVG_COLUMN
from .regenerate import Retest

ALPHA = 0.01
#: Half a QAvg step of 0.2: within it a difference counts as agreement (rounding, a grader's leeway).
MARGIN = 0.1
#: A difference above this is a point or more on the average dimension (QAvg moves in steps of 0.2).
LARGE = 0.9
#: The share of answers an honest re-judge may put more than LARGE below the claim (module docstring).
HONEST_LARGE_SHARE = 0.015
#: The tests whose smallest p-value decides, doubled for the count (Bonferroni).
TESTS = 2
#: The smallest K at which the mean test can fail: its best p-value, 2**-K (every d above MARGIN),
#: times TESTS, below ALPHA: 8 at 0.01.
MIN_K = math.ceil(math.log2(TESTS / ALPHA))
#: Sign flips drawn for the p-value where K is too large to list all 2**K (p >= 1 / 10,000).
RESAMPLES = 9_999
#: Grader calls in flight at once during a re-judge.
CONCURRENT = 8


class RejudgeError(NarrativeInfillError, RuntimeError):
    """The re-judge could not run (K too small to fail, no judged samples, a log without its
    judge's inputs)."""


@dataclass(frozen=True)
class _Drawn:
    """One drawn sample: its run, id and epoch, and the claimed QAvg."""

    run: Any
    sample_id: str
    epoch: int
    claimed: float


@dataclass(frozen=True)
class _Asked:
    """What the log's judge was shown for one drawn sample, and how it was asked."""

    drawn: _Drawn
    call: Any  # JudgeCall
    story: str
    answer: str


def check_k(k: int) -> None:
    """Refuse a K at which the mean test could never fail (its best p-value is 2**-K, doubled)."""
    if k < MIN_K:
        raise RejudgeError(
            f"--rejudge {k} can never fail an inflation of every answer: the mean test's smallest "
            f"p-value of {k} re-judged samples is 2^-{k}, doubled for the two tests {TESTS * 2.0**-k:.3g}, "
            f"not below {ALPHA:g}; re-judge at least {MIN_K}"
        )


def declared_grader(document: dict) -> str | None:
    """The one grader model a submission names (``grader=openai/gpt-4.1-mini`` -> the model), or None."""
    judges = (document.get("provenance") or {}).get("judges") or []
    models = {model for judge in judges for model in JudgeSignature.parse(judge).models.values()}
    return models.pop() if len(models) == 1 else None


def _draw(document: dict, runs: list, k: int, rng: random.Random) -> list[_Drawn]:
    pool = [
        _Drawn(run, str(row[0]), int(row[1]), float(row[QAVG_COLUMN]))
        for run in runs
        for row in document["samples"].get(run.setting, [])
        if row[QAVG_COLUMN] is not None
    ]
    if len(pool) < MIN_K:
        raise RejudgeError(
            f"the submission has {len(pool)} judged sample(s): a re-judge needs at least {MIN_K} to be "
            "able to fail an inflation of every answer"
        )
    return rng.sample(pool, min(k, len(pool)))


def _judge_inputs(drawn: _Drawn) -> _Asked:
    """The judge call the log's judge made, the story and the answer it judged, from the log.
    Synchronous: Inspect's log readers run their own event loop, so this runs before the grader's."""
    from inspect_ai.log import read_eval_log_sample

    from ....scorers.judge.scorer import JudgeCall
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
    return _Asked(drawn, call, sample.input, score.answer or "")


async def _rejudge_all(grader: Any, asked: list[_Asked]) -> list[float | None]:
    """The re-judged QAvg of each drawn sample (None where the grader gave no usable verdict)."""
    from ....scorers.judge.scorer import verdict_of

    limit = asyncio.Semaphore(CONCURRENT)

    async def one(item: _Asked) -> float | None:
        async with limit:
            verdict = await verdict_of(grader, item.call, item.story, item.answer)
        return fmean(verdict["values"].values()) if "values" in verdict else None

    return list(await asyncio.gather(*(one(item) for item in asked)))


def mean_p_value(differences: list[float], seed: int) -> float:
    """One-sided sign-flip p-value of "the differences, each shrunk toward 0 by MARGIN, have a
    positive mean": exact (all 2**K sign patterns) up to K = 13, else from RESAMPLES flips drawn
    from ``seed``. Shrinking keeps each difference's sign, so a symmetric d stays symmetric."""
    import numpy as np
    from scipy.stats import permutation_test

    d = np.asarray(differences, dtype=float)
    shrunk = np.sign(d) * np.maximum(np.abs(d) - MARGIN, 0.0)
    test = permutation_test(
        (shrunk,),
        lambda x, axis: x.mean(axis=axis),
        permutation_type="samples",  # one sample: the signs are flipped
        alternative="greater",
        n_resamples=RESAMPLES,
        random_state=seed,
        vectorized=True,
    )
    return float(test.pvalue)


def large_count(differences: list[float]) -> int:
    """How many answers the claim sits more than LARGE above the re-judge."""
    return sum(d > LARGE for d in differences)


def large_p_value(differences: list[float]) -> float:
    """One-sided binomial p-value of "more answers sit over LARGE above their re-judge than the
    HONEST_LARGE_SHARE an honest re-judge puts there"."""
    from scipy.stats import binomtest

    test = binomtest(large_count(differences), len(differences), HONEST_LARGE_SHARE, alternative="greater")
    return float(test.pvalue)


def inflation_p_value(differences: list[float], seed: int) -> float:
    """The decision's p-value (module docstring): the smaller of the two tests', times TESTS, at most 1."""
    return min(1.0, TESTS * min(mean_p_value(differences, seed), large_p_value(differences)))


def rejudge(
    document: dict, runs: list, grader: Any, k: int, alpha: float = ALPHA, seed: int | None = None
) -> Retest:
    """Draw ``k`` judged samples (with ``seed``, default one drawn now), judge them again with
    ``grader`` (a model name or an Inspect ``Model``) and test the claimed QAvg against the
    re-judged one (the rule in the docstring)."""
    from inspect_ai.model import get_model

    check_k(k)
    # A fresh client per re-judge: a memoized one may hold connections of an earlier, closed loop
    model = get_model(grader, memoize=False) if isinstance(grader, str) else grader
    result = Retest(seed=secrets.randbits(32) if seed is None else seed, model=str(model))
    declared = declared_grader(document)
    if declared != str(model):
        result.warnings.append(
            f"re-judged with {model}, the submission's judges are {document['provenance'].get('judges')}"
        )
    drawn = _draw(document, runs, k, random.Random(result.seed))
    if len(drawn) < k:
        result.warnings.append(f"only {len(drawn)} judged samples: all of them re-judged, not {k}")
    asked = [_judge_inputs(item) for item in drawn]  # before the grader's event loop starts
    fresh = asyncio.run(_rejudge_all(model, asked))
    pairs = [(item.claimed, value) for item, value in zip(drawn, fresh) if value is not None]
    if len(pairs) < len(drawn):
        result.warnings.append(
            f"{len(drawn) - len(pairs)} drawn sample(s) got no usable verdict from {model}"
        )
    if len(pairs) < MIN_K:  # fewer than MIN_K differences could never fail the mean test
        raise RejudgeError(
            f"{model} gave {len(pairs)} usable verdict(s) on the {len(drawn)} drawn samples: a re-judge "
            f"needs at least {MIN_K} to be able to fail an inflation of every answer; not re-judged"
        )
    differences = [claimed - value for claimed, value in pairs]
    result.p_value = inflation_p_value(differences, result.seed)
    result.submitted, result.fresh = fmean(c for c, _ in pairs), fmean(v for _, v in pairs)
    summary = (
        f"{len(pairs)} samples re-judged with {result.model} (seed {result.seed}): claimed QAvg "
        f"{result.submitted:.3f}, re-judged {result.fresh:.3f}, {large_count(differences)} claimed more "
        f"than {LARGE:g} above; the smaller of two one-sided p-values doubled (sign flips of the mean "
        f"of claimed - re-judged, each shrunk by {MARGIN:g}; binomial of the share more than {LARGE:g} "
        f"above, against {HONEST_LARGE_SHARE:g}): p = {result.p_value:.3g} (fails below {alpha:g})"
    )
    if result.p_value < alpha:
        result.failures.append(f"re-judge: the claimed QAvg is higher than {result.model} gives: {summary}")
    else:
        result.checks.append(f"re-judge consistent: {summary}")
    return result
