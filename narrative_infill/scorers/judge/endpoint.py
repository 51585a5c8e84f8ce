"""Where each grader was reached and what its provider said it was, so a judge claim can be checked.

A grader's name (``openai/gpt-4.1-mini``) says nothing about the server that answered: with
``OPENAI_BASE_URL`` any local server answers under that name. The judge records, per grader, the
base URL its requests went to (the explicit one, else the provider client's, which follows
``OPENAI_BASE_URL`` and the like, else "provider default" for providers with no network client)
and what each reply said it was: the response's model name and, where the provider gives one,
its system fingerprint. Ranked tracks check the endpoint against ``OFFICIAL_ENDPOINTS``.
"""

from __future__ import annotations

from typing import Any

from ...inspect_compat import client_base_url
from ..signature import flat

#: The official API base URL of each provider a ranked track's judge may use (as its client reports
#: it, no trailing slash). A grader of one of these providers reached elsewhere is not that provider.
OFFICIAL_ENDPOINTS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
PROVIDER_DEFAULT = "provider default"


def endpoint_of(model: Any) -> str:
    """The base URL an Inspect ``Model``'s requests go to, or ``PROVIDER_DEFAULT``."""
    url = getattr(model.api, "base_url", None) or client_base_url(model)
    return str(url).rstrip("/") if url else PROVIDER_DEFAULT


def official_endpoint_problem(model_name: str, endpoint: str, require_known: bool) -> str | None:
    """Why ``model_name`` reached at ``endpoint`` is not its provider's official service, or None.
    ``require_known``: a provider with no official endpoint here (a local server, mockllm) fails too."""
    provider = model_name.split("/", 1)[0]
    official = OFFICIAL_ENDPOINTS.get(provider)
    if official is None:
        if require_known:
            return f"{model_name}: provider {provider!r} has no official endpoint a ranked judge can use"
        return None
    if endpoint != official:
        return f"{model_name} was reached at {endpoint}, not the provider's official {official}"
    return None


def served_by(output: Any) -> dict[str, str | None]:
    """What the provider said answered: the reply's model name and its system fingerprint (read
    from the raw response Inspect recorded for this call, where the provider gives one)."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import transcript

    fingerprint: str | None = None
    events = transcript().events
    latest = next((e for e in reversed(events) if isinstance(e, ModelEvent)), None)  # this call's
    if latest is not None and latest.output.completion == output.completion and latest.call is not None:
        response = latest.call.response
        value = response.get("system_fingerprint") if isinstance(response, dict) else None
        fingerprint = value if isinstance(value, str) else None
    return {"response_model": output.model or None, "system_fingerprint": fingerprint}


def where_judged(verdicts: dict[str, dict]) -> dict[str, str]:
    """The flat fields a judge score records of its graders' verdicts: where each was reached
    (``judge_endpoints``) and what answered (``judge_served_by``). One home: the scorer writes them
    and ``verify`` rebuilds them from the per-grader entries of the same record."""
    served = {
        name: f"{v.get('response_model')} ({v.get('system_fingerprint')})" for name, v in verdicts.items()
    }
    return {
        "judge_endpoints": flat({name: str(v.get("endpoint")) for name, v in verdicts.items()}),
        "judge_served_by": flat(served),
    }
