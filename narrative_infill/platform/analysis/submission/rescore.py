"""Each sample's automatic metrics scored again from its re-extracted answer (``verify``'s and
``submit``'s recheck, :mod:`.recompute`): with the logs' backbones rebuilt here from their metrics
signature, every metric; without them, an empty answer's 0 and the lexical metrics, and the verdict
says the metrics could not be re-scored here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ....number_rules import RESCORED_TOLERANCE, none_if_nan, same_number, same_rescored
from ....paper_protocol import PAPER_BACKBONE
from .cache import scored_pairs
from .sampling import RESCORED, caught_share, drawn

if TYPE_CHECKING:
    from .recompute import Findings, Recheck


def same_value(a: float | None, b: float | None) -> bool:
    """Two logged or computed values equal (None only with None)."""
    if a is None or b is None:
        return a is None and b is None
    return same_number(a, b)


def _named_backbones(signature: str):
    from ....scorers.metrics.embedding import BackboneUnavailable
    from ....scorers.signature import BackboneSignature

    named = BackboneSignature.parse(signature)
    if named is None:
        raise BackboneUnavailable(f"the logs' metrics signature names no backbones: {signature!r}")
    return named


def backbone_of(signature: str) -> str:
    """The task's ``backbone`` option that scores with the backbones a metric signature names
    (parsed, never guessed from a substring): the packaged MiniLM, else the paper's."""
    from ....scorers.signature import MINILM_DISPLAY

    named = _named_backbones(signature)
    return "minilm" if named.bertscore_model == named.semf1_model == MINILM_DISPLAY else PAPER_BACKBONE


def logged_backbones(claimed: str):
    """The backbones a logged metrics signature names, as this machine loads them: the packaged
    MiniLM, else the paper's or the named models (``paper`` refuses models that are not here
    rather than download them)."""
    from dataclasses import replace

    from ....scorers.metrics.embedding import minilm_path
    from ....scorers.metrics.pairs import resolve_backbones
    from ....scorers.signature import local_model

    named = _named_backbones(claimed)
    backbones = resolve_backbones(
        backbone_of(claimed),
        bertscore_model=local_model(named.bertscore_model, minilm_path()),
        bertscore_layer=named.bertscore_layer,
        semf1_model=local_model(named.semf1_model, minilm_path()),
    )
    # ``backbone=auto`` records why it fell back to MiniLM; the reason decides no number, but it is
    # part of the signature, so the rebuilt backbones carry it (else no auto run verified anywhere)
    return replace(backbones, fallback_reason=named.fallback_reason) if named.fallback_reason else backbones


def metrics_signature_of(run) -> str:
    """The metric signature of a run's newest metrics scores (the first sample that has one)."""
    from ..report.load import score_field

    return next((sig for s in run.samples if (sig := score_field(s, "metrics", "metrics_signature"))), "")


def _backbones_for(signature: str, extraction: str, recheck: Recheck):
    from ....scorers.metrics.embedding import BackboneUnavailable
    from ....scorers.metrics.pairs import metrics_signature

    try:
        backbones = logged_backbones(signature)
    except BackboneUnavailable as err:
        recheck.cannot_rescore = f"backbones absent ({err})"
        return None
    if metrics_signature(backbones, extraction) != signature:
        recheck.cannot_rescore = "this machine's metric libraries or backbones are not the logs' signature's"
        return None
    return backbones


@dataclass(frozen=True)
class Pending:
    """A sample whose metrics can be re-scored: its re-extracted answer, gold and logged values."""

    where: str
    answer: str
    gold: str
    logged: dict
    signature: str | None
    #: why a metric is 0 by definition, as logged (``zero_reasons``)
    reasons: dict


#: The values a model's forward pass decides (and AtAvg, their mean with three exact ones): scored
#: again they are the same within ``RESCORED_TOLERANCE``; the lexical metrics are exact arithmetic.
MODEL_SCORED = ("bertscore", "semf1", "atavg")


def _differing(entry: Pending, fresh: dict[str, float], rescored: bool = False) -> list[str]:
    """The logged values that are not the freshly computed ones, as ``key logged -> fresh``, both in
    full: a difference in the seventh decimal must show. ``rescored``: the values were scored again
    with the backbones (``MODEL_SCORED`` ones compared within ``RESCORED_TOLERANCE``)."""
    differing = []
    for key, value in fresh.items():
        logged = none_if_nan(entry.logged.get(key))
        if rescored and key in MODEL_SCORED and logged is not None:
            same = same_rescored(value, logged)
        else:
            same = same_value(value, logged)
        if not same:
            differing.append(f"{key} {logged!r} -> {float(value)!r}")
    return differing


def _check_empty(empty: list[Pending], findings: Findings) -> None:
    """An empty answer scores 0 on every metric by rule, with the reason recorded: no backbone is
    needed to know it, so it is checked on every machine."""
    from ....scorers.metrics.pairs import METRIC_NAMES

    for entry in empty:
        differing = _differing(entry, dict.fromkeys((*METRIC_NAMES, "atavg"), 0.0))
        if differing:
            findings.add("an empty answer is not scored 0", entry.where, ", ".join(differing))
        elif any(entry.reasons.get(name) != "empty answer" for name in METRIC_NAMES):
            findings.add("an empty answer's 0 has no reason recorded", entry.where, f"{entry.reasons!r}")


def _rescore_lexical(chosen: list[Pending], signature: str, recheck: Recheck, findings: Findings) -> None:
    """Without the backbones: ROUGE-1, METEOR and chrF re-scored (no model needed) where this
    machine's lexical libraries are the signature's, and AtAvg checked as the mean of the five."""
    from ....scorers.metrics.lexical import chrf, lexical_signature, meteor, rouge1_f1
    from ....scorers.metrics.pairs import METRIC_NAMES, atavg, bounded_answer
    from ....scorers.signature import MetricsSignature

    lexical = MetricsSignature.parse(signature).lexical == lexical_signature()
    rules = {"rouge1": rouge1_f1, "meteor": meteor, "chrf": chrf}
    for entry in chosen:
        answer, gold = bounded_answer(entry.answer.strip()), entry.gold.strip()
        fresh = {name: rule(answer, gold) for name, rule in rules.items()}
        logged = {name: none_if_nan(entry.logged.get(name)) for name in METRIC_NAMES}
        mean = {"atavg": atavg(logged)} if None not in logged.values() else {}  # type: ignore[arg-type]
        differing = _differing(entry, {**(fresh if lexical else {}), **mean})
        if differing:
            findings.add("re-scored metrics differ from the logged ones", entry.where, ", ".join(differing))
    recheck.checks.append(
        f"{len(chosen)} samples' AtAvg checked as the mean of their five metrics"
        + (", ROUGE-1, METEOR and chrF re-scored here" if lexical else "")
    )


def _chosen(filled: list[Pending], sample: int | None, seed: str | None, recheck: Recheck) -> list[Pending]:
    """The answered samples whose metrics are re-scored: ``sample`` of them (by default, with a
    submission's ``seed``, ``RESCORED``), drawn from ``seed`` (``sampling``); all without a seed
    (the report's recheck). A draw the caller asked smaller than the default is said unchecked."""
    if seed is None and sample is None:
        return filled
    size = RESCORED if sample is None else sample
    if size >= len(filled):
        return filled
    recheck.seed = seed
    chosen = [filled[i] for i in drawn(len(filled), size, f"{seed}:metrics")]
    if sample is not None and sample < RESCORED:
        recheck.unchecked.append(
            f"metrics re-scored on {sample} of {len(filled)} answered samples (seed {seed}), not all"
        )
    else:
        recheck.sampled.append(
            f"metrics re-scored on {size} of {len(filled)} answered samples, drawn from the submission's "
            f"SHA-256 (an edit of {caught_share(size, len(filled)):.2%} of them is met with 99% probability)"
        )
    return chosen


def rescore(
    pending: list[Pending], signature, rule: str, sample, recheck: Recheck, findings: Findings, seed=None
) -> None:
    """The metrics of the pending samples (all, or those ``_chosen`` from ``seed``) scored again
    with the logs' backbones, where those load here; empty answers always."""
    from ....scorers.metrics.pairs import METRIC_NAMES

    empty = [entry for entry in pending if not entry.answer.strip()]
    _check_empty(empty, findings)
    filled = [entry for entry in pending if entry.answer.strip()]
    if not filled:
        return
    backbones = _backbones_for(signature, rule, recheck) if signature else None
    if not signature:
        recheck.cannot_rescore = "the logs record no metrics signature"
    if backbones is None:
        _rescore_lexical(filled, signature or "", recheck, findings)
        return
    chosen = _chosen(filled, sample, seed, recheck)
    fresh = scored_pairs([p.answer for p in chosen], [p.gold for p in chosen], signature, backbones)
    for entry, scores in zip(chosen, fresh):
        keys = (*METRIC_NAMES, "atavg")
        differing = _differing(entry, {k: v for k, v in scores.items() if k in keys}, rescored=True)
        if differing:
            findings.add("re-scored metrics differ from the logged ones", entry.where, ", ".join(differing))
    recheck.checks.append(
        f"{len(empty)} empty answers' metrics checked as 0; {len(chosen)} answered samples' five metrics "
        f"and AtAvg re-scored here from the re-extracted answers (within {RESCORED_TOLERANCE:g})"
        + (f" (seed {recheck.seed})" if recheck.seed is not None else "")
    )
