"""Who judged a submission's samples, where, and whether a ranked track may count it.

The judge scorer records per sample, in flat fields a log summary keeps, each grader's model
(``judge_models``), the base URL it was reached at (``judge_endpoints``) and what the provider
said answered (``judge_served_by``: the response's model name and system fingerprint). The
submission records the distinct values; ``verify`` recomputes them from the logs. A ranked track
takes a grader only at its provider's official endpoint (``scorers.judge.endpoint``): the full
and 10pct tracks need a provider with one; the demo track also takes providers that have none
(a local server, mockllm), never a hosted provider's name served from elsewhere.
"""

from __future__ import annotations

from typing import Any

from ...scorers.judge.endpoint import official_endpoint_problem
from ..report.load import score_field

#: The flat judge fields a submission records, as the logs hold them.
RECORDED = ("judge_endpoints", "judge_served_by")


def _pairs(flat: str) -> dict[str, str]:
    """``name=value, name=value`` back to a mapping (a ``| extraction=...`` suffix dropped)."""
    entries = flat.split(" | ", 1)[0].split(", ")
    return dict(entry.partition("=")[::2] for entry in entries if entry)


def judge_provenance(runs: list) -> dict[str, Any]:
    """The distinct endpoints and provider answers the runs' newest judge scores record; empty when
    none does (logs judged before task version 3), so older submissions keep their provenance."""
    recorded = {
        field: sorted(
            {
                value
                for run in runs
                for s in run.samples
                if (value := score_field(s, "judge", field)) is not None
            }
        )
        for field in RECORDED
    }
    return recorded if any(recorded.values()) else {}


def endpoint_problems(track: str, runs: list) -> list[str]:
    """Why the runs' graders are not the ranked track's kind: a grader reached somewhere other than
    its provider's official endpoint, or a judged sample with no endpoint recorded."""
    seen: dict[tuple[str, str | None], str] = {}
    for run in runs:
        for sample in run.samples:
            models = score_field(sample, "judge", "judge_models")
            if models is not None:
                seen.setdefault((models, score_field(sample, "judge", "judge_endpoints")), run.setting)
    problems = []
    for (models, endpoints), setting in sorted(seen.items(), key=str):
        if endpoints is None:
            problems.append(
                f"{setting}: judge endpoint not recorded (judged before task version 3): re-judge"
            )
            continue
        where = _pairs(endpoints)
        for name, model in _pairs(models).items():
            problem = official_endpoint_problem(model, where.get(name, "unrecorded"), track != "demo")
            if problem:
                problems.append(f"{setting}: judge {name}: {problem}")
    return problems
