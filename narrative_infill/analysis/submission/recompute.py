"""Recompute each sample's scores from what the model and the graders actually wrote.

For every sample of every log: its summary (what the claims are built from) is compared with its
full record, and every summary must have one; the model calls that generated it must be the
log's model; the answer is extracted again from the raw output and compared
with the logged answer (of both scorers), the truncated flag with the output's stop reason, the
problem and gold with the benchmark's instance (when the data is readable here), and each
grader's scores parsed again from its raw reply and averaged again into QAvg. With the logs'
metric backbones available, the automatic metrics of every sample (or of ``sample`` of them,
drawn from a seed picked here at run time, never from the file) are scored again from the
re-extracted answer. Whatever could not be recomputed is said in ``Recheck.unchecked``.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from ...definitions import none_if_nan, same_number
from ..sample_records import summary_problem

#: Mismatches of one kind listed by sample before the rest are only counted.
LISTED = 5


@dataclass
class Recheck:
    checks: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    seed: int | None = None


def _scores(sample) -> tuple[Any, Any]:
    """The sample's newest metrics and judge scores: the ones its claims are built from
    (``metrics1`` appended after ``metrics`` is what counts, so it is what gets recomputed)."""
    from ..report.load import newest_score

    return newest_score(sample, "metrics"), newest_score(sample, "judge")


def _generators(full) -> set[str]:
    """The models that generated the sample's output (its model calls without a role; a grader's
    calls carry theirs)."""
    return {e.model for e in full.events if e.event == "model" and e.role is None}


def _problem(sample) -> str:
    """The problem text the scorers saw (``TaskState.input_text``: the sample's input)."""
    if isinstance(sample.input, str):
        return sample.input
    return "\n".join(m.text for m in sample.input if m.role == "user")


def _judgement_problems(judged) -> list[str]:
    """Why a logged judgement is not what its graders' raw replies give (empty when it is)."""
    from ...scorers.judge.parse import JudgementError, parse_judgement
    from ...scorers.judge.rubric import dimensions_of

    verdicts = (judged.metadata or {}).get("judges") or {}
    problems, values = [], []
    for name, verdict in verdicts.items():
        if "values" not in verdict:
            continue
        try:
            parsed = parse_judgement((verdict.get("raw") or [""])[-1]).scores
        except JudgementError as err:
            problems.append(f"grader {name}'s last reply gives no scores ({err})")
            continue
        if parsed != verdict.get("scores"):
            problems.append(f"grader {name}'s reply gives {parsed}, the log says {verdict.get('scores')}")
        if "expected_scores" not in verdict and verdict["values"] != parsed:
            problems.append(f"grader {name}'s values {verdict['values']} are not its parsed scores")
        values.append(verdict["values"])
    logged = judged.value if isinstance(judged.value, dict) else {}
    dimensions = dimensions_of((judged.metadata or {}).get("judge_variant"))
    for dimension in dimensions:
        expected = fmean(v[dimension] for v in values) if values else None
        if not _same(expected, none_if_nan(logged.get(dimension))):
            problems.append(f"{dimension} {logged.get(dimension)!r}, its graders give {expected!r}")
    dims = [fmean(v[d] for v in values) for d in dimensions] if values else None
    qavg = fmean(dims) if dims else None
    if not _same(qavg, none_if_nan(logged.get("qavg"))):
        problems.append(f"qavg {logged.get('qavg')!r}, its graders give {qavg!r}")
    return problems


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return same_number(a, b)


class _Findings:
    """Mismatches grouped by kind: the first few named by sample, the rest counted."""

    def __init__(self):
        self.kinds: dict[str, list[str]] = {}

    def add(self, kind: str, where: str, detail: str) -> None:
        self.kinds.setdefault(kind, []).append(f"{where}: {detail}")

    def lines(self) -> list[str]:
        out = []
        for kind, items in self.kinds.items():
            more = f" (and {len(items) - LISTED} more)" if len(items) > LISTED else ""
            out.append(f"{kind} in {len(items)} sample(s){more}: " + "; ".join(items[:LISTED]))
        return out


def _instances(runs, recheck: Recheck) -> dict[str, Any] | None:
    """The benchmark instances the logs say they read, by id; None when not readable here."""
    from ...data.dataset import load_benchmark

    identity = (runs[0].header.eval.metadata or {}).get("dataset_identity") or {}
    spec = runs[0].header.eval
    data = (spec.task_args or {}).get("data", (spec.metadata or {}).get("data", "hf"))
    try:
        loaded = load_benchmark(data, (runs[0].header.eval.task_args or {}).get("revision"))
    except Exception as err:  # offline hub, or a local file not here: say so below
        recheck.unchecked.append(f"problems and golds not compared with the data ({type(err).__name__})")
        return None
    if identity and dict(loaded.identity) != {k: v for k, v in identity.items() if k != "instances"}:
        recheck.unchecked.append(
            "problems and golds not compared with the data (this machine reads other data)"
        )
        return None
    return {i.sample_id: i for i in loaded.instances}


def _named_backbones(signature: str):
    from ...scorers.metrics.embedding import BackboneUnavailable
    from ...scorers.metrics.signature import BackboneSignature

    named = BackboneSignature.parse(signature)
    if named is None:
        raise BackboneUnavailable(f"the logs' metrics signature names no backbones: {signature!r}")
    return named


def backbone_of(signature: str) -> str:
    """The task's ``backbone`` option that scores with the backbones a metric signature names
    (parsed, never guessed from a substring): the packaged MiniLM, else the paper's."""
    from ...scorers.metrics.signature import MINILM_DISPLAY

    named = _named_backbones(signature)
    return "minilm" if named.bertscore_model == named.semf1_model == MINILM_DISPLAY else "paper"


def logged_backbones(claimed: str):
    """The backbones a logged metrics signature names, as this machine loads them: the packaged
    MiniLM, else the paper's or the named models (``paper`` refuses models that are not here
    rather than download them)."""
    from ...scorers.metrics.embedding import minilm_path
    from ...scorers.metrics.pairs import resolve_backbones
    from ...scorers.metrics.signature import local_model

    named = _named_backbones(claimed)
    return resolve_backbones(
        backbone_of(claimed),
        bertscore_model=local_model(named.bertscore_model, minilm_path()),
        bertscore_layer=named.bertscore_layer,
        semf1_model=local_model(named.semf1_model, minilm_path()),
    )


def metrics_signature_of(run) -> str:
    """The metric signature of a run's newest metrics scores (the first sample that has one)."""
    from ..report.load import score_field

    return next((sig for s in run.samples if (sig := score_field(s, "metrics", "metrics_signature"))), "")


def _backbones_for(signature: str, extraction: str, recheck: Recheck):
    from ...scorers.metrics.embedding import BackboneUnavailable
    from ...scorers.metrics.pairs import metrics_signature
    from ...scorers.metrics.scorer import with_extraction

    try:
        backbones = logged_backbones(signature)
    except BackboneUnavailable as err:
        recheck.unchecked.append(f"metrics not re-scored: backbones absent ({err})")
        return None
    if with_extraction(metrics_signature(backbones), extraction) != signature:
        recheck.unchecked.append(
            "metrics not re-scored: this machine's metric libraries or backbones differ "
            "from the logs' signature"
        )
        return None
    return backbones


@dataclass(frozen=True)
class _Pending:
    """A sample whose metrics can be re-scored: its re-extracted answer, gold and logged values."""

    where: str
    answer: str
    gold: str
    logged: dict
    signature: str | None


def recheck_runs(runs, sample: int | None = None, protocol=None) -> Recheck:
    """Every sample of ``runs`` recomputed from its raw outputs; metrics re-scored on all of them,
    or on ``sample`` of them drawn from a seed picked now; each sample's prompt and cap checked
    against ``protocol`` (a ranked track's)."""
    from inspect_ai.log import read_eval_log_samples

    from .protocol import extraction_of

    recheck, findings = Recheck(), _Findings()
    instances = _instances(runs, recheck)
    pending: list[_Pending] = []
    total = 0
    for run in runs:
        rules = {name: extraction_of(run.header, name) for name in ("metrics", "judge")}
        summaries = {(str(s.id), s.epoch): s for s in run.samples}  # what the claims were built from
        for full in read_eval_log_samples(run.location, all_samples_required=False):
            total += 1
            listed = summaries.pop((str(full.id), full.epoch), None)
            entry = _recheck_sample(run, full, listed, rules, instances, findings, protocol)
            if entry is not None:
                pending.append(entry)
        for sample_id, epoch in sorted(summaries):  # listed, so claimed, but not there to re-read
            findings.add(
                "the sample has no record in the log to re-read",
                f"{run.setting} {sample_id} epoch {epoch}",
                "only its summary",
            )
    recheck.checks.append(
        f"{total} samples re-read: each summary compared with its record, the generating model "
        "with the log's, answers re-extracted from the raw outputs, "
        "truncation from the stop reason, context_copy and story_reuse from the answer, "
        "judge scores re-parsed from the graders' replies"
        + (", problems and golds compared with the data" if instances else "")
    )
    signature = next((entry.signature for entry in pending if entry.signature), None)
    _rescore(pending, signature, extraction_of(runs[0].header), sample, recheck, findings)
    recheck.failures += findings.lines()
    return recheck


def _recheck_sample(run, full, listed, rules, instances, findings: _Findings, protocol) -> _Pending | None:
    """One sample's record checked against its summary, its model, the protocol, its raw output, the
    data and its graders' replies; what its metrics re-scoring needs (None: nothing to re-score)."""
    from ...scorers.answer import read_answer
    from ...scorers.metrics.copying import context_copy
    from ...scorers.metrics.reuse import story_reuse
    from .protocol import sample_protocol_problem

    where = f"{run.setting} {full.id} epoch {full.epoch}"
    if listed is not None and (mismatch := summary_problem(listed, full)):
        findings.add("the sample's summary disagrees with its record", where, mismatch)
    if others := _generators(full) - {run.header.eval.model}:
        findings.add(
            "generated by another model than the log's",
            where,
            f"{sorted(others)}, the header names {run.header.eval.model!r}",
        )
    if protocol is not None and (off := sample_protocol_problem(full, run.setting, protocol)):
        findings.add("off the track's protocol", where, off)
    metrics, judged = _scores(full)
    if full.error or metrics is None:
        return None  # the protocol check names errored samples; nothing here to recompute
    answers = {
        name: read_answer(rule, full.output.completion, _problem(full)).text for name, rule in rules.items()
    }
    logged = {n: s.answer for n, s in (("metrics", metrics), ("judge", judged)) if s is not None}
    if any((text or "") != answers[name] for name, text in logged.items()):
        findings.add(
            "logged answer is not the extraction of the raw output",
            where,
            f"logged {logged}, extracted {answers}",
        )
    cut = float(full.output.stop_reason == "max_tokens")
    if none_if_nan((metrics.value or {}).get("truncated")) != cut:
        findings.add(
            "truncated flag disagrees with the stop reason", where, f"stop {full.output.stop_reason}"
        )
    copied = none_if_nan((metrics.value or {}).get("context_copy"))  # absent in older logs
    if copied is not None and not _same(copied, context_copy(answers["metrics"], _problem(full))):
        findings.add("context_copy is not the copy share of the answer", where, f"logged {copied!r}")
    reused = none_if_nan((metrics.value or {}).get("story_reuse"))  # absent in older logs
    if reused is not None and not _same(reused, story_reuse(answers["metrics"], _problem(full))):
        findings.add("story_reuse is not the story share of the answer", where, f"logged {reused!r}")
    instance = instances.get(str(full.id)) if instances is not None else None
    if instances is not None and (
        instance is None or instance.problem != _problem(full) or instance.gold_answer != str(full.target)
    ):
        findings.add("problem or gold differs from the benchmark's", where, "edited sample")
    if judged is not None:
        for problem in _judgement_problems(judged):
            findings.add("judge scores are not what the graders replied", where, problem)
    gold = instance.gold_answer if instance is not None else str(full.target)
    signature = (metrics.metadata or {}).get("metrics_signature")
    return _Pending(where, answers["metrics"], gold, metrics.value or {}, signature)


def _rescore(
    pending: list[_Pending], signature, rule: str, sample, recheck: Recheck, findings: _Findings
) -> None:
    """The metrics of the pending samples (or of ``sample`` of them, drawn from a seed picked now)
    scored again with the logs' backbones, where those load here."""
    from ...scorers.metrics.pairs import METRIC_NAMES, score_pairs

    backbones = _backbones_for(signature, rule, recheck) if pending and signature else None
    if backbones is None:
        return
    chosen = pending
    if sample is not None and sample < len(pending):
        recheck.seed = secrets.randbits(32)
        chosen = random.Random(recheck.seed).sample(pending, sample)
        recheck.unchecked.append(
            f"metrics re-scored on {sample} of {len(pending)} samples (seed {recheck.seed}), not all"
        )
    fresh = score_pairs([p.answer for p in chosen], [p.gold for p in chosen], backbones)
    for entry, scores in zip(chosen, fresh):
        differing = [
            f"{k} {none_if_nan(entry.logged.get(k))!r} -> {v:.4f}"
            for k, v in scores.values.items()
            if k in (*METRIC_NAMES, "atavg") and not _same(v, none_if_nan(entry.logged.get(k)))
        ]
        if differing:
            findings.add("re-scored metrics differ from the logged ones", entry.where, ", ".join(differing))
    recheck.checks.append(
        f"{len(chosen)} samples' five metrics and AtAvg re-scored here from the re-extracted answers"
        + (f" (seed {recheck.seed})" if recheck.seed is not None else "")
    )
