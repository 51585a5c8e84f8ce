"""``narrative-infill submit``: one model's logs -> one canonical, self-hashed results file.

The file claims, per setting, the aggregates the paper reports (AtAvg and the five metrics,
QAvg and the five dimensions, High%, Low%, rates of empty extractions, truncated outputs and
unscored judgements), each headline sample's value (for the leaderboard's bootstrap), and the
provenance that lets ``verify`` recompute every claim from the logs: versions, dataset
identity, metric signature, judges, generation config, each log's hash, and one digest over
every sample's answer and scores.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean, stdev
from typing import Any

from ....copy_guards import is_copied, is_story_reuse
from ....errors import NarrativeInfillError
from ....number_rules import none_if_nan as _number
from ....paper_protocol import is_high, is_low
from ....scorers.judge.rubric import dimensions_of_variants
from ....scorers.metrics.pairs import METRIC_NAMES
from ....task_options import comparability, setting_name
from ...names import checked_name
from ..blank_guard import ignored_share, story_key
from ..report.load import newest_score, score_field, select_logs
from ..sample_records import checked_records
from .judges import header_problems, judge_provenance
from .protocol import generation, scorer_options, track_problems, unscored_problem
from .sampling import FLUENCY_READS, quotas, sampled_not_fluent

SCHEMA_VERSION = 1
KIND = "narrative-infill-submission"
#: The fields of a submission's per-sample row, in order.
SAMPLE_ROW_FIELDS = ("id", "epoch", "atavg", "qavg")
ATAVG_COLUMN = SAMPLE_ROW_FIELDS.index("atavg")
QAVG_COLUMN = SAMPLE_ROW_FIELDS.index("qavg")


def sample_row(sample_id: Any, epoch: int, metrics: Mapping[str, Any], judged: Mapping[str, Any]) -> list:
    """A submission's row for one sample, from its newest metrics and judge score values."""
    return [str(sample_id), epoch, _number(metrics.get("atavg")), _number(judged.get("qavg"))]


class SubmissionError(NarrativeInfillError, ValueError):
    """Logs that cannot make a submission, or a submission file that is not one."""


@dataclass
class SettingLogs:
    setting: str
    location: str
    header: Any
    samples: list  # the sample records' fields the figures read (``sample_records``), by (id, epoch)


def content_hash(document: dict) -> str:
    """SHA-256 of the canonical form (sorted keys, no whitespace, no NaN) of all but the hash."""
    rest = {k: v for k, v in document.items() if k != "sha256"}
    return hashlib.sha256(
        json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    ).hexdigest()


def file_sha256(location: str) -> str:
    """SHA-256 of a log's bytes, by path or ``file://`` URI (as Inspect lists logs)."""
    from urllib.parse import unquote, urlparse

    path = unquote(urlparse(location).path) if location.startswith("file://") else location
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _summary(values: list[float | None]) -> dict[str, float | int | None]:
    present = [v for v in values if v is not None]
    return {
        "mean": fmean(present) if present else None,
        "stderr": stdev(present) / math.sqrt(len(present)) if len(present) > 1 else None,
        "n": len(present),
    }


def sample_scores(summary) -> tuple[dict, dict]:
    """(newest metrics value, newest judge value) of a sample summary; empty dicts when absent."""
    metrics, judged = newest_score(summary, "metrics"), newest_score(summary, "judge")
    return (metrics.value if metrics else {}), (judged.value if judged else {})


def setting_claims(samples: list, high_inclusive=False, reads: int | None = None, seed="") -> dict[str, Any]:
    """Every aggregate the submission claims for one setting, from its samples; the fluency check
    reads ``reads`` of its answers drawn from ``seed`` (all: None, or a smaller setting)."""
    metrics = [sample_scores(s)[0] for s in samples]
    judged = [sample_scores(s)[1] for s in samples]
    answers = [logged_answer(s) for s in samples]
    qavg = [_number(j.get("qavg")) for j in judged]
    # every metrics-scored answer's copy share, or none: a share over the samples that kept the key
    # would let an edited log hide its copies
    copies = [_number(m.get("context_copy")) for m in metrics if m]
    reuses = [_number(m.get("story_reuse")) for m in metrics if m]
    not_fluent, read = sampled_not_fluent(answers, reads, seed) if metrics else (None, 0)
    claims: dict[str, Any] = {
        "n": len(samples),
        # how many answers a sampled share (``sampling``) read
        **({"fluency_read": read} if not_fluent is not None and read < len(answers) else {}),
        "atavg": _summary([_number(m.get("atavg")) for m in metrics]),
        "metrics": {name: _summary([_number(m.get(name)) for m in metrics]) for name in METRIC_NAMES},
        "rates": {
            "empty_extraction": fmean(not a for a in answers) if answers else None,
            "truncated": fmean(bool(_number(m.get("truncated")) or 0) for m in metrics) if metrics else None,
            # answers copied from the story (None when a scored sample has no context_copy: logs
            # scored before it was recorded, or edited)
            "copied": fmean(is_copied(c) for c in copies) if copies and None not in copies else None,
            # answers that are the story's words in some order (None as for "copied")
            "reused": fmean(is_story_reuse(r) for r in reuses) if reuses and None not in reuses else None,
            # answers that are words in no sentence's order (None where the check cannot run here)
            "not_fluent": not_fluent,
            # stories whose blanks the answers ignore (``analysis.blank_guard``)
            "ignored": ignored_share(
                (story_key(s.id, str(s.input)), str(s.input), str(s.target), a)
                for s, a in zip(samples, answers)
            ),
            # a panel's mean over the graders left is unscored too: else failing the harsh one is free
            "unscored": fmean(
                q is None or bool(_number(j.get("grader_failed"))) for q, j in zip(qavg, judged)
            )
            if any(judged)
            else None,
        },
    }
    if any(judged):
        scored = [q for q in qavg if q is not None]
        claims["qavg"] = _summary(qavg)
        variants = sorted({score_field(s, "judge", "judge_variant") for s in samples} - {None})
        dimensions = dimensions_of_variants(variants)
        claims["dimensions"] = {d: _summary([_number(j.get(d)) for j in judged]) for d in dimensions}
        claims["high"] = fmean(is_high(q, high_inclusive) for q in scored) if scored else None
        claims["low"] = fmean(is_low(q) for q in scored) if scored else None
    return claims


def entry_claims(runs: list[SettingLogs], high_inclusive: bool, digest: str) -> dict[str, Any]:
    """Every setting's claims (``setting_claims``), the fluency check reading ``FLUENCY_READS`` of
    the entry's answers drawn from its samples ``digest`` (``sampling``)."""
    reads = quotas({r.setting: len(r.samples) for r in runs}, FLUENCY_READS)
    return {
        r.setting: setting_claims(r.samples, high_inclusive, reads[r.setting], f"{digest}:{r.setting}")
        for r in runs
    }


def submission_rows(samples: list) -> list[list]:
    """The per-sample rows of one setting (``submission.build.SAMPLE_ROW_FIELDS``)."""
    return [sample_row(s.id, s.epoch, *sample_scores(s)) for s in samples]


def logged_answer(summary) -> str:
    """The answer a sample's newest scores record (the metrics', else the judge's; "" for none)."""
    score = newest_score(summary, "metrics") or newest_score(summary, "judge")
    return (score.answer or "") if score else ""


def samples_digest(by_setting: dict[str, list]) -> str:
    """SHA-256 over the sorted (setting, sample id, epoch, answer, scores) of every sample."""
    digest = hashlib.sha256()
    for setting in sorted(by_setting):
        for sample in by_setting[setting]:
            metrics, judged = sample_scores(sample)
            row = [setting, str(sample.id), sample.epoch, logged_answer(sample), metrics, judged]
            digest.update((json.dumps(row, sort_keys=True, default=str) + "\n").encode())
    return digest.hexdigest()


def read_settings(paths: list[str]) -> list[SettingLogs]:
    """The latest successful log of each setting, for exactly one model."""
    from inspect_ai.log import read_eval_log

    selected, absent, _ = select_logs(paths)
    if absent:
        raise SubmissionError(
            "unfinished runs cannot be submitted: " + "; ".join(f"{k}: {v}" for k, v in absent.items())
        )
    if not selected:
        raise SubmissionError(f"no successful log in {', '.join(map(str, paths))}")
    headers = {location: read_eval_log(location, header_only=True) for location in selected}
    for location, header in headers.items():  # the name the board shows: one that renders as itself
        checked_name(header.eval.model, f"{location}: field 'eval.model'", SubmissionError, as_written=True)
    models = {header.eval.model for header in headers.values()}
    if len(models) > 1:
        raise SubmissionError(
            f"logs of {len(models)} models ({', '.join(sorted(models))}); a submission is one model's"
        )
    settings: dict[str, SettingLogs] = {}
    for location, header in headers.items():
        setting = setting_name(header.eval.metadata, header.eval.task)
        if setting in settings:
            raise SubmissionError(
                f"two runs of setting {setting}: {Path(settings[setting].location).name} and "
                f"{Path(location).name}; submit one"
            )
        # every figure from the records (what `inspect view` shows), each (id, epoch) once, after
        # checking that the summaries (what Inspect's readers and the report read) say the same
        settings[setting] = SettingLogs(setting, location, header, checked_records(location))
    return [settings[name] for name in sorted(settings)]


def scored_with(runs: list[SettingLogs]) -> tuple[set[str], set[str]]:
    """(metric signatures, judge panels) the runs' newest scores name."""
    samples = [s for run in runs for s in run.samples]
    signatures = {score_field(s, "metrics", "metrics_signature") for s in samples} - {None}
    return signatures, {score_field(s, "judge", "judge_models") for s in samples} - {None}


def log_provenance(runs: list[SettingLogs]) -> dict[str, Any]:
    """The provenance that the logs' headers record, so ``verify`` can compare it with the file's."""
    signatures, judges = scored_with(runs)
    first = runs[0].header.eval
    return {
        "task_versions": sorted({str(r.header.eval.task_version) for r in runs}),
        "inspect_version": (first.packages or {}).get("inspect_ai"),
        "dataset": (first.metadata or {}).get("dataset_identity"),
        "metrics_signatures": sorted(signatures),
        "judges": sorted(judges),
        **judge_provenance(runs),  # where each grader was reached, what answered
        "judge_variant": sorted({str((r.header.eval.metadata or {}).get("judge")) for r in runs}),
        "judge_weighting": sorted(
            {str(bool((scorer_options(r.header, "judge") or {}).get("probability_weighted"))) for r in runs}
        ),
        "prompt_variants": sorted({str((r.header.eval.metadata or {}).get("prompt_variant")) for r in runs}),
        "generation_config": {r.setting: generation(r.header) for r in runs},
        "git": {
            r.setting: (r.header.eval.revision.model_dump() if r.header.eval.revision else None) for r in runs
        },
    }


def build_submission(
    paths: list[str], track: str, submitter: str | None = None, high_inclusive: bool = False
) -> dict[str, Any]:
    """The submission of the logs at ``paths`` (their figures as their records give them)."""
    return submission_document(read_settings(paths), track, submitter, high_inclusive)


def submission_document(
    runs: list[SettingLogs], track: str, submitter: str | None = None, high_inclusive: bool = False
) -> dict[str, Any]:
    """The submission of ``runs`` (:func:`read_settings`), or ``SubmissionError`` naming why not."""
    from .... import __version__

    digest = samples_digest({r.setting: r.samples for r in runs})
    claims = entry_claims(runs, high_inclusive, digest)
    problems = track_problems(track, runs)
    problems += [p for p in (unscored_problem(s, c, track) for s, c in claims.items()) if p]
    problems += header_problems(runs)  # the records say who judged, where: the header must agree
    if problems:
        raise SubmissionError(
            f"not a complete {track} track submission (a run off the protocol can go to --track custom):\n  "
            + "\n  ".join(problems)
        )
    first = runs[0].header.eval
    signatures, judges = scored_with(runs)
    versions = {comparability(r.header.eval.task_version) for r in runs}  # 3 and 3-A score alike
    for what, values in (("task versions", versions), ("metric signatures", signatures), ("judges", judges)):
        if len(values) > 1:
            raise SubmissionError(
                f"the runs mix {len(values)} {what}, which are not comparable: {sorted(values)}"
            )
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "track": track,
        "submitter": submitter,
        "model": {"id": first.model, "base_url": first.model_base_url, "args": first.model_args or {}},
        "settings": claims,
        "samples": {run.setting: submission_rows(run.samples) for run in runs},
        "provenance": {
            "package_version": __version__,
            **log_provenance(runs),
            "logs": [
                {
                    "setting": r.setting,
                    "file": Path(r.location).name,
                    "eval_id": r.header.eval.eval_id,
                    "sha256": file_sha256(r.location),
                }
                for r in runs
            ],
            "samples_digest": digest,
            **({"high_inclusive": True} if high_inclusive else {}),
        },
    }
    document["sha256"] = content_hash(document)
    return document


def write_submission(document: dict[str, Any], out: Path, logs: Sequence[str] = ()) -> None:
    """Write ``document`` to ``out``, never over (or into) one of the ``logs`` it was built from."""
    from ....data.atomic import atomic_file

    with atomic_file(out, logs) as partial:
        partial.write_text(
            json.dumps(document, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n",
            encoding="utf-8",
        )
