"""Every benchmark runs in CI's smoke step (.ci/benchmarks, issue 49), so a rename that breaks one
fails CI: each script with a main is run there by name, and a helper module without one is imported
by a script that is."""

from __future__ import annotations

import ast
import re

from helpers import REPO

BENCHMARKS = REPO / "benchmarks"
SMOKE_STEP = REPO / ".ci" / "benchmarks"


def _smoked() -> set[str]:
    """The scripts the smoke step runs (``smoke``, or ``smoke_shared`` in the shared process): one
    that fails, fails the step."""
    text = SMOKE_STEP.read_text(encoding="utf-8")
    return set(re.findall(r"^smoke(?:_shared)? (\S+\.py) ", text, re.MULTILINE))


def _has_main(path) -> bool:
    return '__name__ == "__main__"' in path.read_text(encoding="utf-8")


def _imports(path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_every_benchmark_script_is_run_by_the_smoke_step():
    scripts = {path.name for path in BENCHMARKS.glob("*.py") if _has_main(path)}
    smoked = _smoked()
    assert scripts - smoked == set(), "add these to .ci/benchmarks at a tiny size"
    assert smoked - scripts == set(), ".ci/benchmarks runs scripts that are not in benchmarks/"


def test_every_benchmark_helper_is_imported_by_a_smoked_script():
    helpers = {path.stem for path in BENCHMARKS.glob("*.py") if not _has_main(path)}
    imported = set().union(*(_imports(BENCHMARKS / name) for name in _smoked()))
    assert helpers - imported == set()


def test_ci_runs_the_smoke_step():
    assert re.search(
        r"^\s*bash \.ci/benchmarks\b", (REPO / ".ci" / "run").read_text(encoding="utf-8"), re.MULTILINE
    )
