"""The one seam between this package and Inspect's internals (tested range in ``pyproject.toml``).

Everything here reaches past Inspect's public API, or builds a log object by hand: when an
Inspect release changes one of these, this module is the only place to mend, and the CI's run
on the newest release is where it shows. Inspect has no public equivalent of any of them (as of
0.3.285): the active generate config of a solver's call, the running sample's state (for a model
provider), the scorers the running sample will be scored with (none under ``--no-score``), the
``--model-role`` parser its own commands use, adding replayed samples to a finished log, showing a
package error the way Inspect's command line shows its own prerequisite errors (the
message alone), the base URL a provider's client resolved (the judge records where its grader was
reached), and a metric that logs under the name of the Inspect metric it hands its samples to
(``logged_as``). This module reads Inspect and changes none of it (tests/core/test_inspect_public_api.py);
where Inspect's own output falls short (metric names cut in its terminal table), the change is
proposed upstream (docs/upstream.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from inspect_ai._util.error import PrerequisiteError

from .errors import NarrativeInfillError, OptionError

Factory = TypeVar("Factory", bound=Callable[..., Any])


def active_generate_config() -> Any:
    """The ``GenerateConfig`` in force for the current sample (eval, task and CLI options merged)."""
    from inspect_ai.model._generate_config import active_generate_config as active

    return active()


def running_sample() -> Any:
    """The ``TaskState`` of the sample whose model call is running (None outside a sample): how the
    baseline provider reads the instance it answers."""
    from inspect_ai.solver._task_state import sample_state

    return sample_state()


def sample_scorers() -> list[Any]:
    """The scorers the running sample will be scored with: empty under ``--no-score`` (Inspect sets
    its scoring context only when it will score) and outside a sample."""
    from inspect_ai.scorer._score import _scorers

    return list(_scorers.get([]))


def parse_model_roles(values: list[str]) -> dict[str, Any]:
    """``--model-role`` values as ``inspect eval`` reads them: ``grader=openai/gpt-4.1-mini``, or
    YAML/JSON such as ``grader={model: openai/gpt-4.1-mini, batch: true}``."""
    from inspect_ai._cli.util import parse_model_role_cli_args

    if not values:
        return {}
    try:
        return dict(parse_model_role_cli_args(tuple(values)))
    except (TypeError, ValueError) as err:
        raise OptionError(f"--model-role {' '.join(values)}: {err}") from None


def replayed_sample(sample: Any, prompt: str, response: str, model: str, like: Any) -> Any:
    """An ``EvalSample`` of ``sample`` (an Inspect ``Sample``) whose conversation is the stored
    prompt and response, timed like ``like`` (the sample Inspect ran for the same log)."""
    import shortuuid
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput

    return EvalSample(
        id=sample.id,
        epoch=1,
        input=sample.input,
        target=sample.target,
        messages=[ChatMessageUser(content=prompt), ChatMessageAssistant(content=response, model=model)],
        output=ModelOutput.from_content(model=model, content=response),
        metadata=sample.metadata,
        scores={},
        store={},
        events=[],
        model_usage={},
        started_at=like.started_at,
        completed_at=like.completed_at,
        total_time=0.0,
        working_time=0.0,
        uuid=shortuuid.uuid(),
    )


def add_samples(log: Any, samples: list[Any]) -> None:
    """Append ``samples`` to a finished, unscored log, keeping its dataset and result counts true."""
    log.samples = [*log.samples, *samples]
    log.eval.dataset.samples = len(log.samples)
    log.eval.dataset.sample_ids = [sample.id for sample in log.samples]
    log.results.total_samples = log.results.completed_samples = len(log.samples)


class ShownByInspect(NarrativeInfillError, PrerequisiteError):
    """A package error raised while Inspect builds a task or scorer (a bad ``-T``/``-S`` value, a
    broken data file). Inspect's command line prints a ``PrerequisiteError`` as its message alone
    and anything else under a page of traceback, so the factories raise this type; the error
    itself, with its own type, is the ``__cause__``."""

    def __init__(self, error: NarrativeInfillError) -> None:
        from rich.markup import escape  # Inspect prints the message with rich

        super().__init__(escape(str(error)))


def shown_by_inspect(factory: Factory) -> Factory:
    """A task or scorer factory whose package errors Inspect shows as their message alone."""

    @functools.wraps(factory)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return factory(*args, **kwargs)
        except NarrativeInfillError as err:
            raise ShownByInspect(err) from err

    return checked  # type: ignore[return-value]


def client_base_url(model: Any) -> str | None:
    """The base URL of a provider's HTTP client (``AsyncOpenAI`` and the like), which resolves
    ``OPENAI_BASE_URL`` and its kin where ``model.api.base_url`` stays None; None when the provider
    has no such client (mockllm, in-process models)."""
    url = getattr(getattr(model.api, "client", None), "base_url", None)
    return str(url) if url else None


def logged_as(inner: Any, compute: Callable[[list[Any]], Any]) -> Any:
    """A metric computed by ``compute`` that the log names as ``inner`` (its name and parameters):
    for a metric that completes the samples' metadata and then calls ``inner`` on them, so that
    ``stderr`` stays ``stderr`` for the viewer and every tool that reads the log's metrics."""
    from inspect_ai._util.registry import (
        registry_info,
        registry_params,
        set_registry_info,
        set_registry_params,
    )

    set_registry_info(compute, registry_info(inner))
    set_registry_params(compute, registry_params(inner))
    return compute


#: The logger Inspect's local-server helper writes a self-started server's output to, the functions of
#: its reader threads (stdout at debug, stderr at info level: the rest of that logger's lines are
#: Inspect's own), and the start of the error it logs there when the server exits before it is ready.
LOCAL_SERVER_LOGGER = "inspect_ai._util.local_server"
SERVER_OUTPUT_READERS = frozenset({"log_output", "log_error"})
SERVER_EXITED = "Server process exited unexpectedly"
