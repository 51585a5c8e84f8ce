"""Tests that read ../shared skip, naming the folder, in a clone without it; under .ci/run's
NARRATIVE_INFILL_CI=1 they fail instead. Run on a copy of this folder's conftest and helpers
placed where no ../shared is beside it."""

import ast
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
        shutil.copy(Path(__file__).parents[1].joinpath(name), tests / name)
    (tests / "test_probes.py").write_text(PROBES)
    assert not (tmp_path / "shared").exists()
    return tests


def run_probes(tests: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != NO_SKIP_VARIABLE} | env
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "--rootdir", str(tests.parent), str(tests)],
        capture_output=True, text=True, timeout=300, env=environment, cwd=tests.parent, check=False,
    )  # fmt: skip


@pytest.mark.subprocess
def test_without_shared_they_skip_naming_the_folder(bare_clone):
    result = run_probes(bare_clone)
    assert result.returncode == 0, result.stdout
    assert "1 passed, 2 skipped" in result.stdout
    folder = bare_clone.parent.parent / "shared"
    assert result.stdout.count(f"needs the ../shared folder ({folder}") == 2, result.stdout


@pytest.mark.subprocess
def test_in_ci_a_missing_shared_fails(bare_clone):
    result = run_probes(bare_clone, **{NO_SKIP_VARIABLE: "1"})
    assert result.returncode == 1
    assert "1 passed, 2 errors" in result.stdout and "this test may not skip" in result.stdout, result.stdout


#: The helpers' names of ../shared paths; anything built from them reads ../shared too.
SHARED_NAMES = {"SHARED", "BENCHMARK_CSV", "APPENDIX_B", "REFERENCE_MD"}
#: Ways a test says it reads ../shared (the marker, the helper, or the fixture that calls it).
GUARDS = {"shared", "require_shared", "benchmark_rows"}


def _names(node: ast.AST) -> set[str]:
    found = {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}
    return found | {child.attr for child in ast.walk(node) if isinstance(child, ast.Attribute)}


def unguarded_shared_readers(source: str) -> list[str]:
    """Tests in ``source`` that reach a ../shared path (directly, or through a module constant,
    helper function or fixture built on one) without the ``shared`` marker or ``require_shared``."""
    module = ast.parse(source)
    if any(
        isinstance(node, ast.Assign) and "pytestmark" in _names(node) and "shared" in _names(node.value)
        for node in module.body
    ):
        return []
    tainted, definitions = set(SHARED_NAMES), {}
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            definitions[node.name] = node
    changed = True
    while changed:  # constants and helpers built on a tainted name are tainted, to a fixed point
        changed = False
        for node in module.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                new = {t.id for t in targets if isinstance(t, ast.Name)} - tainted
                if new and _names(node.value) & tainted:
                    tainted |= new
                    changed = True
        for name, node in definitions.items():
            if name.startswith("test_") or name in tainted:
                continue
            if _names(node) & tainted and "require_shared" not in _names(node):
                tainted.add(name)
                changed = True
    readers = []
    for name, node in definitions.items():
        if not name.startswith("test_"):
            continue
        arguments = {argument.arg for argument in node.args.args}
        guarded = GUARDS & (_names(node) | arguments | set().union(*map(_names, node.decorator_list)))
        if not guarded and (_names(node) | arguments) & tainted:
            readers.append(name)
    return readers


def test_the_check_finds_a_test_reading_shared_without_the_marker():
    source = """
import pytest
from helpers import SHARED, BENCHMARK_CSV, require_shared
PAPER = SHARED / "paper" / "paper.md"
def _text():
    return PAPER.read_text()
@pytest.fixture
def rows():
    return BENCHMARK_CSV.read_text()
def test_direct():
    SHARED.is_dir()
def test_through_a_helper():
    _text()
def test_through_a_fixture(rows):
    pass
@pytest.mark.shared
def test_marked():
    _text()
def test_guarded():
    require_shared()
    _text()
def test_real_rows(benchmark_rows):
    pass
def test_core():
    pass
"""
    assert unguarded_shared_readers(source) == [
        "test_direct",
        "test_through_a_helper",
        "test_through_a_fixture",
    ]


def test_every_test_that_reads_shared_says_so():
    """A test that reads ../shared without the marker passes in CI (../shared is there) and fails,
    instead of skipping, in a bare clone: found here, in CI, before anyone clones."""
    found = {
        path.name: readers
        for path in sorted(Path(__file__).parents[1].rglob("test_*.py"))
        if (readers := unguarded_shared_readers(path.read_text(encoding="utf-8")))
    }
    assert not found, f"tests that read ../shared without @pytest.mark.shared: {found}"
