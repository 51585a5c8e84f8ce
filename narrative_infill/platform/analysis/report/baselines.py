"""Where copying stands in the report: the null baselines beside the models, and the copy share.

Baseline runs are ordinary logs of ``--model baseline/<rule>`` (``data.baselines``). Two tables:

* ``baselines_vs_models``: per setting, each run's AtAvg and QAvg (where judged), baselines and
  models alike, each run's shares of copied, story-reuse and not-fluent answers (the last read here
  from the logged answers by ``analysis.fluency``: the tasks do not need its model; unknown, so
  every model unranked, where it cannot run), and for each model the floor
  on the same instances (same setting, same problem and gold): the best AtAvg of a null rule the
  guards do not flag there (``analysis.floor``), with the rule that sets it and the mark: the
  guard a model fails, else whether it is above the floor. A model whose instances a kept null
  rule does not all cover is marked so, never compared on a part of its instances.
* ``copy_share_by_setting``: per run and setting, the percentage of answers whose
  ``context_copy`` is above ``CONTEXT_COPY_THRESHOLD`` (``copy_guards.is_copied``).
"""

from __future__ import annotations

import pandas as pd

from ....copy_guards import CONTEXT_COPY_THRESHOLD, is_copied, is_story_reuse
from ....data.baselines import NULL_RULES
from ....errors import NarrativeInfillError
from ....paper_protocol import SETTINGS
from ..floor import (
    COPY_RULE,
    FLUENCY_RULE,
    IN_FLOOR,
    NOT_ABOVE,
    REUSE_RULE,
    floor_mark,
    floor_of,
    guard_reason,
    over_limit,
)
from ..fluency import is_not_fluent
from .document import Absent, Table, has_columns

BASELINE_PREFIX = "baseline/"
BASELINES_TABLE = "baselines_vs_models"
COPY_TABLE = "copy_share_by_setting"
MARK = "mark"
#: Each sample's guard readings: two from the metrics scorer, and the fluency check read here.
_GUARD_COLUMNS = ["context_copy", "story_reuse", "not_fluent"]
#: The instance a sample answers: the same problem and gold in the same setting.
_INSTANCE = ["setting", "input", "target"]
__all__ = ["BASELINES_TABLE", "COPY_TABLE", "MARK", "NOT_ABOVE", "baseline_tables", "is_baseline"]


def is_baseline(model: str) -> bool:
    """Whether a log's model is one of the null baselines (``baseline/<rule>``)."""
    return str(model).startswith(BASELINE_PREFIX)


def _share(flags: pd.Series) -> float:
    """The share of True among the known values (NaN when none is known)."""
    known = flags.dropna()
    return float(known.astype(float).mean()) if len(known) else float("nan")


def _guard_shares(samples: pd.DataFrame) -> tuple[float, float, float]:
    """(copied, story-reuse, not-fluent share) of ``samples``' answers; NaN where a guard was not
    scored or cannot be read here."""
    copies, reuses = samples["context_copy"], samples["story_reuse"]
    return (
        _share(copies.where(copies.isna(), is_copied(copies))),
        _share(reuses.where(reuses.isna(), is_story_reuse(reuses))),
        _share(samples["not_fluent"]),
    )


def _not_fluent(answers: pd.Series) -> pd.Series:
    """1.0 where an answer is not fluent (``fluency.is_not_fluent``), 0.0 where it is, NaN where
    it was not scored or the check cannot run here (no llama-cpp-python or packaged model). Each
    distinct answer is read once."""
    from ..fluency import fluency_or_none

    read = fluency_or_none()
    if read is None:
        return pd.Series(float("nan"), index=answers.index)
    flags = {answer: float(bool(is_not_fluent(read(answer)))) for answer in answers.dropna().unique()}
    return answers.map(flags).astype(float)


def _rule_instances(scored: pd.DataFrame, setting: str) -> dict[str, pd.DataFrame]:
    """Each null rule's samples in ``setting``, indexed by instance."""
    rules = {}
    for rule in NULL_RULES:
        run = scored[(scored["model"] == f"{BASELINE_PREFIX}{rule}") & (scored["setting"] == setting)]
        if not run.empty:
            rules[rule] = run.groupby(_INSTANCE)[["atavg", *_GUARD_COLUMNS]].mean()
    return rules


def _floor(run: pd.DataFrame, rules: dict[str, pd.DataFrame]) -> tuple[tuple[str, float] | None, str]:
    """(the floor on ``run``'s instances, a note: empty, or which rule does not cover them)."""
    keys = pd.MultiIndex.from_frame(run[_INSTANCE])
    figures = {}
    for rule, answers in rules.items():
        mine = answers.reindex(keys)
        if mine["atavg"].isna().any():
            return None, f"baseline/{rule} answers {int(mine['atavg'].notna().sum())} of {len(mine)} samples"
        figures[rule] = (float(mine["atavg"].mean()), *_guard_shares(mine))
    return floor_of(figures), ""


def _model_columns(run: pd.DataFrame, rules: dict[str, pd.DataFrame], shares) -> dict:
    """A model run's floor, the rule setting it, and its mark (a failed guard first)."""
    floor, note = _floor(run, rules)
    if note:
        mark = f"floor unknown: {note}"
    else:
        mark = guard_reason(*shares) or floor_mark(float(run["atavg"].mean()), floor)
    return {
        "floor AtAvg (same instances)": floor[1] if floor else float("nan"),
        "floor rule": f"{BASELINE_PREFIX}{floor[0]}" if floor else "",
        MARK: mark,
    }


def _baseline_mark(model: str, shares: tuple[float, float, float]) -> str:
    """A baseline run's mark: the ceiling (gold), a guard that flags it, or kept for the floor."""
    if model.removeprefix(BASELINE_PREFIX) not in NULL_RULES:
        return "the ceiling"
    rules = (COPY_RULE, REUSE_RULE, FLUENCY_RULE)
    flagged = (rule for share, rule in zip(shares, rules) if over_limit(share))
    return next(flagged, IN_FLOOR)


def baselines_table(frame: pd.DataFrame) -> Table:
    """Each run's AtAvg and QAvg per setting, baselines first, each model marked against the
    floor on its own instances (module docstring)."""
    if not has_columns(frame, ("atavg",)):
        return Absent("no automatic-metric scores in the logs")
    # logs scored before a guard existed: its shares are unknown (NaN), not absent
    frame = frame.assign(**{key: frame.get(key, float("nan")) for key in ("context_copy", "story_reuse")})
    if not frame["model"].map(is_baseline).any():
        return Absent("no baseline runs in the logs (import --baselines, or run --model baseline/<rule>)")
    scored = frame.dropna(subset=["atavg"])
    answers = scored["metrics_answer"] if "metrics_answer" in scored else pd.Series(None, index=scored.index)
    scored = scored.assign(not_fluent=_not_fluent(answers))
    rules = {setting: _rule_instances(scored, setting) for setting in scored["setting"].unique()}
    rows = []
    for (setting, row), run in scored.groupby(["setting", "row"], sort=False):
        baseline = bool(is_baseline(run["model"].iloc[0]))
        shares = _guard_shares(run)
        entry = {
            "setting": setting,
            "run": row,
            "baseline": baseline,
            "AtAvg": run["atavg"].mean(),
            "QAvg": run["qavg"].mean() if "qavg" in run else float("nan"),
            "samples": len(run),
            "copied %": shares[0] * 100,
            "story reuse %": shares[1] * 100,
            "not fluent %": shares[2] * 100,
        }
        if baseline:
            entry[MARK] = _baseline_mark(run["model"].iloc[0], shares)
        else:
            entry |= _model_columns(run, rules[setting], shares)
        rows.append(entry)
    table = pd.DataFrame(rows)
    table["order"] = table["setting"].map(lambda s: SETTINGS.index(s) if s in SETTINGS else len(SETTINGS))
    table = table.sort_values(["order", "baseline", "AtAvg"], ascending=[True, False, False])
    return table.drop(columns="order").set_index(["setting", "run"])


def copy_share_table(frame: pd.DataFrame) -> Table:
    """Per run and setting, the % of answers whose ``context_copy`` is above the threshold."""
    if not has_columns(frame, ("context_copy",)):
        return Absent("no context_copy in the logs (scored before the metrics scorer recorded it)")
    scored = frame.dropna(subset=["context_copy"])
    table = (
        scored.assign(copied=is_copied(scored["context_copy"]).astype(float) * 100)
        .pivot_table(index="row", columns="setting", values="copied", aggfunc="mean")
        .rename_axis(index=f"% answers with context_copy > {CONTEXT_COPY_THRESHOLD:g}")
    )
    return table.reindex(columns=[s for s in SETTINGS if s in table.columns])


def baseline_tables(frame: pd.DataFrame) -> dict[str, Table]:
    """The two tables, by name, for ``Report.add``."""
    return {BASELINES_TABLE: baselines_table(frame), COPY_TABLE: copy_share_table(frame)}


class ForgedBaselineError(NarrativeInfillError, ValueError):
    """A log named ``baseline/<rule>`` whose answers are not the rule's: a model passed off as a baseline."""


def check_baseline_log(location: str) -> None:
    """When the log names a ``baseline/<rule>`` model, every answer is the rule's answer to its
    sample (bare or in ``<ANSWER>`` tags), and every metrics score is what those answers score here:
    an edited header cannot hide a model among the baselines, nor an edited score move the context
    baseline the models are marked against. Other logs pass."""
    from functools import partial

    from inspect_ai.log import read_eval_log_samples

    from ....data.baselines import BaselineError, baseline_answer, check_baseline
    from ....solvers.baseline_model import ANSWER_TAG
    from .load import read_log

    header = read_log(location)
    if not is_baseline(header.eval.model):
        return
    rule = str(header.eval.model).removeprefix(BASELINE_PREFIX)
    try:
        check_baseline(rule)
    except BaselineError as err:
        raise ForgedBaselineError(f"{location}: model {header.eval.model!r}: {err}") from None
    pending = []
    for sample in read_eval_log_samples(location, all_samples_required=False):
        if sample.error:
            continue
        try:
            n = int((sample.metadata or {})["n"])
            problem = sample.input if isinstance(sample.input, str) else ""
            answer = baseline_answer(rule, problem, n, gold=partial(str, sample.target))
        except (KeyError, TypeError, ValueError) as err:
            raise ForgedBaselineError(
                f"{location}: sample {sample.id!r} of {header.eval.model}: no rule answer ({err})"
            ) from None
        completion = sample.output.completion if sample.output else ""
        if completion not in (answer, f"{ANSWER_TAG}{answer}</ANSWER>"):
            raise ForgedBaselineError(
                f"{location}: sample {sample.id!r} is named {header.eval.model} but its answer is not "
                f"the {rule} rule's ({completion[:60]!r}): a model's log passed off as a baseline"
            )
        if (entry := _pending(header, sample, completion)) is not None:
            pending.append(entry)
    _rescore_baseline(location, header, pending)


def _pending(header, sample, completion: str):
    """What re-scoring a baseline sample's metrics needs (None: it has no metrics score)."""
    from ....scorers.answer import read_answer
    from ..submission.protocol import extraction_of
    from ..submission.rescore import Pending
    from .load import newest_score

    metrics = newest_score(sample, "metrics")
    if metrics is None:
        return None
    metadata = metrics.metadata or {}
    answer = read_answer(extraction_of(header), completion, str(sample.input)).text
    logged = metrics.value if isinstance(metrics.value, dict) else {}
    where = f"sample {sample.id!r} epoch {sample.epoch}"
    return Pending(
        where,
        answer,
        str(sample.target),
        logged,
        metadata.get("metrics_signature"),
        metadata.get("zero_reasons") or {},
    )


def _rescore_baseline(location: str, header, pending: list) -> None:
    """A baseline's metrics are scored again here from its (rule's) answers, with the log's own
    backbones: its AtAvg is the line models are marked against, so it is never read on trust.
    Where it cannot be re-scored here, the log is refused rather than trusted."""
    from ..submission.protocol import extraction_of
    from ..submission.recompute import Findings, Recheck
    from ..submission.rescore import rescore

    recheck, findings = Recheck(), Findings()
    signature = next((entry.signature for entry in pending if entry.signature), None)
    rescore(pending, signature, extraction_of(header), None, recheck, findings)
    problems = findings.lines()
    if recheck.cannot_rescore:
        problems.append(f"its metrics cannot be re-scored here ({recheck.cannot_rescore})")
    if problems:
        raise ForgedBaselineError(
            f"{location}: {header.eval.model}: a baseline's scores are not taken on trust: "
            + "; ".join(problems)
        )
