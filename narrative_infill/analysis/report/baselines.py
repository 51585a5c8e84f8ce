"""Where copying stands in the report: the null baselines beside the models, and the copy share.

Baseline runs are ordinary logs of ``--model baseline/<rule>`` (``data.baselines``). Two tables:

* ``baselines_vs_models``: per setting, each run's AtAvg and QAvg (where judged), baselines and
  models alike, and for each model the context baseline's AtAvg on the same instances (same
  setting, same problem and gold) with a mark where the model's AtAvg is not above it. A model
  whose instances the context baseline does not all cover is marked so, never compared on a
  part of its instances.
* ``copy_share_by_setting``: per run and setting, the percentage of answers whose
  ``context_copy`` is above ``CONTEXT_COPY_THRESHOLD`` (``definitions.is_copied``).
"""

from __future__ import annotations

import pandas as pd

from ...definitions import CONTEXT_COPY_THRESHOLD, SETTINGS, NarrativeInfillError, is_copied
from .document import Absent, Table, has_columns

BASELINE_PREFIX = "baseline/"
CONTEXT = f"{BASELINE_PREFIX}context"
BASELINES_TABLE = "baselines_vs_models"
COPY_TABLE = "copy_share_by_setting"
NOT_ABOVE = "NOT ABOVE the context baseline"
#: The instance a sample answers: the same problem and gold in the same setting.
_INSTANCE = ["setting", "input", "target"]


def is_baseline(model: str) -> bool:
    """Whether a log's model is one of the null baselines (``baseline/<rule>``)."""
    return str(model).startswith(BASELINE_PREFIX)


def _context_mark(run: pd.DataFrame, context: pd.Series) -> tuple[float, str]:
    """(the context baseline's AtAvg on ``run``'s instances, the mark) for one model run."""
    values = run[_INSTANCE].apply(tuple, axis=1).map(context)
    if values.isna().any():
        missing = int(values.isna().sum())
        return float("nan"), f"no context baseline for {missing} of {len(values)} samples"
    baseline = float(values.mean())
    return baseline, NOT_ABOVE if run["atavg"].mean() <= baseline else "above"


def baselines_table(frame: pd.DataFrame) -> Table:
    """Each run's AtAvg and QAvg per setting, baselines first, each model marked against the
    context baseline on its own instances (module docstring)."""
    if not has_columns(frame, ("atavg",)):
        return Absent("no automatic-metric scores in the logs")
    runs = frame[frame["model"].map(is_baseline)]
    if runs.empty:
        return Absent("no baseline runs in the logs (run the tasks with --model baseline/context, ...)")
    scored = frame.dropna(subset=["atavg"])
    context = scored[scored["model"] == CONTEXT].groupby(_INSTANCE)["atavg"].mean()
    context.index = context.index.map(tuple)
    rows = []
    for (setting, row), run in scored.groupby(["setting", "row"], sort=False):
        baseline = bool(is_baseline(run["model"].iloc[0]))
        entry = {
            "setting": setting,
            "run": row,
            "baseline": baseline,
            "AtAvg": run["atavg"].mean(),
            "QAvg": run["qavg"].mean() if "qavg" in run else float("nan"),
            "samples": len(run),
        }
        if not baseline:
            entry["context AtAvg (same instances)"], entry["vs context"] = _context_mark(run, context)
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

    from ...data.baselines import BaselineError, baseline_answer, check_baseline
    from ...solvers.baseline_model import ANSWER_TAG
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
    from ...scorers.answer import read_answer
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
