"""Summaries are not evidence: each sample's summary checked against its full record.

A ``.eval`` log keeps every sample twice: its full record (``samples/<id>_epoch_<n>.json``, what
``inspect view`` shows) and a summary of it in ``summaries.json``, which ``samples_df`` and
``read_eval_log_sample_summaries`` read. The summaries are a separate entry of the zip, editable on
their own: rewriting only them to AtAvg 1.0 once made ``report`` and ``submit`` claim 1.0 while the
records said 0.147. ``report`` and ``submit`` (through :func:`check_log`) and ``verify`` (through
:func:`summary_problem`) therefore compare, sample by sample, every field their figures read, and
refuse a log where the two disagree, or where a sample has one and not the other.

The records and summaries are read straight from the zip as JSON, not through Inspect's reader,
which validates each whole transcript (reading the records took 0.3 ms a sample this way and 4.4 ms
through Inspect; the whole check costs about 0.5-1 ms a sample on a loaded 2-core machine, see
docs/summaries.md).
"""

from __future__ import annotations

import json
import zipfile
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote, urlparse

from ..definitions import NarrativeInfillError, none_if_nan

#: Disagreeing samples named in an error before the rest are only counted.
NAMED = 5
#: The zip entry of the summaries (``inspect_ai.log``'s ``.eval`` format).
SUMMARIES = "summaries.json"
#: The score metadata the figures read (the metric signature, the judges, the extraction status).
SCORE_METADATA = ("metrics_signature", "judge_models", "extraction_status")


class SummaryMismatchError(NarrativeInfillError, ValueError):
    """A log whose sample summaries are not its sample records: it was edited after Inspect wrote it."""


def claimed_fields(sample) -> dict[str, Any]:
    """What the claims, the report and the track checks read of a sample (summary or full record):
    each score's value, whether its answer is empty, its signature, judges and extraction status;
    the cap rule; whether it errored. (The answer's text is not compared: Inspect shortens it in
    the summary.)"""
    return {
        "scores": {
            key: [_nan_free(score.value), not (score.answer or "").strip()]
            + [(score.metadata or {}).get(name) for name in SCORE_METADATA]
            for key, score in (sample.scores or {}).items()
        },
        "metadata": (sample.metadata or {}).get("max_tokens_rule"),
        "error": bool(sample.error),
    }


def summary_problem(summary, full) -> str | None:
    """Which of the fields the figures read from a sample's summary differ from its full record
    (comma-separated), or None when none does."""
    listed, recorded = claimed_fields(summary), claimed_fields(full)
    return ", ".join(name for name in listed if listed[name] != recorded[name]) or None


def _nan_free(value: Any) -> Any:
    """A score value with NaN as None, so that two equal values compare equal."""
    if isinstance(value, dict):
        return {key: none_if_nan(v) if isinstance(v, float) else v for key, v in value.items()}
    return none_if_nan(value) if isinstance(value, float) else value


def _local_path(location: str) -> str:
    """A log's path, by path or ``file://`` URI (as Inspect lists logs)."""
    return unquote(urlparse(location).path) if location.startswith("file://") else location


def _view(sample: dict) -> SimpleNamespace:
    """The fields :func:`claimed_fields` reads (and the id and epoch), of a sample record or summary
    as the zip holds it (JSON)."""
    scores = {
        key: SimpleNamespace(value=s.get("value"), answer=s.get("answer"), metadata=s.get("metadata"))
        for key, s in (sample.get("scores") or {}).items()
    }
    return SimpleNamespace(
        id=sample["id"],
        epoch=int(sample["epoch"]),
        scores=scores,
        metadata=sample.get("metadata"),
        error=sample.get("error"),
    )


def read_log(location: str) -> tuple[dict[tuple[str, int], Any], list | None]:
    """(each sample record of a ``.eval`` log by (id, epoch), its summaries) as
    :func:`claimed_fields` reads them; the summaries are None where ``summaries.json`` is not there
    to read (a remote log, a log still running: Inspect's reader then assembles them)."""
    if "://" in location and not location.startswith("file://"):  # s3:// and the like: Inspect reads it
        from inspect_ai.log import read_eval_log_samples

        samples = read_eval_log_samples(location, all_samples_required=False)
        return {(str(s.id), s.epoch): s for s in samples}, None
    try:
        with zipfile.ZipFile(_local_path(location)) as archive:
            names = archive.namelist()
            records = [_view(json.loads(archive.read(n))) for n in names if n.startswith("samples/")]
            listed = json.loads(archive.read(SUMMARIES)) if SUMMARIES in names else None
            summaries = None if listed is None else [_view(summary) for summary in listed]
    except (OSError, zipfile.BadZipFile, ValueError, KeyError, TypeError, AttributeError) as err:
        raise SummaryMismatchError(f"{location}: its samples cannot be read ({err})") from None
    return {(str(r.id), r.epoch): r for r in records}, summaries


def check_log(location: str, summaries: list | None = None) -> None:
    """Refuse (:class:`SummaryMismatchError`, naming the log and its first samples) a log whose
    sample summaries (``summaries``, read here when not given) differ from its sample records on
    any field the figures read, or list a sample the records lack, or lack one they hold."""
    from inspect_ai.log import read_eval_log_sample_summaries

    if location.endswith(".json"):
        return  # a JSON log holds each sample once, summaries are built from it on reading
    records, listed = read_log(location)
    summaries = summaries if summaries is not None else listed
    if summaries is None:
        summaries = read_eval_log_sample_summaries(location)
    problems = []
    for summary in summaries:
        key = (str(summary.id), summary.epoch)
        record = records.pop(key, None)
        if record is None:
            problems.append(f"sample {key[0]} epoch {key[1]}: a summary without a record")
        elif mismatch := summary_problem(summary, record):
            problems.append(f"sample {key[0]} epoch {key[1]}: {mismatch}")
    problems += [f"sample {i} epoch {e}: a record without a summary" for i, e in sorted(records)]
    if problems:
        more = f" (and {len(problems) - NAMED} more)" if len(problems) > NAMED else ""
        raise SummaryMismatchError(
            f"{_local_path(location)}: its sample summaries (summaries.json, what the figures are read "
            f"from) disagree with its sample records (what `inspect view` shows) in {len(problems)} "
            f"sample(s){more}: "
            + "; ".join(problems[:NAMED])
            + ". The log was edited after Inspect wrote it: use the original log"
        )
