"""Recompute each sample's scores from what the model and the graders actually wrote.

For every sample of every log: its summary (what the claims are built from) is compared with its
full record, and every summary must have one; the model calls that generated it must be the log's
model, its output theirs and its epoch the one it was generated in (``transcript``); the answer is
extracted again from the raw output and compared with the logged answer (of both scorers), the
truncated flag with the output's stop reason, the problem and gold with the benchmark's instance
(when the data is readable here), and each grader's scores parsed again from its raw reply (which
must be a reply of that grader model's calls in the transcript) and averaged again into QAvg. With
the logs' metric backbones available, the automatic metrics of every sample (or of a draw seeded by
the submission's SHA-256, ``sampling.RESCORED`` or ``sample`` of them) are scored again from the
re-extracted answer. An empty answer's metrics must be 0 with the reason recorded; without the
backbones the lexical metrics are still re-scored, but the verdict says the metrics could not be
re-scored here (``Recheck.cannot_rescore``). Whatever else was not recomputed: ``Recheck.unchecked``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from ....number_rules import none_if_nan, same_number
from ..sample_records import summary_problem
from .rescore import Pending, rescore, same_value
from .transcript import is_import, sample_findings

#: Mismatches of one kind listed by sample before the rest are only counted.
LISTED = 5


@dataclass
class Recheck:
    checks: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    seed: str | None = None
    #: what a draw decided, sized for its stated error rates (``sampling``): said in the verdict
    sampled: list[str] = field(default_factory=list)
    #: why the metrics of answered samples could not be re-scored here (None: they were, or none had any)
    cannot_rescore: str | None = None


def answer_derived() -> dict[str, tuple[Any, str]]:
    """Per-sample metric values rebuilt from the answer and the story alone (no backbone), by key:
    (the function of (answer, story), what the value is). A logged value must be its function's;
    an absent one (older logs) is not compared. One more answer-derived key is one more line."""
    from ....scorers.metrics.copying import context_copy
    from ....scorers.metrics.reuse import story_reuse

    return {
        "context_copy": (context_copy, "the copy share of the answer"),
        "story_reuse": (story_reuse, "the story share of the answer"),
    }


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


def _grader_calls(full) -> Counter[tuple[str, str]]:
    """(model, reply) of every grader call in the sample's transcript (its model calls with a role):
    what ``inspect view`` shows the graders answered."""
    return Counter(
        (str(e.model), e.output.completion) for e in full.events if e.event == "model" and e.role is not None
    )


def _transcript_problems(judged, calls: Counter[tuple[str, str]]) -> list[str]:
    """Where a judge score's own account of its graders (who, where, what each replied) is not
    what its record and transcript give: the flat fields are rebuilt from the per-grader entries,
    and every reply an entry holds must be a call of that model in the transcript."""
    from ....scorers.judge.endpoint import where_judged
    from ....scorers.signature import JudgeSignature

    metadata, problems = judged.metadata or {}, []
    verdicts = metadata.get("judges") or {}
    rule = JudgeSignature.parse(metadata.get("judge_models")).extraction  # its models are checked here
    rebuilt = {
        **where_judged(verdicts),
        "judge_models": str(JudgeSignature({n: str(v.get("model")) for n, v in verdicts.items()}, rule)),
    }
    for name, value in rebuilt.items() if verdicts else ():
        recorded = str(metadata.get(name))
        if name in metadata and recorded != value:
            problems.append(f"{name} {recorded!r}, its graders' entries give {value!r}")
    claimed = Counter((str(v.get("model")), raw) for v in verdicts.values() for raw in v.get("raw") or [])
    if unmade := sorted(claimed - calls):
        named = ", ".join(f"{model}: {reply[:80]!r}" for model, reply in unmade[:2])
        problems.append(
            f"{len(unmade)} grader repl(ies) recorded in the score are not the replies of its grader "
            f"calls in the transcript ({named})"
        )
    return problems


def _judgement_problems(judged, weighted: bool) -> list[str]:
    """Why a logged judgement is not what its graders' raw replies give (empty when it is). A
    grader's values are its parsed scores; only a run that asked for probability weighting may
    replace them, by the expected scores its verdict records."""
    from ....scorers.judge.parse import JudgementError, parse_judgement
    from ....scorers.judge.rubric import dimensions_of

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
        expected = verdict.get("expected_scores", parsed) if weighted else parsed
        if verdict["values"] != expected:
            problems.append(
                f"grader {name}'s values {verdict['values']} are not its "
                + ("expected scores" if weighted and "expected_scores" in verdict else "parsed scores")
                + ("" if weighted else " (the run asked for no probability weighting)")
            )
        values.append(verdict["values"])
    logged = judged.value if isinstance(judged.value, dict) else {}
    dimensions = dimensions_of((judged.metadata or {}).get("judge_variant"))
    for dimension in dimensions:
        expected = fmean(v[dimension] for v in values) if values else None
        if not same_value(expected, none_if_nan(logged.get(dimension))):
            problems.append(f"{dimension} {logged.get(dimension)!r}, its graders give {expected!r}")
    dims = [fmean(v[d] for v in values) for d in dimensions] if values else None
    qavg = fmean(dims) if dims else None
    if not same_value(qavg, none_if_nan(logged.get("qavg"))):
        problems.append(f"qavg {logged.get('qavg')!r}, its graders give {qavg!r}")
    failed = sum("failed" in v for v in verdicts.values()) / len(verdicts) if verdicts else None
    if "grader_failed" in logged and not same_value(failed, none_if_nan(logged["grader_failed"])):
        problems.append(f"grader_failed {logged['grader_failed']!r}, its graders give {failed!r}")
    return problems


def _judge_problems(run, full, judged) -> list[str]:
    """Everything that makes a sample's judge score not what its graders did, as the transcript
    and the run's judge options (probability weighting asked or not) give it."""
    from .protocol import scorer_options

    weighted = bool((scorer_options(run.header, "judge") or {}).get("probability_weighted"))
    return _transcript_problems(judged, _grader_calls(full)) + _judgement_problems(judged, weighted)


class Findings:
    """Mismatches grouped by kind: the first few named by sample, the rest counted."""

    def __init__(self):
        self.kinds: dict[str, list[tuple[str, str]]] = {}

    def add(self, kind: str, where: str, detail: str) -> None:
        self.kinds.setdefault(kind, []).append((where, detail))

    def lines(self) -> list[str]:
        """One line a kind, counting the samples it was found in (a sample may hold several)."""
        out = []
        for kind, items in self.kinds.items():
            samples = len({where for where, _ in items})
            more = f" ({len(items) - LISTED} more not listed)" if len(items) > LISTED else ""
            named = "; ".join(f"{where}: {detail}" for where, detail in items[:LISTED])
            out.append(f"{kind} in {samples} sample(s){more}: {named}")
        return out


def _instances(runs, recheck: Recheck) -> dict[str, dict[str, Any]] | None:
    """The benchmark instances the logs say they read, by id and by problem text (an import's rows
    name their own ids); None when not readable here."""
    from ....data.dataset import load_benchmark

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
    return {
        "id": {i.sample_id: i for i in loaded.instances},
        "problem": {i.problem: i for i in loaded.instances},
    }


def recheck_runs(runs, sample: int | None = None, protocol=None, seed: str | None = None) -> Recheck:
    """Every sample of ``runs`` recomputed from its raw outputs; metrics re-scored on all of them,
    or on a draw from ``seed`` (``rescore._chosen``); each sample's prompt and cap checked
    against ``protocol`` (a ranked track's)."""
    from inspect_ai.log import read_eval_log_samples

    from .protocol import extraction_of

    recheck, findings = Recheck(), Findings()
    instances = _instances(runs, recheck)
    pending: list[Pending] = []
    total = 0
    for run in runs:
        rules = {name: extraction_of(run.header, name) for name in ("metrics", "judge")}
        summaries = {(str(s.id), s.epoch): s for s in run.samples}  # what the claims were built from
        # the transcript's texts whole: Inspect stores a long one once, as an attachment
        samples = read_eval_log_samples(run.location, all_samples_required=False, resolve_attachments="core")
        for full in samples:
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
    imports = sorted(run.setting for run in runs if is_import(run.header))
    if imports:
        recheck.unchecked.append(
            f"the outputs of {', '.join(imports)} were imported: compared with the responses the "
            "import stores, no model call in the logs generated them"
        )
    recheck.checks.append(
        f"{total} samples re-read: each summary compared with its record, the output with its "
        "generating model call and the epoch with the one it was generated in, the generating model "
        "with the log's, answers re-extracted from the raw outputs, "
        "truncation from the stop reason, context_copy and story_reuse from the answer, "
        "judge scores re-parsed from the graders' replies"
        + (", problems and golds compared with the data" if instances else "")
    )
    signature = next((entry.signature for entry in pending if entry.signature), None)
    rescore(pending, signature, extraction_of(runs[0].header), sample, recheck, findings, seed)
    recheck.failures += findings.lines()
    return recheck


def _recheck_sample(run, full, listed, rules, instances, findings: Findings, protocol) -> Pending | None:
    """One sample's record checked against its summary, its model, the protocol, its raw output, the
    data and its graders' replies; what its metrics re-scoring needs (None: nothing to re-score)."""
    from ....scorers.answer import read_answer
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
    if metrics is not None or judged is not None:  # an output something was claimed from
        for kind, detail in sample_findings(full, is_import(run.header), protocol):
            findings.add(kind, where, detail)
    if judged is not None:
        for problem in _judge_problems(run, full, judged):
            findings.add("judge scores are not what the graders replied", where, problem)
    if metrics is None:
        return None  # nothing here to recompute (an errored sample's scores, if any, are rechecked)
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
    for key, (rebuild, meaning) in answer_derived().items():
        logged_value = none_if_nan((metrics.value or {}).get(key))  # absent in older logs
        rebuilt = rebuild(answers["metrics"], _problem(full))
        if logged_value is not None and not same_value(logged_value, rebuilt):
            findings.add(f"{key} is not {meaning}", where, f"logged {logged_value!r}")
    instance = _benchmark_instance(run, full, instances, where, findings)
    gold = instance.gold_answer if instance is not None else str(full.target)
    metadata = metrics.metadata or {}
    logged_metrics = metrics.value if isinstance(metrics.value, dict) else {}
    return Pending(
        where,
        answers["metrics"],
        gold,
        logged_metrics,
        metadata.get("metrics_signature"),
        metadata.get("zero_reasons") or {},
    )


def _benchmark_instance(run, full, instances, where: str, findings: Findings):
    """The benchmark's instance the sample answers (None: not readable here, or an import's own
    problem), an edit named where the sample is not that instance. A generated sample is the
    instance its id names; an imported row names its own id, so it is the instance of its problem
    text, and a problem the benchmark lacks is the file's own (custom data)."""
    if instances is None:
        return None
    imported = is_import(run.header)
    instance = instances["problem"].get(_problem(full)) if imported else instances["id"].get(str(full.id))
    if (instance is None and not imported) or (
        instance is not None
        and (instance.problem, instance.gold_answer) != (_problem(full), str(full.target))
    ):
        findings.add("problem or gold differs from the benchmark's", where, "edited sample")
    return instance


def recheck_or_refuse(runs, document: dict, sample: int | None = None):
    """``submit``'s recheck of its ``document``: every sample of ``runs`` recomputed as ``verify``
    does; ``SubmissionError`` listing what the records (or the headers' means) do not give, else the
    :class:`Recheck` (its ``cannot_rescore`` says when the metrics were not re-scored)."""
    from .build import SubmissionError
    from .protocol import PROTOCOLS
    from .sampling import fluency_line

    recheck = recheck_runs(runs, sample, PROTOCOLS.get(document["track"]), document["sha256"])
    if (read := fluency_line(document["settings"])) and read[1]:
        recheck.sampled.append(read[0])
    for run in runs:
        recheck.failures += header_problems(run, document["settings"][run.setting])
    if recheck.failures:
        raise SubmissionError(
            "the logs' scores are not what their sample records give (recomputed here):\n  "
            + "\n  ".join(recheck.failures)
        )
    return recheck


def header_problems(run, claims: dict) -> list[str]:
    """Where the log's header (``results``: what ``inspect view`` and ``evals_df`` show) disagrees
    with the means its sample records give, field by field: an edited header is refused, not
    warned about. Only the newest scorings count (the claims' own), and only finite means."""
    from ..report.load import newest_score_key

    keys = {key for sample in run.samples for key in (sample.scores or {})}
    newest = {newest_score_key(keys, "metrics"), newest_score_key(keys, "judge")} - {None}
    means = {"atavg": claims["atavg"], "qavg": claims.get("qavg") or {}}
    means |= claims["metrics"] | (claims.get("dimensions") or {})
    problems = []
    counted = run.header.results.total_samples if run.header.results else len(run.samples)
    if counted != len(run.samples):  # Inspect counts every (instance, epoch) it ran
        problems.append(
            f"{run.setting}: header results.total_samples: {counted}, the log holds {len(run.samples)} "
            "sample records: samples (or epochs) were taken out after Inspect wrote it"
        )
    for score in run.header.results.scores if run.header.results else []:
        mean = (means.get(score.name) or {}).get("mean")
        recorded = none_if_nan(score.metrics["mean"].value) if "mean" in score.metrics else None
        if score.scorer.split("/")[-1] not in newest or mean is None or recorded is None:
            continue
        if not same_number(recorded, mean):
            problems.append(
                f"{run.setting}: header results.{score.name}.mean: the header says {recorded!r}, its "
                f"sample records {mean!r}: the header was edited after Inspect wrote it"
            )
    return problems
