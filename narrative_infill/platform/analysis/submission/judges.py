"""Who judged a submission's samples, where, and whether a ranked track may count it.

The judge scorer records per sample, in flat fields a log summary keeps, each grader's model
(``judge_models``), the base URL it was reached at (``judge_endpoints``) and what the provider
said answered (``judge_served_by``: the response's model name and system fingerprint). The
submission records the distinct values; ``verify`` recomputes them from the logs. A ranked track
takes a grader only at its provider's official endpoint (``scorers.judge.endpoint``): the full
and 10pct tracks need a provider with one; the demo track also takes providers that have none
(a local server, mockllm), never a hosted provider's name served from elsewhere. The records are
the evidence: a header whose model roles name another grader or base URL is refused
(:func:`header_problems`), as the summaries are when they disagree with the records.
"""

from __future__ import annotations

from typing import Any

from ....scorers.judge.endpoint import official_endpoint_problem
from ....scorers.signature import JudgeSignature, unflat
from ..report.load import score_field

#: The flat judge fields a submission records, as the logs hold them.
RECORDED = ("judge_endpoints", "judge_served_by")


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
        where = unflat(endpoints)
        for name, model in JudgeSignature.parse(models).models.items():
            problem = official_endpoint_problem(model, where.get(name, "unrecorded"), track != "demo")
            if problem:
                problems.append(f"{setting}: judge {name}: {problem}")
    return problems


def header_problems(runs: list) -> list[str]:
    """Where a log's header (its ``model_roles``, what ``inspect view`` shows) names another grader
    model, or another base URL, than its sample records say judged: each field named."""
    problems = []
    for run in runs:
        roles = run.header.eval.model_roles or {}
        seen = {
            (score_field(s, "judge", "judge_models"), score_field(s, "judge", "judge_endpoints"))
            for s in run.samples
        }
        for models, endpoints in sorted(seen - {(None, None)}, key=str):
            where = unflat(endpoints or "")
            for name, model in JudgeSignature.parse(models).models.items():
                role = roles.get(name)
                if role is None or isinstance(role, list):
                    continue  # a judge not bound as a role, or a panel under one role
                recorded = {"model": model, "base_url": where.get(name)}
                claimed = {"model": role.model, "base_url": role.base_url and role.base_url.rstrip("/")}
                problems += [
                    f"{run.setting}: header model_roles.{name}.{field}: {claimed[field]!r}, the sample "
                    f"records name {recorded[field]!r}"
                    for field in ("model", "base_url")
                    if claimed[field] is not None and claimed[field] != recorded[field]
                ]
    return problems
