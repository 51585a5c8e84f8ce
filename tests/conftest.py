"""Shared fixtures: real benchmark rows from ../shared (tests that read ../shared skip without it:
the ``shared`` marker or this fixture), and offline, per-test log directories. With
``NARRATIVE_INFILL_TEST_IDS=FILE`` every test that runs appends its id to FILE: CI checks that its
runs of the tiers together ran every collected test (``.ci/check-tiers``)."""

from __future__ import annotations

import csv
import os

import pytest
from helpers import BENCHMARK_CSV, require_shared


def pytest_configure(config):
    config.addinivalue_line("markers", "shared: reads ../shared; skips when it is absent (fails in CI)")


#: The tiers' markers (pyproject's ``markers``), in the order a test's first one names its tier.
TIERS = ("vllm", "lm_eval", "slurm", "local_server", "browser", "subprocess", "slow")
#: Seconds (setup, call, teardown) and tests per tier in this run: CI runs the slow tiers in one pytest
#: run (issue 59) and still prints each tier's time.
_TIER_TIMES: dict[str, list[float]] = {}


def pytest_runtest_logreport(report):
    record = os.environ.get("NARRATIVE_INFILL_TEST_IDS")
    if record and report.when == "setup":
        with open(record, "a", encoding="utf-8") as handle:
            handle.write(report.nodeid + "\n")
    tier = next((name for name in TIERS if name in report.keywords), "fast")
    seconds, tests = _TIER_TIMES.setdefault(tier, [0.0, 0])
    _TIER_TIMES[tier] = [seconds + report.duration, tests + (report.when == "setup")]


def pytest_terminal_summary(terminalreporter):
    for tier, (seconds, tests) in sorted(_TIER_TIMES.items()):
        terminalreporter.write_line(f"tier {tier}: {tests} tests, {seconds:.0f} s (setup, call, teardown)")


def pytest_runtest_setup(item):
    if item.get_closest_marker("shared"):
        require_shared()


@pytest.fixture(scope="session")
def benchmark_rows() -> list[dict[str, str]]:
    require_shared()
    with BENCHMARK_CSV.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory):
    """The same for session-scoped fixtures (logs built once for many tests), which run before any
    test's own fixtures: without it they read and wrote the user's Inspect model cache, where
    another run's mock grader replies to the same prompt came back (a test then passed or failed
    by what had run before on the machine). The fluency check's gains are the exception: they stay
    in the package's own disk cache (``analysis.fluency.GainCache``), shared by every session,
    worker and module, because its key is everything a gain depends on (the model file's SHA-256,
    llama-cpp-python's version, the measure's version and bounds): a gain served is the gain a
    reading would give, and each answer is read once per machine instead of once per worker and
    run (the board fixture stopped at 900 s reading them under load, issue 57)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_CACHE_DIR", str(tmp_path_factory.mktemp("model-cache")))
        # and their logs: without it a fixture's eval wrote into the checkout's ./logs
        patch.setenv("INSPECT_LOG_DIR", str(tmp_path_factory.mktemp("session-logs")))
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("HF_DATASETS_OFFLINE", "1")
        # verdicts are keyed by content, not by what a test patched: only the cache's own tests keep any
        patch.setenv("NARRATIVE_INFILL_VERDICT_CACHE", "off")
        yield


@pytest.fixture(scope="module", autouse=True)
def _module_cache(tmp_path_factory):
    """A model cache per test module for its module-scoped fixtures: two modules' fixtures that ask
    a mock grader named alike about the same story and answer (test_error_bars' varying grader and
    test_submission's constant one) would otherwise read each other's cached replies."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_CACHE_DIR", str(tmp_path_factory.mktemp("module-model-cache")))
        patch.setenv("INSPECT_LOG_DIR", str(tmp_path_factory.mktemp("module-logs")))
        yield


@pytest.fixture(autouse=True)
def _offline_logs(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "model-cache"))  # judge calls are cached
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
