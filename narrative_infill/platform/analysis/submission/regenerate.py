"""``verify --regenerate K --model MODEL``: the check no file can fake.

K instances of each setting are drawn with a seed picked at run time, generated again through
Inspect (the setting's task with the logs' task arguments, restricted to those sample ids, with
the declared generation config), scored with the logs' metric backbones, and the submission's
per-instance AtAvg on those instances is compared with the regenerated one.

The test: for each drawn instance, d = submitted AtAvg (the mean of its epochs) - regenerated
AtAvg. For an honest submission made with the same model and decoding, the submitted and the
regenerated answer are two independent draws from the same distribution, so d is symmetric
about 0 and the one-sided Wilcoxon signed-rank test (scipy) of "d tends to be positive" has
exactly its level ``ALPHA`` as false-alarm rate. A fabricated submission (answers replaced by the
gold span: AtAvg near 1) gives d > 0 on nearly every instance: with K instances the smallest
p-value is 2**-K, so K >= 8 per test suffices to fail it at ``ALPHA`` = 0.01.
"""

from __future__ import annotations

import random
import secrets
import tempfile
from dataclasses import dataclass, field
from statistics import fmean

from ....errors import NarrativeInfillError
from ....number_rules import none_if_nan
from .build import ATAVG_COLUMN

ALPHA = 0.01


class RegenerationError(NarrativeInfillError, RuntimeError):
    """The re-generation could not run (model unreachable, a run that did not finish)."""


@dataclass
class Retest:
    """What a re-test of the submitted scores found (``--regenerate``, ``--rejudge``): its seed, the
    model it ran, its verdict lines, its p-value, and the submitted and fresh means it compared."""

    seed: int
    model: str
    checks: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    p_value: float | None = None
    submitted: float | None = None
    fresh: float | None = None


def _task_for(run, backbone: str):
    from ....tasks.infill import infill_task
    from .protocol import extraction_of

    spec = run.header.eval
    args = dict(spec.task_args or {})
    args.setdefault("data", (spec.metadata or {}).get("data", "hf"))
    args.pop("judge", None)
    args.setdefault("extraction", extraction_of(run.header))
    args.update(backbone=backbone, judge=False)  # AtAvg is what is compared; no grader needed
    return infill_task(run.setting, **args)


def _regenerated_atavg(run, ids: list[str], model: str, backbone: str) -> dict[str, float]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log_samples

    config = run.header.eval.model_generate_config.model_dump(exclude_none=True)
    out = {}
    with tempfile.TemporaryDirectory(prefix="narrative-infill-regenerate-") as scratch:
        (log,) = inspect_eval(
            _task_for(run, backbone),
            model=model,
            sample_id=ids,
            log_dir=scratch,
            display="none",
            **config,
        )
        if log.status != "success":
            raise RegenerationError(f"re-generation of {run.setting} ended {log.status}: {log.error}")
        for sample in read_eval_log_samples(log.location):  # read before the folder goes
            value = (sample.scores or {}).get("metrics")
            atavg = none_if_nan(value.value.get("atavg")) if value and isinstance(value.value, dict) else None
            if atavg is not None:
                out[str(sample.id)] = atavg
    return out


def wilcoxon_greater(differences: list[float]) -> float:
    """One-sided signed-rank p-value of "the differences tend to be positive"; 1 when all are 0."""
    from scipy.stats import wilcoxon

    if not any(differences):
        return 1.0
    return float(wilcoxon(differences, alternative="greater").pvalue)


def regenerate(document: dict, runs: list, model, k: int, alpha: float = ALPHA) -> Retest:
    """Draw ``k`` instances per setting, generate them again with ``model`` (a name or an Inspect
    ``Model``), and test the submission's per-instance AtAvg on them against the regenerated one."""
    from .rescore import backbone_of, metrics_signature_of

    result = Retest(seed=secrets.randbits(32), model=str(model))
    rng = random.Random(result.seed)
    if model != document["model"]["id"]:
        result.warnings.append(
            f"re-generated with {model}, the submission declares {document['model']['id']}"
        )
    differences, submitted_all, regenerated_all = [], [], []
    for run in runs:
        by_instance: dict[str, list[float]] = {}
        for row in document["samples"].get(run.setting, []):
            if row[ATAVG_COLUMN] is not None:
                by_instance.setdefault(row[0], []).append(row[ATAVG_COLUMN])
        ids = rng.sample(sorted(by_instance), min(k, len(by_instance)))
        fresh = _regenerated_atavg(run, ids, model, backbone_of(metrics_signature_of(run)))
        missing = sorted(set(ids) - set(fresh))
        if missing:
            result.warnings.append(
                f"{run.setting}: {len(missing)} drawn instance(s) not re-scored: {missing[:5]}"
            )
        for sample_id in ids:
            if sample_id in fresh:
                submitted = fmean(by_instance[sample_id])
                differences.append(submitted - fresh[sample_id])
                submitted_all.append(submitted)
                regenerated_all.append(fresh[sample_id])
    if not differences:
        raise RegenerationError("no drawn instance could be re-generated and scored")
    result.p_value = wilcoxon_greater(differences)
    result.submitted, result.fresh = fmean(submitted_all), fmean(regenerated_all)
    summary = (
        f"{len(differences)} instances re-generated with {result.model} (seed {result.seed}): "
        "submitted AtAvg "
        f"{result.submitted:.4f}, re-generated {result.fresh:.4f}; one-sided Wilcoxon signed-rank "
        f"p = {result.p_value:.3g} (fails below {alpha:g})"
    )
    if result.p_value < alpha:
        result.failures.append(
            f"re-generation: the submitted scores are higher than the model reproduces: {summary}"
        )
    else:
        result.checks.append(f"re-generation consistent: {summary}")
    return result
