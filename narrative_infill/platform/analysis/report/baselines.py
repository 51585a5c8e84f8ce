"""Where copying stands in the report: the null baselines beside the models, and the copy share.

Baseline runs are ordinary logs of ``--model baseline/<rule>`` (``data.baselines``). Two tables:

* ``baselines_vs_models``: per setting, each run's AtAvg and QAvg (where judged), baselines and
  models alike, each run's shares of copied, story-reuse and not-fluent answers (the last read here
  from the logged answers by ``analysis.fluency``: the tasks do not need its model; unknown, so
  every model unranked, where it cannot run), each model's share of stories whose blanks it
  ignores (``analysis.blank_guard``), and for each model the floor on the same instances: every
  null rule is answered and scored here on the models' own instances (``reference.rule_scores``),
  never read from the baseline logs that happen to lie in the folder; the floor is the best AtAvg
  of a rule the story guards do not flag there (``analysis.floor``), with the rule that sets it
  and the mark: the guard a model fails, else whether it is significantly above the floor (a
  one-sided clustered paired test). Baseline logs in the folder are shown as runs, with their
  guard marks.
* ``copy_share_by_setting``: per run and setting, the percentage of answers whose
  ``context_copy`` is above ``CONTEXT_COPY_THRESHOLD`` (``copy_guards.is_copied``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ....copy_guards import CONTEXT_COPY_THRESHOLD, is_copied, is_story_reuse
from ....data.baselines import NULL_RULES
from ....errors import NarrativeInfillError
from ....paper_protocol import SETTINGS
from ..blank_guard import ignored_share, story_key
from ..floor import (
    COPY_RULE,
    FLUENCY_RULE,
    IN_FLOOR,
    NOT_ABOVE,
    REUSE_RULE,
    floor_mark,
    floor_of,
    floor_test,
    guard_reason,
    over_limit,
)
from ..fluency import is_not_fluent
from ..stats import PairedTest
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


def _instance_story(run: pd.DataFrame) -> pd.Series:
    """Each sample's narrative (the cluster of the floor's test and the blank guard's story)."""
    ids = run["id"] if "id" in run else pd.Series(None, index=run.index)
    return pd.Series([story_key(i, str(p)) for i, p in zip(ids, run["input"])], index=run.index)


def _computed_rules(scored: pd.DataFrame) -> dict[tuple[str, str], dict | str]:
    """Per (setting, metrics signature) of the model runs, each null rule's answer to every
    instance they answered (``submission.reference.rule_scores``): computed here, never read from
    whichever baseline logs lie in the folder (without the story-reading rules' logs the floor was
    ``baseline/empty`` at 0). Where they cannot be computed here (backbones out of reach, a problem
    with no blank), why, as text: the models there get "floor unknown", never a floor of a part."""
    from ....paper_protocol import PAPER_PROMPT_VARIANT
    from ..submission.reference import rule_scores

    models = scored[~scored["model"].map(is_baseline)]
    found: dict[tuple[str, str], dict | str] = {}
    for (setting, signature), rows in models.groupby(["setting", "metrics_signature"], dropna=False):
        firsts = rows.drop_duplicates(_INSTANCE)
        instances = {
            (setting, problem, gold): (setting, sample_id, problem, _sentences_of(n, gold), gold)
            for problem, gold, sample_id, n in zip(
                firsts["input"].map(str),
                firsts["target"].map(str),
                firsts["id"],
                firsts["metadata_n"] if "metadata_n" in firsts else [None] * len(firsts),
            )
        }
        try:
            found[(setting, str(signature))] = rule_scores(instances, str(signature), PAPER_PROMPT_VARIANT)
        except Exception as err:  # backbones or data out of reach: the models' marks say so
            found[(setting, str(signature))] = (
                f"the null rules cannot be scored here ({type(err).__name__}: {err})"
            )
    return found


def _sentences_of(n, gold: str) -> int:
    """The instance's sentence count: its metadata ``n``, else the gold's sentences."""
    from ....scorers.metrics.pairs import sentences

    try:
        return max(1, int(n))
    except (TypeError, ValueError):
        return max(1, len(sentences(gold)))


def _floor(run: pd.DataFrame, rules: dict) -> tuple[tuple[str, float] | None, PairedTest | None]:
    """(the floor on ``run``'s instances, the run's paired test against the rule setting it)."""
    from ..submission.reference import rule_shares

    means = run.groupby(_INSTANCE, sort=True)["atavg"].mean()
    stories = _instance_story(run).groupby([run[c] for c in _INSTANCE], sort=True).first()
    keys = list(means.index)
    missing = [key for key in keys if key not in next(iter(rules.values()), {})]
    if missing:  # a run scored under two signatures: its instances are not all in one rule set
        raise KeyError(f"{len(missing)} of its {len(keys)} instances have no null-rule answer here")
    figures = {}
    for rule, answered in rules.items():
        mine = {key: answered[key] for key in keys}
        figures[rule] = (float(np.mean([atavg for atavg, *_ in mine.values()])), *rule_shares(mine)[:3])
    floor = floor_of(figures)
    if floor is None:
        return None, None
    values = [rules[floor[0]][key][0] for key in keys]
    return floor, floor_test(list(means.values), values, list(stories.values))


def _model_columns(run: pd.DataFrame, rules: dict | str, shares) -> dict:
    """A model run's floor, the rule setting it, and its mark (a failed guard first)."""
    try:
        floor, test = _floor(run, rules) if isinstance(rules, dict) else (None, None)
    except KeyError as err:
        rules = str(err.args[0])
        floor, test = None, None
    if isinstance(rules, str):
        mark = f"floor unknown: {rules}"
    else:
        mark = guard_reason(*shares) or floor_mark(test, floor)
    return {
        "floor AtAvg (same instances)": floor[1] if floor else float("nan"),
        "floor rule": f"{BASELINE_PREFIX}{floor[0]}" if floor else "",
        MARK: mark,
    }


def _ignored(run: pd.DataFrame) -> float:
    """The run's share of stories whose blanks its answers ignore (``blank_guard``), per setting."""
    answers = run["metrics_answer"].fillna("") if "metrics_answer" in run else pd.Series("", index=run.index)
    return ignored_share(
        zip(_instance_story(run), run["input"].map(str), run["target"].map(str), answers.map(str))
    )


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
    frame = frame.assign(metrics_signature=frame.get("metrics_signature", "none"))
    scored = frame.dropna(subset=["atavg"])
    answers = scored["metrics_answer"] if "metrics_answer" in scored else pd.Series(None, index=scored.index)
    scored = scored.assign(not_fluent=_not_fluent(answers))
    models = scored[~scored["model"].map(is_baseline)]
    rules = _computed_rules(scored) if not models.empty else {}
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
            signature = str(run["metrics_signature"].iloc[0])
            entry["blank ignored %"] = _ignored(run) * 100
            entry |= _model_columns(run, rules[(setting, signature)], (*shares, _ignored(run)))
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
