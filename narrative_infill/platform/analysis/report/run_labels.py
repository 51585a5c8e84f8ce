"""One cell, one run: runs of one (model, setting) that differ are never averaged together.

A run is described by everything in its log header that can change a score: the task, its
arguments (prompt variant, data, subset, max_tokens, unit, system_role, backbone...), the
decoding config, the seed, the epochs, the model roles, the task version and the task metadata.
When a model has two runs of one setting, every run of that model is labelled by the fields in
which such runs differ (``mockllm/a [variant=code3]``), so its rows line up across settings; the
report's notes say which. Runs that differ only in their seed share a ``replicates`` label, which
Table 13 pools. Labels shorten each value, and spell it out whole where shortened labels of two
runs coincide; logs no field tells apart are one run (``load.select_logs`` reads one of them).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ....data.narrative import NARRATIVE, is_own_cluster, narrative_of
from ....errors import NarrativeInfillError
from ....task_options import setting_name

#: The generation settings that can change an output (not retries, timeouts, connections, caching).
DECODING_FIELDS = (
    "system_message",
    "max_tokens",
    "top_p",
    "temperature",
    "stop_seqs",
    "best_of",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "top_k",
    "num_choices",
    "verbosity",
    "effort",
    "reasoning_effort",
    "reasoning_mode",
    "reasoning_tokens",
    "reasoning_history",
    "response_schema",
    "extra_body",
)
#: The longest value shown in a row label.
LABEL_VALUE_CHARS = 40


class IndistinctRunsError(NarrativeInfillError, ValueError):
    """Runs of one model and setting that no field of their headers tells apart."""


@dataclass
class RunLabels:
    #: log location -> the cell's row: the model, with what tells its runs apart
    row: dict[str, str] = field(default_factory=dict)
    #: log location -> the row without the seed (Table 13 pools seed replicates)
    replicates: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def run_identity(header) -> str:
    """The run a log belongs to, as one comparable text: logs of one run (an error log and its
    ``eval-retry``, an earlier attempt) share it; runs that could score differently do not."""
    return json.dumps(describe(header), sort_keys=True)


def describe(header) -> dict[str, str]:
    """What can change a run's scores, field by field, as text."""
    spec = header.eval
    config = spec.model_generate_config.model_dump(include=set(DECODING_FIELDS), exclude_none=True)
    described = {"model": spec.model, "task": spec.task, "task_version": spec.task_version}
    described |= {name: value for name, value in (spec.task_args or {}).items()}
    described |= {f"decoding.{name}": value for name, value in config.items()}
    described |= {"epochs": spec.config.epochs or 1, "seed": spec.model_generate_config.seed}
    described |= {f"role.{role}": c.model for role, c in (spec.model_roles or {}).items()}
    described |= {f"metadata.{name}": value for name, value in (spec.metadata or {}).items()}
    return {name: _text(value) for name, value in described.items()}


def _label(described: dict[str, str], fields: list[str], width: int | None = LABEL_VALUE_CHARS) -> str:
    def short(value: str) -> str:
        return value if width is None or len(value) <= width else value[: width - 1] + "…"

    return ", ".join(f"{name.removeprefix('metadata.')}={short(described.get(name, '-'))}" for name in fields)


def label_runs(headers: Mapping[str, Any], model_of) -> RunLabels:
    """Row labels for the selected logs (location -> header); ``model_of`` names a header's model."""
    by_model: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    described = {location: describe(header) for location, header in headers.items()}
    for location, header in headers.items():
        spec = header.eval
        by_model[model_of(header)][setting_name(spec.metadata, spec.task)].append(location)
    labels = RunLabels()
    for model, settings in by_model.items():
        fields: set[str] = set()
        shared = {setting: logs for setting, logs in settings.items() if len(logs) > 1}
        for logs in shared.values():
            differ = {
                name for name in described[logs[0]] if len({described[log].get(name) for log in logs}) > 1
            }
            # the task metadata mostly restates the task arguments: named only when nothing else differs
            fields |= {name for name in differ if not name.startswith("metadata.")} or differ
        ordered = sorted(fields, key=lambda name: (name.startswith(("metadata.", "role.")), name))
        without_seed = [name for name in ordered if name != "seed"]
        for width in (LABEL_VALUE_CHARS, None):  # full values where the shortened ones coincide
            for logs in settings.values():
                for location in logs:
                    row = _label(described[location], ordered, width)
                    rest = _label(described[location], without_seed, width)
                    labels.row[location] = f"{model} [{row}]" if row else model
                    labels.replicates[location] = f"{model} [{rest}]" if rest else model
            if all(len({labels.row[log] for log in logs}) == len(logs) for logs in shared.values()):
                break
        for setting, logs in shared.items():
            rows = [labels.row[location] for location in logs]
            if len(set(rows)) < len(rows):
                raise IndistinctRunsError(
                    f"{len(logs)} runs of {model} / {setting} that no header field tells apart, which "
                    f"must not be averaged together; report them separately: {', '.join(sorted(logs))}"
                )
            labels.notes.append(
                f"{model}: {len(logs)} runs of {setting} differ in {', '.join(ordered)}; each is its own row "
                f"({'; '.join(sorted(rows))}), never averaged, and the Overall row counts each row once."
            )
    return labels


logger = logging.getLogger(__name__)


@cache
def _warn_own_clusters(alone: int, total: int) -> None:
    """Once per count: the report asks for a frame's narratives table by table."""
    logger.warning(
        f"{alone} of {total} samples name no source narrative (no '{NARRATIVE}', dataset and ref_id, "
        "or benchmark sample id): each is its own cluster, so the error bars from them may be too small"
    )


def sample_narratives(frame: Any) -> Any:
    """Each row's source narrative (``data.narrative``), from the sample's metadata columns and id
    (a frame without ids: each row its own, with a warning)."""
    import pandas as pd

    fields = {"metadata_" + f: f for f in (NARRATIVE, "dataset", "ref_id") if "metadata_" + f in frame}
    ids = frame.get("id", frame.index)
    # A frame of no columns gives no records in some pandas releases (the 3.10 matrix's): one empty row each.
    rows = frame[list(fields)].to_dict("records") if fields else [{}] * len(frame)
    keys = [
        narrative_of({f: row[c] for c, f in fields.items()}, sample_id) for sample_id, row in zip(ids, rows)
    ]
    alone = sum(map(is_own_cluster, keys))
    if alone:
        _warn_own_clusters(alone, len(keys))
    return pd.Series(keys, index=frame.index, dtype=object)
