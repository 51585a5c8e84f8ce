"""Tests that read ../shared skip, naming the folder, in a clone without it; under .ci/run's
NARRATIVE_INFILL_CI=1 they fail instead. Run on a copy of this folder's conftest and helpers
placed where no ../shared is beside it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import NO_SKIP_VARIABLE

PROBES = """
import pytest


@pytest.mark.shared
def test_marked():
    pass


def test_using_the_real_rows(benchmark_rows):
    pass


def test_core():
    pass
"""


@pytest.fixture
def bare_clone(tmp_path):
    tests = tmp_path / "clone" / "tests"
    tests.mkdir(parents=True)
    for name in ("conftest.py", "helpers.py"):
        shutil.copy(Path(__file__).with_name(name), tests / name)
    (tests / "test_probes.py").write_text(PROBES)
    assert not (tmp_path / "shared").exists()
    return tests


def run_probes(tests: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != NO_SKIP_VARIABLE} | env
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "--rootdir", str(tests.parent), str(tests)],
        capture_output=True, text=True, timeout=300, env=environment, cwd=tests.parent, check=False,
    )  # fmt: skip


def test_without_shared_they_skip_naming_the_folder(bare_clone):
    result = run_probes(bare_clone)
    assert result.returncode == 0, result.stdout
    assert "1 passed, 2 skipped" in result.stdout
    folder = bare_clone.parent.parent / "shared"
    assert result.stdout.count(f"needs the ../shared folder ({folder}") == 2, result.stdout


def test_in_ci_a_missing_shared_fails(bare_clone):
    result = run_probes(bare_clone, **{NO_SKIP_VARIABLE: "1"})
    assert result.returncode == 1
    assert "1 passed, 2 errors" in result.stdout and "this test may not skip" in result.stdout, result.stdout
