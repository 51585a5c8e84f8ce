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

from ...errors import NarrativeInfillError
from ...number_rules import none_if_nan

#: Disagreeing samples named in an error before the rest are only counted.
NAMED = 5
#: The zip entry of the summaries (``inspect_ai.log``'s ``.eval`` format).
SUMMARIES = "summaries.json"
#: The score metadata the figures read: the metric signature, the judges (who, where reached, what
#: answered, which rubric) and the extraction status. Flat fields, which summaries keep.
SCORE_METADATA = (
    "metrics_signature",
    "judge_models",
    "judge_endpoints",
    "judge_served_by",
    "judge_variant",
    "extraction_status",
)


class SummaryMismatchError(NarrativeInfillError, ValueError):
    """A log whose sample summaries are not its sample records: it was edited after Inspect wrote it."""


class DuplicateRecordError(SummaryMismatchError):
    """A log holding two records (or two summaries) of one (sample id, epoch): whichever a reader
    took last would be the figure, so the log is refused instead."""


def claimed_fields(sample) -> dict[str, Any]:
    """What the claims, the report and the track checks read of a sample (summary or full record),
    by field name: each score's value, whether its answer is empty, its signature, judges and
    extraction status; the cap rule; whether it errored. (The answer's text is not compared:
    Inspect shortens it in the summary.)"""
    fields: dict[str, Any] = {}
    for key, score in (sample.scores or {}).items():
        fields[f"scores.{key}.value"] = _nan_free(score.value)
        fields[f"scores.{key}.empty answer"] = not (score.answer or "").strip()
        for name in SCORE_METADATA:
            fields[f"scores.{key}.{name}"] = (score.metadata or {}).get(name)
    fields["metadata.max_tokens_rule"] = (sample.metadata or {}).get("max_tokens_rule")
    fields["error"] = bool(sample.error)
    return fields


def summary_problem(summary, full) -> str | None:
    """Which of the fields the figures read from a sample's summary differ from its full record
    (comma-separated), or None when none does."""
    listed, recorded = claimed_fields(summary), claimed_fields(full)
    names = sorted(set(listed) | set(recorded))
    return ", ".join(name for name in names if listed.get(name) != recorded.get(name)) or None


def _nan_free(value: Any) -> Any:
    """A score value with NaN as None, so that two equal values compare equal."""
    if isinstance(value, dict):
        return {key: none_if_nan(v) if isinstance(v, float) else v for key, v in value.items()}
    return none_if_nan(value) if isinstance(value, float) else value


def _local_path(location: str) -> str:
    """A log's path, by path or ``file://`` URI (as Inspect lists logs)."""
    return unquote(urlparse(location).path) if location.startswith("file://") else location


def _view(sample: dict) -> SimpleNamespace:
    """The fields the figures read (and the id and epoch), of a sample record or summary as the zip
    holds it (JSON). Of each score's metadata only the flat fields are kept, as a summary keeps
    them: the nested ones (a grader's raw replies) are ``recompute``'s, read through Inspect."""
    scores = {
        key: SimpleNamespace(
            value=s.get("value"),
            answer=s.get("answer"),
            metadata={k: v for k, v in (s.get("metadata") or {}).items() if not isinstance(v, (dict, list))},
        )
        for key, s in (sample.get("scores") or {}).items()
    }
    return SimpleNamespace(
        id=sample["id"],
        epoch=int(sample["epoch"]),
        # the problem and gold (a summary's cut at Inspect's 5,120 characters): the blank guard's story
        input=sample.get("input"),
        target=sample.get("target"),
        scores=scores,
        metadata=sample.get("metadata"),
        error=sample.get("error"),
    )


def _by_sample(location: str, what: str, samples: list) -> dict[tuple[str, int], Any]:
    """``samples`` by (id, epoch), or :class:`DuplicateRecordError` naming every (id, epoch) held
    twice: of two entries one reader takes the first, another the last. One exception, Inspect's own
    layout: ``inspect eval-retry`` keeps a failed attempt's entry and writes the retried sample after
    it under the same name, so an errored entry followed by a later one is superseded (the later one
    is the record, as Inspect reads it); two entries of which the earlier did not fail are refused."""
    keyed: dict[tuple[str, int], Any] = {}
    repeated: dict[tuple[str, int], int] = {}
    for sample in samples:
        key = (str(sample.id), int(sample.epoch))
        if key in keyed and not keyed[key].error:
            repeated[key] = repeated.get(key, 1) + 1
        keyed[key] = sample
    if repeated:
        listed = sorted(repeated.items())[:NAMED]
        named = "; ".join(f"sample {i} epoch {e}: {n} {what}" for (i, e), n in listed)
        more = f" (and {len(repeated) - NAMED} more)" if len(repeated) > NAMED else ""
        raise DuplicateRecordError(
            f"{_local_path(location)}: one (sample id, epoch) held more than once{more}: {named}. A "
            "log holds one record per sample and epoch: it was edited after Inspect wrote it; use the "
            "original log"
        )
    return keyed


def read_log(location: str) -> tuple[dict[tuple[str, int], Any], list | None]:
    """(each sample record of a ``.eval`` log by (id, epoch), its summaries) as
    :func:`claimed_fields` reads them; the summaries are None where ``summaries.json`` is not there
    to read (a remote log, a log still running: Inspect's reader then assembles them). Every zip
    entry is read, two of one name included (a zip may hold both; reading by name gives the last)."""
    if "://" in location and not location.startswith("file://"):  # s3:// and the like: Inspect reads it
        from inspect_ai.log import read_eval_log_samples

        samples = read_eval_log_samples(location, all_samples_required=False)
        return _by_sample(location, "records", list(samples)), None
    from zstandard import ZstdError  # Inspect's member compression: a damaged member raises its error

    try:
        with zipfile.ZipFile(_local_path(location)) as archive:
            entries = archive.infolist()
            records = [
                _view(json.loads(archive.read(entry)))
                for entry in entries
                if entry.filename.startswith("samples/")
            ]
            listed = [entry for entry in entries if entry.filename == SUMMARIES]
            summaries = [_view(summary) for entry in listed for summary in json.loads(archive.read(entry))]
    except (OSError, zipfile.BadZipFile, ValueError, KeyError, TypeError, AttributeError, ZstdError) as err:
        raise SummaryMismatchError(f"{location}: its samples cannot be read ({err})") from None
    keyed = _by_sample(location, "records", records)
    if listed:
        _by_sample(location, "summaries", summaries)
    return keyed, summaries if listed else None


def checked_records(location: str) -> list:
    """The sample records of a log, sorted by (id, epoch), after :func:`check_log`'s checks: what
    ``submit`` and ``verify`` build every figure from (a JSON log holds each sample once: Inspect
    reads it)."""
    if location.endswith(".json"):
        from inspect_ai.log import read_eval_log_samples

        samples = read_eval_log_samples(location, all_samples_required=False)
        return sorted(_by_sample(location, "records", list(samples)).values(), key=_order)
    records, listed = read_log(location)
    _compare(location, dict(records), listed)
    return sorted(records.values(), key=_order)


def _order(sample) -> tuple[str, int]:
    return (str(sample.id), int(sample.epoch))


def check_log(location: str) -> None:
    """Refuse (:class:`SummaryMismatchError`, naming the log and its first samples) a log holding
    one (sample id, epoch) twice, or whose sample summaries differ from its sample records on any
    field the figures read, or list a sample the records lack, or lack one they hold, or whose
    empty answers score above 0."""
    if location.endswith(".json"):
        return  # a JSON log holds each sample once, summaries are built from it on reading
    records, listed = read_log(location)
    _refuse_scored_empty_answers(location, records.values())
    _compare(location, records, listed)


def _refuse_scored_empty_answers(location: str, records) -> None:
    """An empty answer scores 0 on every metric by rule: no backbone is needed to know it, so even
    the report, which re-scores no model's answers, refuses a log whose empty answers score more
    (a log forged to AtAvg 0.45 once showed its empty answers at 0.45)."""
    from ...scorers.metrics.pairs import METRIC_NAMES
    from .report.load import newest_score

    problems = []
    for record in sorted(records, key=_order):
        score = newest_score(record, "metrics")
        if score is None or (score.answer or "").strip() or not isinstance(score.value, dict):
            continue
        above = [
            f"metrics.{key} {v!r}"
            for key in (*METRIC_NAMES, "atavg")
            if (v := _nan_free(score.value).get(key))
        ]
        if above:
            problems.append(f"sample {record.id} epoch {record.epoch}: {', '.join(above)}")
    if problems:
        more = f" (and {len(problems) - NAMED} more)" if len(problems) > NAMED else ""
        raise SummaryMismatchError(
            f"{_local_path(location)}: an empty answer scored above 0 in {len(problems)} sample(s){more}: "
            + "; ".join(problems[:NAMED])
            + ". An empty answer scores 0 on every metric: the log was edited after it was scored"
        )


def _compare(location: str, records: dict, summaries: list | None) -> None:
    """:func:`check_log`'s comparison; ``records`` is emptied as it goes."""
    from inspect_ai.log import read_eval_log_sample_summaries

    if summaries is None:
        summaries = read_eval_log_sample_summaries(location)
        _by_sample(location, "summaries", summaries)
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
