"""Test helpers: paths of the read-only ../shared data, skips that CI turns into failures, and offline
mock models."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path
from typing import Callable

import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"  # data written for this project's tests
SHARED = REPO.parent / "shared"
BENCHMARK_CSV = SHARED / "data" / "benchmark" / "sample_10pct_head.csv"
APPENDIX_B = SHARED / "paper" / "appendix-b-prompts.md"
REFERENCE_MD = SHARED / "reference" / "REFERENCE.md"

#: Set to 1 by .ci/run: a test that would skip for want of ../shared, llama-cpp-python or objdump
#: fails instead, so nothing skips silently where everything is there.
NO_SKIP_VARIABLE = "NARRATIVE_INFILL_CI"


def require(condition: object, reason: str) -> None:
    """Skip the test with ``reason`` unless ``condition`` holds; under ``NARRATIVE_INFILL_CI=1``, fail."""
    if condition:
        return
    if os.environ.get(NO_SKIP_VARIABLE) == "1":
        pytest.fail(f"{reason} ({NO_SKIP_VARIABLE}=1: this test may not skip)", pytrace=False)
    pytest.skip(reason)


def require_shared() -> None:
    """For tests that read the project's real data, paper or reference (never copied into the repo)."""
    require(
        SHARED.is_dir(), f"needs the ../shared folder ({SHARED}: real data, paper, reference), absent here"
    )


#: A grader's verdict that parses (the paper's five dimensions), for every test that needs one.
VALID_VERDICT = (
    '{"Fluency": 4, "Context_Faithfulness": 3, "Bidirectional_Coherence": 4, '
    '"Narrative_Consistency": 5, "Informativeness": 3}'
)


def requirement_name(requirement: str) -> str:
    """The distribution a requirement line names, normalised (``bert_score==0.3`` -> ``bert-score``)."""
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower().replace("_", "-")


def pyproject_project() -> dict:
    """pyproject.toml's ``[project]`` table: the dependencies as written, not the installed metadata
    (which lags behind an editable install's checkout): tomllib, or on Python 3.10 tomli, which
    pytest itself requires there."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    with (REPO / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["project"]


def core_closure() -> set[str]:
    """The distributions pyproject's core dependencies bring, through the installed packages'
    metadata (sacrebleu brings tabulate, sentence-transformers scipy: those come with the core)."""
    todo, seen = list(pyproject_project()["dependencies"]), set()
    while todo:
        name = requirement_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        with contextlib.suppress(PackageNotFoundError):  # an optional one not installed here
            todo += [r for r in requires(name) or [] if "extra ==" not in r]
    return seen


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, for a stand-in server or ``serve`` to bind next."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def mock_output(text: str) -> ModelOutput:
    """A mock completion with usage filled in, so Inspect never asks tiktoken (a download) to count."""
    output = ModelOutput.from_content(model="mockllm", content=text)
    output.usage = ModelUsage(
        input_tokens=100, output_tokens=max(1, len(text.split())), total_tokens=100 + len(text.split())
    )
    return output


def mock_model(respond: Callable[[list[ChatMessage], GenerateConfig], str | ModelOutput], **model_args):
    """``mockllm/model`` answering with ``respond(messages, config)`` (text, or a whole output)."""

    def outputs(messages, tools, tool_choice, config):
        reply = respond(messages, config)
        return reply if isinstance(reply, ModelOutput) else mock_output(reply)

    return get_model("mockllm/model", custom_outputs=outputs, **model_args)


@contextmanager
def browser_page(url: str | None = None):
    """A page of the system Chromium, headless, as the page tests drive it (at ``url`` if given);
    the browser is closed afterwards, also when the test fails."""
    import shutil

    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=shutil.which("chromium") or "/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page()
            if url is not None:
                page.goto(url)
            yield page
        finally:
            browser.close()


@contextmanager
def umask(mask: int) -> Iterator[None]:
    """Run the block under ``mask`` as the process umask (outputs must take the user's)."""
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def scripted_grader(*replies, name="model"):
    """A mockllm grader answering with ``replies`` in turn (an Exception instance is raised)."""
    queue = list(replies)
    calls = []

    def outputs(messages, tools, tool_choice, config):
        calls.append(messages)
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(reply, Exception):
            raise reply
        return mock_output(reply)

    model = get_model(f"mockllm/{name}", custom_outputs=outputs, memoize=False)
    return model, calls


def write_jsonl(path: Path, records) -> str:
    """``records`` as a JSONL file at ``path``; its path as a string, as the readers take it."""
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return str(path)


def refused(call, *args) -> str:
    """The message of the package's error that ``call(*args)`` must raise."""
    from narrative_infill.errors import NarrativeInfillError

    with pytest.raises(NarrativeInfillError) as raised:
        call(*args)
    return str(raised.value)


#: what varied_answers_model answers, one picked per sample by its prompt
VARIED_ANSWERS = (
    "They went home.",
    "The kids spent the afternoon splashing at the lake.",
    "She found the keys under the mat.",
    "It rained all night, so the game was called off.",
    "He finally called his brother back.",
)


def varied_answers_model():
    """A scripted model whose answer differs between samples (so the stand-in's scores do too)."""

    def answer(messages, config):
        pick = hashlib.sha256(messages[-1].text.encode()).digest()[0] % len(VARIED_ANSWERS)
        return f"<ANSWER>{VARIED_ANSWERS[pick]}</ANSWER>"

    return mock_model(answer)
