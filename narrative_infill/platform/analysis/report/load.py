"""Logs -> one pandas frame: a row per sample with its model, setting, metadata and scores.

Each run counts once. Logs are grouped by run (``cells.describe``: task, model, task arguments
and metadata, decoding config and seed, epochs, model roles); of a run's successful logs the one
with the most samples (the latest among equals) is read and every other log of it is set aside:
the error log that
``inspect eval-retry`` completed, an earlier attempt, an interrupted eval-set task, a
``--limit`` trial. A run without a successful log is listed as absent with its
sample counts. Of each scorer, each log's newest scores are read (``inspect score --action
append`` adds ``metrics1``, ``metrics2``... to the logs it rescored, and to those only). Errored
samples stay in the frame, flagged, for the coverage table. Runs scored with different metric
signatures or judge models are refused together: their numbers must not be averaged. So are
two logs of one eval (one eval id) whose headers name different runs: a copy with its header
edited (another model name) would otherwise count as a run of its own; and a log none of whose
samples is its own (``samples_df`` keeps one row per sample uuid, so it would vanish unsaid).

Reads through ``inspect_ai.analysis`` (``samples_df`` joined with ``evals_df``); dict-valued
scores are expanded into one float column per key.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import partial

import pandas as pd

from ....scorers.metrics.pairs import METRIC_NAMES as METRICS
from ....task_options import setting_name
from ..sample_records import check_log
from .baselines import check_baseline_log, is_baseline
from .logs import MixedRunsError as MixedRunsError
from .logs import NoSuccessfulLogError as NoSuccessfulLogError
from .logs import log_locations as log_locations
from .logs import read_log as read_log
from .logs import select_logs
from .run_labels import label_runs

_SCORER_KEY = {"metrics": re.compile(r"^metrics(\d*)$"), "judge": re.compile(r"^judge(\d*)$")}


@dataclass
class LoadedLogs:
    frame: pd.DataFrame
    #: run label -> why it is not in the frame (no successful log)
    absent: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def newest_score_key(keys, scorer: str) -> str | None:
    """The newest of a scorer's score names in a sample (``metrics`` < ``metrics1`` < ...)."""
    pattern = _SCORER_KEY[scorer]
    found = [(int(m.group(1) or 0), key) for key in keys if (m := pattern.match(key))]
    return max(found)[1] if found else None


def newest_score(summary, scorer: str):
    """The sample's newest ``Score`` of ``scorer`` (``metrics`` or ``judge``), or None."""
    scores = summary.scores or {}
    key = newest_score_key(scores, scorer)
    return scores[key] if key else None


def score_field(summary, scorer: str, name: str):
    """A metadata field of the sample's newest ``scorer`` score: ``metrics_signature``, ``judge_models``."""
    score = newest_score(summary, scorer)
    return (score.metadata or {}).get(name) if score else None


def scorings_field(summary) -> str:
    """A sample's metrics scorings as JSON: score name -> signature, extraction status, empty."""
    found = {}
    for key, score in (summary.scores or {}).items():
        if not _SCORER_KEY["metrics"].match(key):
            continue
        metadata = score.metadata or {}
        found[key] = {
            "signature": metadata.get("metrics_signature"),
            "status": metadata.get("extraction_status"),
            "empty": not (score.answer or "").strip(),
        }
    return json.dumps(found)


def _expand(column: pd.Series, keys: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Dict-valued score column (JSON text in the dataframe) -> one float column per key."""

    def parse(value):
        if isinstance(value, str):
            try:
                return json.loads(value.replace("NaN", "null"))
            except json.JSONDecodeError:
                return {}
        return value if isinstance(value, dict) else {}

    parsed = column.map(parse)
    names = keys or sorted({key for value in parsed for key in value})
    return pd.DataFrame(
        {name: parsed.map(lambda v, n=name: _float(v.get(n))) for name in names}, index=column.index
    )


def _float(value) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError):
        return math.nan
    return result


def _check_comparable(frame: pd.DataFrame) -> None:
    for column, what in (("metrics_signature", "metric signatures"), ("judge_models", "judge models")):
        groups = frame.dropna(subset=[column]).groupby(column)["log"].unique()
        if len(groups) > 1:
            listing = "\n".join(
                f"  {value}: {', '.join(sorted(map(str, logs)))}" for value, logs in groups.items()
            )
            raise MixedRunsError(
                f"these logs were scored with {len(groups)} different {what}, which must not be averaged "
                f"together; report each group separately:\n{listing}"
            )


def answer_empty(summary, scorer: str) -> bool | None:
    """Whether the sample's newest ``scorer`` score judged an empty extraction (None: not scored)."""
    score = newest_score(summary, scorer)
    return None if score is None else not str(score.answer or "").strip()


def answer_text(summary, scorer: str) -> str | None:
    """The answer the sample's newest ``scorer`` score read (None: not scored): what the fluency
    check reads (``report/baselines.py``)."""
    score = newest_score(summary, scorer)
    return None if score is None else str(score.answer or "")


def model_name(model: str) -> str:
    """The model a log names, imported generations (``replay/``) under their own name, except one
    whose name is a null baseline's (``replay/baseline/context``): only the package's own baseline
    rows are named ``baseline/<rule>``, a file's model field cannot pass a model off as one."""
    name = re.sub(r"^replay/", "", str(model))
    return str(model) if is_baseline(name) else name


def _newest_per_log(frame: pd.DataFrame, scorer: str) -> pd.Series | None:
    """Each log's newest scores of ``scorer``: the newest ``metrics<N>`` is chosen per log, so
    rescoring one log (``inspect score --action append``) leaves the others' scores in place."""
    pattern = _SCORER_KEY[scorer]
    found = sorted(
        (int(m.group(1) or 0), column)
        for column in frame.columns
        if column.startswith("score_") and (m := pattern.match(column.removeprefix("score_")))
    )
    if not found:
        return None
    chosen = pd.Series(None, index=frame.index, dtype=object)
    for _, column in found:  # oldest first: where a log has a newer scoring, it replaces the older
        present = frame[column].notna().groupby(frame["eval_id"]).transform("any")
        chosen = chosen.where(~present, frame[column])
    return chosen


def load_samples(paths: list[str]) -> LoadedLogs:
    """One row per sample of each run's latest successful log, errored and unscored ones included
    (``errored``; their scores NaN): the coverage table counts them, no mean does."""
    from inspect_ai.analysis import evals_df, samples_df
    from inspect_ai.log import read_eval_log

    selected, absent, notes = select_logs(paths)
    if not selected:
        raise NoSuccessfulLogError(
            f"no successful log in {', '.join(map(str, paths))}"
            + (f" ({len(absent)} unfinished run(s))" if absent else "")
        )
    for location in selected:  # the frame is read from the summaries: they must be the records'
        check_log(location)
        check_baseline_log(location)
    samples = samples_df(selected, columns=_columns(), quiet=True, parallel=len(selected) > 1)
    evals = evals_df(selected, quiet=True)
    evals["setting"] = [
        setting_name(_metadata(metadata), name)
        for metadata, name in zip(evals["metadata"], evals["task_name"])
    ]
    headers = {location: read_eval_log(location, header_only=True) for location in selected}
    labels = label_runs(headers, lambda header: model_name(header.eval.model))
    notes += labels.notes
    by_id = {header.eval.eval_id: location for location, header in headers.items()}
    evals["row"] = evals["eval_id"].map(lambda eval_id: labels.row[by_id[eval_id]])
    evals["replicates"] = evals["eval_id"].map(lambda eval_id: labels.replicates[by_id[eval_id]])
    evals["run_samples"] = evals["eval_id"].map(lambda eval_id: _run_samples(headers[by_id[eval_id]]))
    frame = samples.merge(
        evals[["eval_id", "model", "task_name", "setting", "row", "replicates", "run_samples"]],
        on="eval_id",
        how="left",
    )
    _check_own_samples(frame, headers)
    frame["model"] = frame["model"].map(model_name)
    frame["errored"] = (
        frame["error"].notna() & (frame["error"].astype(str) != "") if "error" in frame else False
    )
    if frame["errored"].any():
        notes.append(
            f"{int(frame['errored'].sum())} sample(s) ended in an error: the coverage table counts them; "
            "no table averages them."
        )
    _check_comparable(frame)
    for scorer, keys in (("metrics", (*METRICS, "atavg", "context_copy", "story_reuse")), ("judge", None)):
        chosen = _newest_per_log(frame, scorer)
        if chosen is not None:
            frame = frame.join(_expand(chosen, keys))
    return LoadedLogs(frame, absent, notes)


def _columns() -> list:
    """The summary columns the frame holds, and the score fields each sample row adds."""
    from inspect_ai.analysis import SampleColumn, SampleSummary

    # partials, not lambdas: samples_df pickles its columns for its worker processes
    return [
        *SampleSummary,
        SampleColumn(
            "metrics_signature",
            path=partial(score_field, scorer="metrics", name="metrics_signature"),
            full=False,
        ),
        SampleColumn(
            "judge_models", path=partial(score_field, scorer="judge", name="judge_models"), full=False
        ),
        SampleColumn(
            "judge_variant", path=partial(score_field, scorer="judge", name="judge_variant"), full=False
        ),
        SampleColumn("metrics_scorings", path=scorings_field, full=False),
        SampleColumn("empty_answer", path=partial(answer_empty, scorer="metrics"), full=False),
        SampleColumn("metrics_answer", path=partial(answer_text, scorer="metrics"), full=False),
    ]


def _check_own_samples(frame: pd.DataFrame, headers: dict) -> None:
    """``samples_df`` keeps one row per sample uuid: a log whose samples are all another log's (a
    copy with its eval id and header edited) would leave the report without a word."""
    present = set(frame["eval_id"])
    hidden = sorted(
        location
        for location, header in headers.items()
        if header.eval.eval_id not in present and _run_samples(header)
    )
    if hidden:
        raise MixedRunsError(
            f"{', '.join(hidden)}: none of its samples is its own (their uuids are another log's "
            "here): one of the two is a copy with its header edited; keep the original"
        )


def _run_samples(header) -> int:
    """How many samples the run had: every sample of its dataset in every epoch."""
    spec = header.eval
    planned = (spec.dataset.samples or 0) * (spec.config.epochs or 1)
    return max(planned, header.results.total_samples if header.results else 0)


def _metadata(metadata) -> dict | None:
    """An eval's metadata as ``evals_df`` holds it (JSON text) as a dict, None when it is none."""
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except json.JSONDecodeError:
            return None
    return metadata if isinstance(metadata, dict) else None
