"""The lowest ``openai`` pyproject allows loads Inspect's OpenAI-compatible providers (``openai``,
``openai-api``, ``vllm``, ``llama-cpp-python``): a fresh install that resolves to the floor must not
fail at the first ``inspect eval``.

Failed before: pyproject said ``openai>=1.0``, while Inspect has required 3.1.0 for these providers
since 0.3.259 (3.4.0 in 0.3.285, the newest release below the ceiling, so the floor is 3.4)."""

from __future__ import annotations

import pytest
from helpers import pyproject_project
from inspect_ai.model import get_model
from packaging.requirements import Requirement
from packaging.version import Version


def _floor(package: str) -> str:
    """The ``>=`` bound of ``package`` in pyproject's core dependencies (the lowest it installs), as
    a release triple (Inspect compares SemVer)."""
    [requirement] = [
        Requirement(line) for line in pyproject_project()["dependencies"] if Requirement(line).name == package
    ]
    [bound] = [s.version for s in requirement.specifier if s.operator == ">="]
    return ".".join(map(str, (*Version(bound).release, 0, 0)[:3]))


@pytest.mark.parametrize("provider", ["openai", "openai-api/local", "vllm", "llama-cpp-python"])
def test_inspect_loads_its_openai_providers_with_the_lowest_openai_allowed(monkeypatch, provider):
    import inspect_ai._util.version as inspect_version  # where Inspect reads the installed version

    floor = _floor("openai")
    real = inspect_version.version
    monkeypatch.setattr(inspect_version, "version", lambda name: floor if name == "openai" else real(name))
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.setenv("LOCAL_API_KEY", "unused")
    # Resolving the provider runs Inspect's version check; no request is sent.
    get_model(f"{provider}/some-model", base_url="http://127.0.0.1:9/v1", api_key="unused")
