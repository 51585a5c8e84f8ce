"""The paper's LLM judge as an Inspect scorer: ``narrative_infill/judge``.

The grader is Inspect's ``grader`` model role (``--model-role grader=openai/gpt-4.1-mini``,
the paper's judge), called at temperature 0. Several roles (or a role bound to several
models) form a panel: each judge's scores are kept per sample, QAvg is reported per judge
and averaged. A reply without five valid scores is retried (with a note of what was wrong);
when the retries are spent, that judgement is unscored, never a number: its dimensions are
NaN (left out of every mean), ``grader_failed`` counts it, and the raw replies are in the
metadata. (``Score.unscored()`` would set the whole value to NaN, which hides the failure
from every metric, the failure rate included.) A grader call that raises (a wrong key, an
exhausted quota, a dead endpoint) is not a reply: it fails the sample, so that Inspect's
``--retry-on-error``, ``--fail-on-error`` and ``inspect eval-retry`` handle it.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from statistics import fmean

import anyio
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.model import model_roles as bound_model_roles
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import concurrency

from ...errors import NarrativeInfillError
from ...extraction import DEFAULT_EXTRACTION, check_extraction
from ...inspect_compat import shown_by_inspect
from ...number_rules import JUDGE_RANGE
from ...paper_protocol import (
    DIMENSIONS,
    HIGH_QAVG,
    JUDGE_MODEL,
    JUDGE_TEMPERATURE,
    LOW_QAVG,
    PAPER_JUDGE_VARIANT,
    is_high,
    is_low,
)
from ...task_options import as_list
from ..answer import bounded_answer, extracted, input_limits
from ..error_bars import headline_metrics, key_metrics
from ..signature import JudgeSignature
from .endpoint import endpoint_of, served_by, where_judged
from .parse import JudgementError, parse_judgement
from .rubric import JudgeVariant, judge_variant
from .schema import reply_constraint, structured_mode
from .weighting import expected_scores

logger = logging.getLogger(__name__)

NOT_RUN_HINT = f"inspect score LOG --scorer narrative_infill/judge --model-role grader={JUDGE_MODEL}"


class GraderNotBound(NarrativeInfillError, RuntimeError):
    """No grader model: the judge never falls back to the model under test."""


@metric
def share_above(threshold: float = HIGH_QAVG, inclusive: bool = False) -> Metric:
    """Share of samples whose value is above ``threshold`` (the paper's High%: QAvg > 4)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [s.score.as_float() for s in scores]
        return fmean(is_high(v, inclusive, threshold) for v in values) if values else float("nan")

    return compute


@metric
def share_below(threshold: float = LOW_QAVG) -> Metric:
    """Share of samples whose value is below ``threshold`` (the paper's Low%: QAvg < 2)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [s.score.as_float() for s in scores]
        return fmean(is_low(v, threshold) for v in values) if values else float("nan")

    return compute


def _judges(roles: list[str], grader_model: str | None) -> list[tuple[str, Model]]:
    """(name, model) of every judge: each model bound to each role, else the explicit default.

    Called when a sample is scored, not when the task is built: Inspect binds roles after
    construction (``task_with(model_roles=...)``, eval-set, Inspect Flow), as its own
    model-graded scorers assume."""
    bound = bound_model_roles()
    unbound = [role for role in roles if role not in bound]
    if bound.keys() & set(roles) and unbound:  # a panel judged by fewer models than asked is not the panel
        raise NarrativeInfillError(
            f"the judge's roles {unbound} are not bound (its panel is {roles}): bind them with --model-role "
            "or leave them out of judge_roles"
        )
    judges: list[tuple[str, Model]] = []
    for role in roles:
        models = bound.get(role)
        if models is None:
            continue
        models = models if isinstance(models, list) else [models]
        for index, model in enumerate(models):
            judges.append((role if len(models) == 1 else f"{role}{index + 1}", model))
    if not judges and grader_model:
        judges.append(("grader", get_model(grader_model)))
    if not judges:
        raise GraderNotBound(
            f"the judge needs a grader model and none of the roles {roles} is bound. Add "
            f"--model-role grader={JUDGE_MODEL} (the paper's judge), or pass grader_model=...; "
            "the model under test never grades itself."
        )
    return judges


def _messages(system: str, user: str, system_role: bool) -> list:
    if system_role:
        return [ChatMessageSystem(content=system), ChatMessageUser(content=user)]
    return [ChatMessageUser(content=f"{system}\n\n{user}")]  # for graders whose template has no system role


@dataclass(frozen=True)
class JudgeCall:
    """How each grader is asked for one verdict: the scorer's options that shape the call (also
    rebuilt from a log's recorded judge options by ``verify --rejudge``)."""

    variant: JudgeVariant
    retries: int = 2
    config: GenerateConfig = field(default_factory=GenerateConfig)
    cache: bool = True
    weighted: bool = False
    system_role: bool = True
    structured: str = "auto"

    @classmethod
    def from_options(
        cls,
        variant: str = PAPER_JUDGE_VARIANT,
        retries: int = 2,
        temperature: float = 0.0,
        probability_weighted: bool = False,
        top_logprobs: int = 5,
        cache: bool = True,
        system_role: bool = True,
        structured: str | bool = "auto",
        max_tokens: int | None = None,
        **_other: object,  # the scorer's options that do not shape a call (roles, extraction...)
    ) -> JudgeCall:
        """The call the judge scorer makes with these options; bad values fail here, once."""
        config = GenerateConfig(temperature=temperature, max_tokens=max_tokens)
        if probability_weighted:
            config = config.merge(GenerateConfig(logprobs=True, top_logprobs=top_logprobs))
        return cls(
            judge_variant(variant),
            retries,
            config,
            cache,
            probability_weighted,
            system_role,
            structured_mode(structured),
        )


def _retry_messages(call: JudgeCall, user: str, problem: str) -> list:
    """The request again, saying what was wrong (the changed input also keeps a cached bad reply
    from coming back)."""
    note = (
        f"{user}\n\nYour previous reply could not be used ({problem}). Reply with only the JSON object "
        "holding all five integer scores from 1 to 5."
    )
    return _messages(call.variant.prompt.system, note, call.system_role)


def _judged(verdict: dict, judgement, output: ModelOutput, text: str, weighted: bool) -> dict:
    """The verdict of a usable reply: its scores (probability-weighted where asked and possible)."""
    values: dict[str, float] = dict(judgement.scores)
    verdict["scores"] = judgement.scores
    if weighted:
        expected = expected_scores(output, text, judgement.offsets)
        if expected is None:
            verdict["probability_weighting"] = "unavailable: the grader returned no usable top logprobs"
        else:
            values = expected
            verdict["expected_scores"] = expected
    verdict["values"] = values
    return verdict


async def verdict_of(model: Model, call: JudgeCall, story: str, candidate: str) -> dict:
    """One grader's verdict on one candidate: its scores, or the failure; with every raw reply,
    the tokens spent, where the grader was reached and what the provider said it was."""
    variant = call.variant
    constraint, shape = reply_constraint(str(model), call.structured, variant.reply_schema)
    config = call.config.merge(shape)
    user = variant.prompt.user(story, candidate)
    messages = _messages(variant.prompt.system, user, call.system_role)
    verdict: dict = {"raw": [], "constraint": constraint, "model": str(model), "endpoint": endpoint_of(model)}
    tokens = {"input": 0, "output": 0, "total": 0}
    problem = "no reply"
    for attempt in range(call.retries + 1):
        # Retries bypass the cache: a retry must ask the grader again. A grader call that raises
        # (bad key, quota, dead endpoint) is the sample's error, for Inspect's --retry-on-error,
        # --fail-on-error and eval-retry to handle; only an unusable reply is retried here.
        output = await model.generate(messages, config=config, cache=call.cache and attempt == 0)
        if output.usage:
            tokens["input"] += output.usage.input_tokens
            tokens["output"] += output.usage.output_tokens
            tokens["total"] += output.usage.total_tokens
        verdict["raw"].append(output.completion)
        verdict.update(served_by(output), attempts=attempt + 1, tokens=tokens)
        try:
            if output.stop_reason == "max_tokens":
                raise JudgementError("the reply was cut off at the token limit")
            judgement = parse_judgement(output.completion, candidate, variant.dimensions)
        except JudgementError as err:
            problem = str(err)
            messages = _retry_messages(call, user, problem)
            continue
        return _judged(verdict, judgement, output, output.completion, call.weighted)
    verdict["failed"] = problem
    return verdict


def _value(verdicts: dict[str, dict], asked: tuple[str, ...]) -> dict[str, float]:
    """QAvg, the variant's dimensions (``asked``; means over the judges that gave a verdict), each
    panel member's QAvg, and the share of judges that failed."""
    judged = [v for v in verdicts.values() if "values" in v]
    dimensions = {d: fmean(v["values"][d] for v in judged) if judged else math.nan for d in asked}
    value = {"qavg": fmean(dimensions.values()) if judged else math.nan, **dimensions}
    if len(verdicts) > 1:
        for name, verdict in verdicts.items():
            value[f"qavg_{name}"] = fmean(verdict["values"].values()) if "values" in verdict else math.nan
    value["grader_failed"] = sum("failed" in v for v in verdicts.values()) / len(verdicts)
    return value


def _score(verdicts: dict[str, dict], answer, variant: JudgeVariant, extraction: str, unread: int) -> Score:
    """The sample's judge score, with who judged, where, and what each grader said it was."""
    tokens = {k: sum(v["tokens"][k] for v in verdicts.values()) for k in ("input", "output", "total")}
    failures = {name: v["failed"] for name, v in verdicts.items() if "failed" in v}
    return Score(
        value=_value(verdicts, variant.dimensions),
        answer=answer.text,
        reason="grader_failed" if len(failures) == len(verdicts) else None,
        explanation="; ".join(f"{name}: {problem}" for name, problem in failures.items()) or None,
        metadata={
            "judge_variant": variant.name,
            "judges": verdicts,
            # Flat, so that log summaries (which drop nested metadata) still say who judged and where.
            # The extraction joins the judges here: the report refuses to pool differing values.
            "judge_models": str(
                JudgeSignature({name: v["model"] for name, v in verdicts.items()}, extraction)
            ),
            **where_judged(verdicts),
            "judge_extraction": extraction,
            "grader_tokens": tokens,
            "extraction_status": answer.status.value,
            **input_limits(answer, unread),
        },
    )


# QAvg first: the log viewer and the end-of-run summary lead with the paper's headline number.
@scorer(
    metrics={
        "qavg": [*headline_metrics(JUDGE_RANGE), share_above(HIGH_QAVG), share_below(LOW_QAVG)],
        **{dimension: key_metrics() for dimension in DIMENSIONS},
        "qavg_*": [mean()],
        "grader_failed": [mean()],
    }
)
@shown_by_inspect
def judge(
    variant: str = PAPER_JUDGE_VARIANT,
    roles: str | list[str] = "grader",
    grader_model: str | None = None,
    retries: int = 2,
    temperature: float = JUDGE_TEMPERATURE,
    probability_weighted: bool = False,
    top_logprobs: int = 5,
    max_concurrent: int = 16,
    cache: bool = True,
    system_role: bool = True,
    structured: str | bool = "auto",
    max_tokens: int | None = None,
    extraction: str = DEFAULT_EXTRACTION,
    optional: bool = False,
) -> Scorer:
    """Fluency, Context Faithfulness, Bidirectional Coherence, Narrative Consistency and
    Informativeness (1-5) of the extracted infill, and their mean QAvg.

    Args:
      variant: "paper" (the authors' prompt with its penalties sent, the paper's dimension
        definitions, the blank as written in the story) or "authors" (as their code sent it).
      roles: model role(s) whose models judge; several make a panel (bound in part: an error).
      grader_model: a model used when no role is bound (an explicit default).
      retries: extra grader calls after a reply without five valid scores.
      temperature: grader temperature (the paper: 0).
      probability_weighted: report each dimension's expected score from the grader's top
        logprobs (G-Eval) instead of the sampled integer.
      top_logprobs: logprobs requested per token when probability_weighted.
      max_concurrent: grader calls in flight at once, across samples.
      cache: use Inspect's model cache, so judging identical inputs again costs nothing.
      system_role: send the judge instructions as a system message (False folds them into
        the user turn, for graders whose chat template rejects a system role).
      structured: "auto" tells the grader the reply's shape where its provider can be
        constrained (a JSON schema, or llama.cpp's grammar) and parses tolerantly elsewhere;
        "on" fails clearly for a grader that cannot be constrained; "off" never constrains.
      max_tokens: cap on a grader reply (a reply cut at the cap is a failed attempt).
      extraction: the infill judged: "ours" (the paper's extraction rules) or "published" (the
        authors' released code: the first <ANSWER> span, else the whole response). Recorded as
        ``judge_extraction`` and in ``judge_models``, so the report never pools the two.
      optional: with no grader bound, record no judge score (and warn once) instead of failing
        the sample; the tasks' default, so that a run without a grader still gets its metrics.

    Metrics (``error_bars``: stderr clustered by source narrative): per-dimension mean and
    stderr; QAvg mean, stderr, 95% interval, the paper's breakdowns, High% (`share_above`, QAvg
    above 4; the authors' scripts used >= 4: rescore with a different metric if needed) and
    Low% (`share_below`, QAvg below 2); `qavg_<judge>` per panel member; `grader_failed`,
    the share of judgements the grader failed.
    """
    role_list = as_list(roles) or []
    call = JudgeCall.from_options(  # bad values fail here, not once per sample
        variant=variant,
        retries=retries,
        temperature=temperature,
        probability_weighted=probability_weighted,
        top_logprobs=top_logprobs,
        cache=cache,
        system_role=system_role,
        structured=structured,
        max_tokens=max_tokens,
    )
    check_extraction(extraction)
    warned = False

    async def score(state: TaskState, target: Target) -> Score | None:
        nonlocal warned
        try:
            judges = _judges(role_list, grader_model)
        except GraderNotBound:
            if not optional:
                raise
            if not warned:
                warned = True
                _warn_not_run(role_list)
            # No score, not an unscored one: nothing was judged, so no sample counts as a judge failure.
            return None
        answer = await extracted(state, extraction)
        # The judge reads what the metrics read (under the published rule a whole untagged response)
        judged = await anyio.to_thread.run_sync(bounded_answer, answer.text.strip())
        verdicts = {}
        for name, model in judges:
            async with concurrency("narrative_infill_judge", max_concurrent):
                verdicts[name] = await verdict_of(model, call, state.input_text, judged)
        unread = len(answer.text.strip()) - len(judged)
        return _score(verdicts, answer, call.variant, extraction, unread)

    return score


def _warn_not_run(roles: list[str]) -> None:
    logger.warning(
        "LLM judge not run (no model bound to the role(s) %s; roles bound: %s). To add it later: %s",
        ", ".join(map(repr, roles)),
        ", ".join(bound_model_roles()) or "none",
        NOT_RUN_HINT,
    )
